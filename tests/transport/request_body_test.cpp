// caching.115: a request body in pieces. The pieces read back as their join from any offset in
// reads of any size, a copy shares the join, and HttpTransport sends the pieces to a loopback
// server as the bytes of the join with their Content-Length, again in full on a retried attempt.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hostile_server.hpp"
#include "nucleo/request_body.hpp"
#include "nucleo/transport.hpp"

namespace nucleo {
namespace {

using testing::HostileServer;

/// `count` pieces of seeded sizes (some empty) and bytes, each owned by its own string, and
/// their join.
struct Pieces {
    std::vector<RequestBody::Piece> pieces;
    std::string joined;
};

Pieces make_pieces(std::uint32_t seed, std::size_t count, std::size_t max_piece) {
    std::mt19937 rng(seed);
    Pieces out;
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t n = rng() % 7 == 0 ? 0 : rng() % (max_piece + 1);
        auto text = std::make_shared<std::string>();
        for (std::size_t k = 0; k < n; ++k) text->push_back(static_cast<char>('a' + rng() % 26));
        out.joined += *text;
        out.pieces.push_back({text, *text});
    }
    return out;
}

TEST(RequestBody, ReadsBackTheJoinOfItsPiecesFromAnyOffsetInReadsOfAnySize) {
    for (std::uint32_t seed = 1; seed <= 300; ++seed) {
        SCOPED_TRACE(seed);
        Pieces p = make_pieces(seed, 1 + seed % 40, 1 + seed % 200);
        const RequestBody body = RequestBody::from_pieces(p.pieces);
        ASSERT_EQ(body.size(), p.joined.size());
        std::mt19937 rng(seed * 7919U);
        const std::size_t start = p.joined.empty() ? 0 : rng() % p.joined.size();
        std::string read;
        std::vector<char> buffer(257);
        for (std::size_t at = start;;) {
            const std::size_t want = 1 + rng() % buffer.size();
            const std::size_t n = body.read(at, buffer.data(), want);
            ASSERT_LE(n, want);
            if (n == 0) break;
            read.append(buffer.data(), n);
            at += n;
        }
        EXPECT_EQ(read, p.joined.substr(start));
        EXPECT_FALSE(body.contiguous() && body.piece_count() > 1)
            << "nothing asked for the join yet";
        EXPECT_EQ(body.view(), p.joined);
        EXPECT_TRUE(body.contiguous());
        EXPECT_GE(body.readable(), body.size());
    }
}

TEST(RequestBody, CopiesShareThePiecesAndOneJoinMadeOnceAcrossThreads) {
    Pieces p = make_pieces(42, 64, 4096);
    const RequestBody body = RequestBody::from_pieces(p.pieces);
    const RequestBody copy =
        body;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the point
    ASSERT_GT(body.piece_count(), 1U);
    EXPECT_EQ(copy.piece(0).data(), body.piece(0).data()) << "a copy shares its pieces";
    std::vector<const char*> seen(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < seen.size(); ++t)
        threads.emplace_back([&, t] { seen[t] = (t % 2 == 0 ? body : copy).data(); });
    for (std::thread& t : threads) t.join();
    for (const char* d : seen) EXPECT_EQ(d, seen[0]) << "one join, shared by the copies";
    EXPECT_EQ(body, p.joined);
    EXPECT_TRUE(copy.contiguous());
}

TEST(RequestBody, AStringIsOnePieceKeptWhereItLies) {
    std::string text(1000, 'x');
    const char* storage = text.data();
    const RequestBody body(std::move(text));
    EXPECT_EQ(body.piece_count(), 1U);
    EXPECT_TRUE(body.contiguous());
    EXPECT_EQ(body.data(), storage) << "the string was moved in, not copied";
    const RequestBody copy =
        body;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the point
    EXPECT_EQ(copy.data(), storage) << "a copy shares the bytes";
    EXPECT_EQ(RequestBody().piece_count(), 0U);
    EXPECT_EQ(RequestBody(""), std::string_view());
}

const char* const kOk =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
    "Connection: close\r\n\r\n{}";
const char* const kBusy =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// What a loopback server read, per connection: the head's Content-Length and the body.
struct Seen {
    std::mutex mutex;
    std::vector<std::string> requests;
    std::size_t add(const std::string& r) {  ///< how many requests were read, this one included
        const std::lock_guard<std::mutex> lock(mutex);
        requests.push_back(r);
        return requests.size();
    }
};

std::string body_of(const std::string& request) {
    const std::size_t head = request.find("\r\n\r\n");
    return head == std::string::npos ? std::string() : request.substr(head + 4);
}

TransportOptions quick(int attempts) {
    TransportOptions o;
    o.retry.max_attempts = attempts;
    o.retry.initial_backoff = std::chrono::milliseconds(1);
    return o;
}

TEST(TransportBody, APieceBodyArrivesAsTheBytesOfItsJoinWithItsLength) {
    Seen seen;
    HostileServer server([&](HostileServer::Client& c) {
        seen.add(c.request);
        c.send(kOk);
    });
    // About 400 KB in 150 pieces: libcurl reads it in many calls, across piece boundaries.
    Pieces p = make_pieces(7, 150, 5000);
    HttpRequest request;
    request.url = server.url();
    request.headers.emplace_back("content-type", "application/json");
    request.body = RequestBody::from_pieces(p.pieces);
    HttpTransport transport(quick(1));
    const HttpResponse r = transport.send(request);
    EXPECT_EQ(r.status, 200);
    ASSERT_EQ(seen.requests.size(), 1U);
    const std::string& got = seen.requests[0];
    EXPECT_NE(got.find("Content-Length: " + std::to_string(p.joined.size()) + "\r\n"),
              std::string::npos);
    EXPECT_EQ(got.find("chunked"), std::string::npos);
    EXPECT_TRUE(body_of(got) == p.joined) << "the server read " << body_of(got).size() << " of "
                                          << p.joined.size() << " bytes, or other bytes";
    EXPECT_FALSE(request.body.contiguous()) << "sending never joined the pieces";
}

TEST(TransportBody, ARetriedAttemptSendsThePiecesAgainFromTheStart) {
    Seen seen;
    HostileServer server(
        [&](HostileServer::Client& c) { c.send(seen.add(c.request) == 1 ? kBusy : kOk); });
    Pieces p = make_pieces(11, 40, 3000);
    HttpRequest request;
    request.url = server.url();
    request.body = RequestBody::from_pieces(p.pieces);
    HttpTransport transport(quick(2));
    const HttpResponse r = transport.send(request);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.attempts, 2);
    ASSERT_EQ(seen.requests.size(), 2U);
    for (const std::string& got : seen.requests) EXPECT_TRUE(body_of(got) == p.joined);
}

}  // namespace
}  // namespace nucleo
