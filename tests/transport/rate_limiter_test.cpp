// The per-model rate limiter (limits.3; budget.6: the reservation is the
// conversation's input tokens plus the output reserve). Time is passed in explicitly, so no
// test waits on the clock.
#include <gtest/gtest.h>

#include "nucleo/errors.hpp"
#include "nucleo/rate_limiter.hpp"

namespace nucleo {
namespace {

using std::chrono::milliseconds;
using Clock = RateLimiter::Clock;

TEST(RateLimiter, UnlimitedAdmitsEverything) {
    const auto t0 = Clock::time_point{};
    RateLimiter limiter({}, t0);
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.try_acquire(1'000'000, t0));
}

TEST(RateLimiter, RequestsPerMinuteRefillContinuously) {
    const auto t0 = Clock::time_point{};
    RateLimiter limiter({.requests_per_minute = 60, .tokens_per_minute = 0}, t0);
    for (int i = 0; i < 60; ++i) ASSERT_TRUE(limiter.try_acquire(0, t0)) << i;
    EXPECT_FALSE(limiter.try_acquire(0, t0));
    EXPECT_EQ(limiter.wait_needed(0, t0), milliseconds(1000));  // one request per second
    EXPECT_TRUE(limiter.try_acquire(0, t0 + milliseconds(1000)));
    EXPECT_FALSE(limiter.try_acquire(0, t0 + milliseconds(1000)));
}

TEST(RateLimiter, TheReservationCountsInputPlusOutputReserve) {
    // A 30k-token conversation with a 20k output reserve reserves 50k: a second such call does
    // not fit a 90k-per-minute bucket until 10k tokens have refilled (10k / 90k of a minute).
    const auto t0 = Clock::time_point{};
    RateLimiter limiter({.requests_per_minute = 0, .tokens_per_minute = 90'000}, t0);
    const std::int64_t reservation = 30'000 + 20'000;
    ASSERT_TRUE(limiter.try_acquire(reservation, t0));
    EXPECT_FALSE(limiter.try_acquire(reservation, t0));
    EXPECT_EQ(limiter.wait_needed(reservation, t0), milliseconds(6667));
    EXPECT_TRUE(limiter.try_acquire(reservation, t0 + milliseconds(6667)));
}

TEST(RateLimiter, SettlingGivesBackTheUnusedPart) {
    const auto t0 = Clock::time_point{};
    RateLimiter limiter({.requests_per_minute = 0, .tokens_per_minute = 100'000}, t0);
    ASSERT_TRUE(limiter.try_acquire(80'000, t0));
    EXPECT_FALSE(limiter.try_acquire(50'000, t0));
    limiter.settle(80'000, 31'000);  // the provider reported 31k used
    EXPECT_TRUE(limiter.try_acquire(50'000, t0));
}

TEST(RateLimiter, AReservationLargerThanAMinuteIsRefusedNamingTheLimit) {
    RateLimiter limiter({.requests_per_minute = 0, .tokens_per_minute = 1000});
    try {
        (void)limiter.wait_needed(5000, Clock::now());
        FAIL() << "expected a refusal";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
        EXPECT_NE(std::string(e.what()).find("1000 tokens per minute"), std::string::npos) << e.what();
    }
}

TEST(RateLimiterRegistry, OneLimiterPerModel) {
    RateLimiterRegistry registry;
    RateLimiter& a = registry.for_model("claude-sonnet-4-5", {.requests_per_minute = 5});
    RateLimiter& b = registry.for_model("claude-sonnet-4-5", {.requests_per_minute = 99});
    RateLimiter& c = registry.for_model("gpt-4.1", {.requests_per_minute = 7});
    EXPECT_EQ(&a, &b);
    EXPECT_NE(&a, &c);
    EXPECT_EQ(b.limits().requests_per_minute, 5);
}

}  // namespace
}  // namespace nucleo
