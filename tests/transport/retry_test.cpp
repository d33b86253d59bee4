// Retry policy of the core transport (limits.1: retries with backoff that honour Retry-After on
// 429, 5xx and overloaded).
#include <gtest/gtest.h>

#include <chrono>

#include "nucleo/errors.hpp"
#include "nucleo/transport.hpp"

namespace nucleo {
namespace {

using std::chrono::milliseconds;

TEST(RetryAfter, ParsesDeltaSeconds) {
    EXPECT_EQ(parse_retry_after("2"), milliseconds(2000));
    EXPECT_EQ(parse_retry_after(" 0.25 "), milliseconds(250));
    EXPECT_EQ(parse_retry_after("0"), milliseconds(0));
}

TEST(RetryAfter, RefusesGarbage) {
    EXPECT_FALSE(parse_retry_after(""));
    EXPECT_FALSE(parse_retry_after("soon"));
    EXPECT_FALSE(parse_retry_after("2x"));
    EXPECT_FALSE(parse_retry_after("-1"));
}

TEST(RetryAfter, ParsesAnHttpDateInThePastAsZero) {
    EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), milliseconds(0));
}

TEST(RetryDelay, BacksOffExponentiallyUpToTheCap) {
    RetryPolicy p;
    p.initial_backoff = milliseconds(100);
    p.multiplier = 2.0;
    p.max_backoff = milliseconds(350);
    EXPECT_EQ(retry_delay(p, 1, std::nullopt), milliseconds(100));
    EXPECT_EQ(retry_delay(p, 2, std::nullopt), milliseconds(200));
    EXPECT_EQ(retry_delay(p, 3, std::nullopt), milliseconds(350));
    EXPECT_EQ(retry_delay(p, 9, std::nullopt), milliseconds(350));
}

TEST(RetryDelay, RetryAfterWinsOverBackoff) {
    RetryPolicy p;
    p.initial_backoff = milliseconds(100);
    EXPECT_EQ(retry_delay(p, 1, milliseconds(1500)), milliseconds(1500));
    p.max_retry_after = milliseconds(1000);
    EXPECT_EQ(retry_delay(p, 1, milliseconds(1500)), milliseconds(1000));
}

TEST(RetryableStatus, OnlyRateLimitsServerErrorsAndOverload) {
    for (long s : {429L, 500L, 502L, 503L, 504L, 529L}) EXPECT_TRUE(is_retryable_status(s)) << s;
    for (long s : {200L, 400L, 401L, 403L, 404L, 413L, 422L}) EXPECT_FALSE(is_retryable_status(s)) << s;
}

TEST(Cancellation, AWaitEndsAtOnceWhenAlreadyCancelled) {
    CancellationToken token;
    token.cancel();
    EXPECT_TRUE(token.cancelled());
    EXPECT_TRUE(token.wait_for(milliseconds(60000)));  // returns at once: the flag is set
}

TEST(Transport, ACancelledCallIsRefusedBeforeAnyRequest) {
    HttpTransport transport;
    CancellationToken token;
    token.cancel();
    HttpRequest req;
    req.url = "http://127.0.0.1:9/never";
    try {
        transport.send(req, &token);
        FAIL() << "a cancelled call must throw";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kTransport);
        EXPECT_NE(std::string(e.what()).find("cancelled"), std::string::npos) << e.what();
    }
}

TEST(Transport, ARefusedConnectionFailsWithTheUrlAfterItsRetries) {
    TransportOptions options;
    options.retry.max_attempts = 2;
    options.retry.initial_backoff = milliseconds(1);
    HttpTransport transport(options);
    HttpRequest req;
    req.url = "http://127.0.0.1:9/v1/messages?key=secret";  // port 9 (discard): nothing listens
    try {
        transport.send(req);
        FAIL() << "expected a transport error";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.kind(), ErrorKind::kTransport);
        EXPECT_NE(what.find("http://127.0.0.1:9/v1/messages"), std::string::npos) << what;
        EXPECT_EQ(what.find("secret"), std::string::npos) << "the query may carry a key: " << what;
        EXPECT_NE(what.find("after 2 attempts"), std::string::npos) << what;
    }
}

}  // namespace
}  // namespace nucleo
