// nucleo-emulator: a loopback server speaking the Anthropic Messages, OpenAI Chat Completions and
// Bedrock Converse wire formats, for tests and the offline demo
// (see docs/emulator.md).
//
// usage: nucleo-emulator [--host 127.0.0.1] [--port N|0] [--port-file FILE] [--cache-ttl SECONDS]
//                        [--min-cacheable TOKENS] [--latency-ms MS] [--stream-stall-ms MS]
//                        [--catalog FILE|none] [--exit-with-parent] [--diagnostics-capacity N]
//                        [--thread-ttl SECONDS] [--thread-capacity N] [--verbose]
// Exit status: 0 after SIGTERM/SIGINT, 1 when the port cannot be bound (one already listened on
// included: the port is never shared, wire.212), 2 on bad arguments
// (including a host that is not loopback: the emulator never listens on a network, and a
// catalog that cannot be read).
#include <arpa/inet.h>
#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "emulator.hpp"

namespace {

using nucleo::emulator::Options;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

const char* const kUsage =
    "usage: nucleo-emulator [--host 127.0.0.1] [--port N|0] [--port-file FILE]\n"
    "                       [--cache-ttl SECONDS] [--min-cacheable TOKENS] [--latency-ms MS]\n"
    "                       [--stream-stall-ms MS] [--catalog FILE|none] [--exit-with-parent]\n"
    "                       [--diagnostics-capacity N] [--thread-ttl SECONDS]\n"
    "                       [--thread-capacity N] [--verbose]\n"
    "Serves POST /v1/messages, /v1/messages/count_tokens, /v1/chat/completions,\n"
    "/model/{modelId}/converse, /model/{modelId}/converse-stream; GET /health, /stats;\n"
    "POST /reset, /clock. Faults: header x-emulator-fault or query ?fault=\n"
    "(see docs/emulator.md).\n"
    "Canned answers: header x-emulator-reply (the body, base64), optional x-emulator-reply-type\n"
    "and x-emulator-reply-first=N.\n"
    "Per-model rules come from the model catalog: --catalog FILE, or by default the source\n"
    "tree's config/models.yaml, else the installed <datadir>/nucleo/models.yaml; --catalog none\n"
    "turns them off.\n";

bool parse_int(const std::string& text, int& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && end == text.data() + text.size() && out >= 0;
}

/// Loopback only: 127.0.0.0/8, ::1 or "localhost".
bool is_loopback(const std::string& host) {
    if (host == "localhost" || host == "::1") return true;
    in_addr v4{};
    if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
    return false;
}

/// Parses argv into `o`; returns an error message, or "" when fine.
std::string parse_args(const std::vector<std::string>& args, Options& o, bool& help) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "-h" || a == "--help") {
            help = true;
            return "";
        }
        if (a == "--verbose") {
            o.verbose = true;
            continue;
        }
        if (a == "--exit-with-parent") {
            o.exit_with_parent = true;
            continue;
        }
        if (i + 1 >= args.size()) return "option " + a + " needs a value (or is unknown)";
        const std::string& v = args[++i];
        int* number = nullptr;
        if (a == "--host") {
            o.host = v;
        } else if (a == "--port-file") {
            o.port_file = v;
        } else if (a == "--catalog") {
            if (v.empty()) return "option --catalog needs a file or none";
            o.catalog = v;
        } else if (a == "--port") {
            number = &o.port;
        } else if (a == "--cache-ttl") {
            number = &o.cache_ttl_seconds;
        } else if (a == "--min-cacheable") {
            number = &o.min_cacheable_tokens;
        } else if (a == "--latency-ms") {
            number = &o.latency_ms;
        } else if (a == "--stream-stall-ms") {
            number = &o.stream_stall_ms;
        } else if (a == "--diagnostics-capacity") {
            number = &o.diagnostics_capacity;
        } else if (a == "--thread-ttl") {
            number = &o.thread_ttl_seconds;
        } else if (a == "--thread-capacity") {
            number = &o.thread_capacity;
        } else {
            return "unknown option " + a;
        }
        if (number != nullptr && !parse_int(v, *number)) {
            return "option " + a + " needs a non-negative integer, got '" + v + "'";
        }
    }
    if (o.port > 65535) return "--port must be at most 65535";
    if (!is_loopback(o.host)) {
        return "--host " + o.host +
               " is not a loopback address; the emulator listens on loopback only";
    }
    return "";
}

/// Writes the port atomically (temp file, then rename) so a poller never reads half a number.
bool write_port_file(const std::string& path, int port) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        if (!out) return false;
        out << port << "\n";
        if (!out.flush()) return false;
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    return !ec;
}

nucleo::emulator::Request to_request(const httplib::Request& h) {
    nucleo::emulator::Request r;
    r.method = h.method;
    r.path = h.path;
    r.body = h.body;
    for (const auto& [name, value] : h.headers) {
        std::string lower = name;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        r.headers.emplace(std::move(lower), value);
    }
    for (const auto& [name, value] : h.params) r.query.emplace(name, value);
    return r;
}

void write_response(nucleo::emulator::Response r, httplib::Response& out, int stall_ms) {
    out.status = r.status;
    for (const auto& [name, value] : r.headers) out.set_header(name, value);
    if (!r.streamed) {
        out.set_content(r.body, r.content_type);
        return;
    }
    // Each chunk (one SSE event, one event-stream message) is written and flushed on its own.
    // --stream-stall-ms: one pause halfway, after the first half of the chunks went out.
    struct Cursor {
        std::vector<std::string> chunks;
        std::size_t next = 0;
    };
    auto cursor = std::make_shared<Cursor>(Cursor{std::move(r.chunks), 0});
    out.set_chunked_content_provider(
        r.content_type, [cursor, stall_ms](std::size_t, httplib::DataSink& sink) {
            if (stall_ms > 0 && cursor->next > 0 && cursor->next == cursor->chunks.size() / 2) {
                std::this_thread::sleep_for(std::chrono::milliseconds(stall_ms));
            }
            if (cursor->next < cursor->chunks.size()) {
                const std::string& c = cursor->chunks[cursor->next++];
                return sink.write(c.data(), c.size());
            }
            sink.done();
            return true;
        });
}

/// channel.106: answers go out uncompressed, or gzip when the client offers it, never brotli (a
/// benchmark over loopback should time the client, not a brotli encoder). cpp-httplib picks the
/// encoding from the request's Accept-Encoding after the handler returns, and picks brotli
/// whenever that header mentions "br": the codings naming it are taken out of the header.
void withhold_brotli(httplib::Request& req) {
    for (auto it = req.headers.begin(); it != req.headers.end();) {
        std::string name = it->first;
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (name != "accept-encoding") {
            ++it;
            continue;
        }
        std::string kept;
        std::size_t start = 0;
        const std::string& offer = it->second;
        while (start <= offer.size()) {
            std::size_t comma = offer.find(',', start);
            if (comma == std::string::npos) comma = offer.size();
            std::string coding = offer.substr(start, comma - start);
            coding.erase(0, coding.find_first_not_of(' '));
            if (!coding.empty() && coding.find("br") == std::string::npos)
                kept += (kept.empty() ? "" : ", ") + coding;
            start = comma + 1;
        }
        if (kept.empty()) {
            it = req.headers.erase(it);
        } else {
            it->second = kept;
            ++it;
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    // Read first, so the window in which a dying parent goes unnoticed is as short as it can be.
    const pid_t parent = getppid();
    Options options;
    bool help = false;
    const std::string problem =
        parse_args(std::vector<std::string>(argv + 1, argv + argc), options, help);
    if (help) {
        std::cout << kUsage;
        return kExitOk;
    }
    if (!problem.empty()) {
        std::cerr << "nucleo-emulator: " << problem << "\n" << kUsage;
        return kExitBadInput;
    }

    // SIGINT/SIGTERM are blocked in every thread (the server's pool inherits the mask) and
    // received by the main thread with sigwait, which then stops the server cleanly.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);  // a client that hangs up mid-stream must not kill the server

    // --exit-with-parent: a harness (`nucleo demo`, a test) that dies without stopping us must
    // not leave a server behind. Linux sends the (blocked, so sigwait'ed) SIGTERM when the thread
    // that started us ends; a parent that died between our start and prctl is caught by getppid.
    if (options.exit_with_parent) {
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) {
            std::cerr << "nucleo-emulator: --exit-with-parent: prctl failed\n";
            return kExitFailure;
        }
        if (getppid() != parent) {
            std::cerr << "nucleo-emulator: --exit-with-parent: the parent is already gone\n";
            return kExitFailure;
        }
    }

    // wire.186: the model catalog, read once; a file that cannot be read is a bad argument.
    nucleo::emulator::ModelCatalog catalog;
    if (const std::string path = nucleo::emulator::catalog_path(options.catalog); !path.empty()) {
        try {
            catalog = nucleo::emulator::ModelCatalog::load(path);
        } catch (const std::exception& e) {
            std::cerr << "nucleo-emulator: " << e.what() << " (--catalog none runs without one)\n";
            return kExitBadInput;
        }
    }
    if (options.verbose) {
        if (catalog.source().empty()) {
            std::cerr << "nucleo-emulator: no model catalog: no per-model rules\n";
        } else {
            std::cerr << "nucleo-emulator: model catalog " << catalog.source() << " ("
                      << catalog.size() << " models)\n";
        }
    }

    nucleo::emulator::Router router(options, std::move(catalog));
    httplib::Server server;
    const int stall_ms = options.stream_stall_ms;
    const auto handler = [&router, stall_ms](const httplib::Request& req, httplib::Response& res) {
        // The server owns a mutable Request; the handler's view of it is const by signature only.
        withhold_brotli(const_cast<httplib::Request&>(req));
        write_response(router.handle(to_request(req)), res, stall_ms);
    };
    // Streamed deltas are small writes: without TCP_NODELAY, Nagle's algorithm would hold them
    // back and a client would see the first token late. Clients that reuse connections (the
    // core's transport) should not be cut off every 5 requests, httplib's default.
    server.set_tcp_nodelay(true);
    server.set_keep_alive_max_count(1000);
    server.Get(".*", handler);
    server.Post(".*", handler);
    if (options.verbose) {
        server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
            std::fprintf(stderr, "nucleo-emulator: %s %s -> %d\n", req.method.c_str(),
                         req.path.c_str(), res.status);
        });
    }

    // wire.212: a port already listened on is an error, never shared. cpp-httplib's default
    // socket options set SO_REUSEPORT, with which a second emulator would bind the same port and
    // the kernel would split the requests between two processes and their two caches; only
    // SO_REUSEADDR is kept (a port left in TIME_WAIT by a stopped emulator can be bound again).
    server.set_socket_options([](socket_t sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    int port = options.port;
    errno = 0;
    if (port == 0) {
        port = server.bind_to_any_port(options.host);
    } else if (!server.bind_to_port(options.host, port)) {
        port = -1;
    }
    if (port <= 0) {
        const int why = errno;
        std::cerr << "nucleo-emulator: cannot listen on " << options.host << ":" << options.port;
        if (why == EADDRINUSE) {
            std::cerr << ": the port is in use (another nucleo-emulator?); choose another --port, "
                         "or --port 0 for a free one";
        } else if (why != 0) {
            std::cerr << ": " << std::strerror(why);
        }
        std::cerr << "\n";
        return kExitFailure;
    }
    const std::string shown_host = options.host == "::1" ? "[::1]" : options.host;
    std::cout << "listening on http://" << shown_host << ":" << port << std::endl;
    if (!options.port_file.empty() && !write_port_file(options.port_file, port)) {
        std::cerr << "nucleo-emulator: cannot write the port file " << options.port_file << "\n";
        return kExitFailure;
    }

    std::atomic<bool> served{false};
    std::thread serving([&server, &served] {
        server.listen_after_bind();
        served = true;
    });
    int received = 0;
    sigwait(&stop_signals, &received);
    // cpp-httplib's stop() does nothing until the listening loop has marked itself running: a
    // signal that arrives right after start (a client that made no request) would otherwise leave
    // the loop running for ever. Wait for the loop (or its end) first; it takes microseconds.
    while (!server.is_running() && !served)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server.stop();
    serving.join();
    if (!options.port_file.empty()) {
        std::error_code ignored;
        std::filesystem::remove(options.port_file, ignored);
    }
    return kExitOk;
}
