// Transport limits against a hostile loopback server (limits.101-105): a stall, a drip, an
// endless or oversized body and a server that never accepts each end the call with an error that
// names the limit, its value and the host. The limits are small, so each test ends quickly; the
// ctest TIMEOUT of this program is the bound if a limit ever stopped working.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "hostile_server.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/transport.hpp"

namespace nucleo {
namespace {

using std::chrono::milliseconds;
using testing::HostileServer;

TransportOptions small_limits() {
    TransportOptions o;
    o.limits.connect_timeout = milliseconds(60000);
    o.limits.idle_timeout = milliseconds(60000);
    o.limits.deadline = milliseconds(60000);
    o.limits.max_response_bytes = 64 * 1024;
    o.retry.max_attempts = 1;
    o.retry.initial_backoff = milliseconds(1);
    return o;
}

/// The transport error a call ends with (the test fails when the call returns).
std::string failure(HttpTransport& transport, const std::string& url, const BodyChunkCallback& on_chunk = {}) {
    HttpRequest req;
    req.url = url;
    req.body = "{}";
    try {
        transport.send(req, nullptr, on_chunk);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kTransport) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "the call to " << url << " returned instead of failing";
    return {};
}

const char* const kHead200 = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";

TEST(TransportLimits, AStalledPlainAnswerEndsAtTheIdleTimeoutNamingTheHost) {
    HostileServer server([](HostileServer::Client& c) {
        c.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"partial\":");
        testing::hold(c);
    });
    TransportOptions o = small_limits();
    o.limits.idle_timeout = milliseconds(300);
    HttpTransport transport(o);
    const std::string what = failure(transport, server.url());
    EXPECT_NE(what.find("no byte for 300 ms from 127.0.0.1:" + std::to_string(server.port())), std::string::npos)
        << what;
    EXPECT_NE(what.find("idle_timeout"), std::string::npos) << what;
}

TEST(TransportLimits, AServerSilentBeforeItsHeadersEndsAtTheIdleTimeoutAndIsRetried) {
    HostileServer server([](HostileServer::Client& c) { testing::hold(c); });
    TransportOptions o = small_limits();
    o.limits.idle_timeout = milliseconds(200);
    o.retry.max_attempts = 2;
    HttpTransport transport(o);
    const std::string what = failure(transport, server.url());
    EXPECT_NE(what.find("no byte for 200 ms"), std::string::npos) << what;
    EXPECT_NE(what.find("after 2 attempts"), std::string::npos) << what;
    EXPECT_EQ(server.connections(), 2);
}

TEST(TransportLimits, AStalledStreamEndsAtTheIdleTimeoutAfterItsFirstEvents) {
    HostileServer server([](HostileServer::Client& c) {
        c.send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
               "event: message_start\ndata: {}\n\n");
        testing::hold(c);
    });
    TransportOptions o = small_limits();
    o.limits.idle_timeout = milliseconds(250);
    o.retry.max_attempts = 3;
    HttpTransport transport(o);
    std::string streamed;
    const std::string what = failure(transport, server.url(), [&](std::string_view chunk) { streamed += chunk; });
    EXPECT_NE(what.find("no byte for 250 ms from 127.0.0.1"), std::string::npos) << what;
    EXPECT_EQ(streamed, "event: message_start\ndata: {}\n\n");
    // Events were already delivered: the call is not repeated (its deltas would show twice).
    EXPECT_EQ(server.connections(), 1);
}

TEST(TransportLimits, ADrippingServerIsCutAtTheCallDeadline) {
    // One byte every 20 ms never trips the idle timeout; the deadline ends the call.
    HostileServer server([](HostileServer::Client& c) {
        if (!c.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) return;
        while (!c.stopping() && c.send("1\r\nx\r\n")) std::this_thread::sleep_for(milliseconds(20));
    });
    TransportOptions o = small_limits();
    o.limits.idle_timeout = milliseconds(5000);
    o.limits.deadline = milliseconds(700);
    HttpTransport transport(o);
    const std::string what = failure(transport, server.url());
    EXPECT_NE(what.find("passed its deadline of 700 ms"), std::string::npos) << what;
}

TEST(TransportLimits, RetriesNeverMultiplyAStallPastTheDeadline) {
    // Four attempts allowed, each would stall for a minute: the deadline ends the first one, and
    // no second attempt starts.
    HostileServer server([](HostileServer::Client& c) { testing::hold(c); });
    TransportOptions o = small_limits();
    o.limits.deadline = milliseconds(400);
    o.retry.max_attempts = 4;
    HttpTransport transport(o);
    const std::string what = failure(transport, server.url());
    EXPECT_NE(what.find("passed its deadline of 400 ms (1 attempt)"), std::string::npos) << what;
    EXPECT_EQ(server.connections(), 1);
}

TEST(TransportLimits, ABackoffThatWouldPassTheDeadlineIsNotWaited) {
    HostileServer server([](HostileServer::Client& c) {
        c.send("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
    });
    TransportOptions o = small_limits();
    o.limits.deadline = milliseconds(2000);
    o.retry.max_attempts = 4;
    o.retry.initial_backoff = milliseconds(60000);
    o.retry.max_backoff = milliseconds(60000);
    HttpTransport transport(o);
    HttpRequest req;
    req.url = server.url();
    const HttpResponse r = transport.send(req);
    EXPECT_EQ(r.status, 503);  // the provider's answer stands; its decoder maps it
    EXPECT_EQ(server.connections(), 1);
}

TEST(TransportLimits, AnEndlessBodyIsCutAtTheMaximumResponseSize) {
    HostileServer server([](HostileServer::Client& c) {
        if (!c.send("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")) return;
        const std::string block(16 * 1024, 'x');
        while (!c.stopping() && c.send(block)) {
        }
    });
    HttpTransport transport(small_limits());
    const std::string what = failure(transport, server.url());
    EXPECT_NE(what.find("exceeds the maximum response size of 65536 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("from 127.0.0.1"), std::string::npos) << what;
    // The client stopped reading at the cap: what the server got out is the cap plus the socket
    // buffers, not an endless stream.
    EXPECT_LT(server.bytes_sent(), std::uint64_t{64} << 20);
}

TEST(TransportLimits, AnAnnouncedOversizedBodyIsRefusedBeforeItsFirstByte) {
    HostileServer server([](HostileServer::Client& c) {
        if (!c.send("HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n")) return;
        const std::string block(16 * 1024, 'x');
        while (!c.stopping() && c.send(block)) {
        }
    });
    TransportOptions o = small_limits();
    o.retry.max_attempts = 3;
    HttpTransport transport(o);
    const std::string what = failure(transport, server.url());
    EXPECT_NE(what.find("maximum response size of 65536 bytes"), std::string::npos) << what;
    EXPECT_EQ(server.connections(), 1) << "a size refusal is not retried: the same answer would come back";
}

TEST(TransportLimits, AStreamedBodyIsCutAtTheMaximumResponseSizeToo) {
    HostileServer server([](HostileServer::Client& c) {
        if (!c.send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")) return;
        const std::string event = "event: ping\ndata: {}\n\n";
        while (!c.stopping() && c.send(event)) {
        }
    });
    HttpTransport transport(small_limits());
    std::size_t streamed = 0;
    const std::string what =
        failure(transport, server.url(), [&](std::string_view chunk) { streamed += chunk.size(); });
    EXPECT_NE(what.find("maximum response size of 65536 bytes"), std::string::npos) << what;
    EXPECT_LE(streamed, 65536U);
}

TEST(TransportLimits, AServerThatNeverAcceptsEndsAtTheConnectTimeout) {
    // A listener with a full accept queue: the kernel drops further SYNs, so connect() hangs.
    HostileServer server(nullptr, 0);
    std::vector<int> fillers;
    for (int i = 0; i < 4; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(server.port());
        (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        fillers.push_back(fd);
    }
    TransportOptions o = small_limits();
    o.limits.connect_timeout = milliseconds(300);
    HttpTransport transport(o);
    const std::string what = failure(transport, server.url());
    for (int fd : fillers) ::close(fd);
    EXPECT_NE(what.find("could not connect to 127.0.0.1:" + std::to_string(server.port()) + " within 300 ms"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("connect_timeout"), std::string::npos) << what;
}

TEST(TransportLimits, APlainAnswerWithinTheLimitsIsReturnedWhole) {
    HostileServer server([](HostileServer::Client& c) {
        c.send(std::string(kHead200) + R"({"ok":true})");
    });
    HttpTransport transport(small_limits());
    HttpRequest req;
    req.url = server.url();
    const HttpResponse r = transport.send(req);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, R"({"ok":true})");
}

TEST(UrlRedaction, TheUserinfoOfAUrlIsNeverShown) {
    EXPECT_EQ(redact_url("https://user:pw@api.example.com/v1"), "https://user:***@api.example.com/v1");
    EXPECT_EQ(redact_url("https://sk-token@api.example.com/v1"), "https://***@api.example.com/v1");
    EXPECT_EQ(redact_url("https://api.example.com/v1?x=a@b"), "https://api.example.com/v1?x=a@b");
    EXPECT_EQ(redact_url("https://api.example.com/v1"), "https://api.example.com/v1");
}

TEST(UrlRedaction, ATransportErrorAndItsRetryWarningsShowNoPassword) {
    std::vector<std::string> logged;
    log::set_sink([&](log::Level level, std::string_view, std::string_view message) {
        if (level >= log::Level::kWarn) logged.emplace_back(message);
    });
    TransportOptions o = small_limits();
    o.retry.max_attempts = 2;
    HttpTransport transport(o);
    // Port 9 (discard): nothing listens.
    const std::string what = failure(transport, "http://user:hunter2-canary@127.0.0.1:9/v1/messages");
    log::set_sink({});
    EXPECT_NE(what.find("http://user:***@127.0.0.1:9/v1/messages"), std::string::npos) << what;
    EXPECT_EQ(what.find("hunter2-canary"), std::string::npos) << what;
    ASSERT_EQ(logged.size(), 1U);  // the one retry warning
    EXPECT_EQ(logged[0].find("hunter2-canary"), std::string::npos) << logged[0];
    EXPECT_NE(logged[0].find("user:***@"), std::string::npos) << logged[0];
}

TEST(TransportLimits, AProviderSetsItsLimitsInTheConfig) {
    const Config config = Config::parse(R"(
providers:
  slow:
    plugin: anthropic
    base_url: http://127.0.0.1:1
    transport:
      connect_timeout_ms: 1500
      idle_timeout_ms: 30000
      deadline_ms: 90000
      max_response_bytes: 1048576
  plain:
    plugin: anthropic
)",
                                        "nucleo.yaml");
    const TransportLimits& t = config.provider("slow").transport;
    EXPECT_EQ(t.connect_timeout, milliseconds(1500));
    EXPECT_EQ(t.idle_timeout, milliseconds(30000));
    EXPECT_EQ(t.deadline, milliseconds(90000));
    EXPECT_EQ(t.max_response_bytes, 1048576U);
    const TransportLimits defaults;
    EXPECT_EQ(config.provider("plain").transport.idle_timeout, defaults.idle_timeout);
    EXPECT_EQ(config.provider("plain").transport.max_response_bytes, defaults.max_response_bytes);
}

TEST(TransportLimits, AZeroOrUnknownLimitIsRefusedWithItsPlace) {
    try {
        (void)Config::parse("providers:\n  p:\n    plugin: anthropic\n    transport:\n      idle_timeout_ms: 0\n",
                            "nucleo.yaml");
        FAIL() << "a zero idle timeout must be refused";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("nucleo.yaml:5:"), std::string::npos) << what;
        EXPECT_NE(what.find("providers.p.transport.idle_timeout_ms"), std::string::npos) << what;
    }
    try {
        (void)Config::parse("providers:\n  p:\n    plugin: anthropic\n    transport:\n      idle: 5\n",
                            "nucleo.yaml");
        FAIL() << "an unknown transport key must be refused";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("unknown key"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace nucleo
