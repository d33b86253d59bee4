// limits.134, the dialects' side: the scratch the in-tree provider plugins lease for the in-situ
// copy of a request and for their output (provider_common). A lease is empty when taken, a
// returned buffer keeps its capacity for the next lease, a buffer above the bound is freed
// instead, the pool holds at most kScratchPoolSize buffers, and two leases held at once (on two
// threads too) never share one.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include <rapidjson/stringbuffer.h>

#include "provider_common.hpp"

namespace nucleo::providers {
namespace {

/// Restores this thread's bound for T when the test ends.
template <class T>
struct KeepBound {
    explicit KeepBound(std::size_t bytes) { set_scratch_keep_bytes<T>(bytes); }
    ~KeepBound() { set_scratch_keep_bytes<T>(0); }
    KeepBound(const KeepBound&) = delete;
    KeepBound& operator=(const KeepBound&) = delete;
};

TEST(ProviderScratch, AReturnedBufferIsLeasedAgainEmptyWithItsCapacity) {
    const char* first = nullptr;
    {
        const Scratch<std::string> s;
        s->assign(100'000, 'a');
        first = s->data();
    }
    const ScratchKept kept = scratch_kept<std::string>();
    EXPECT_GE(kept.buffers, 1U);
    EXPECT_GE(kept.bytes, 100'000U);
    const Scratch<std::string> again;
    EXPECT_TRUE(again->empty());
    EXPECT_GE(again->capacity(), 100'000U);
    EXPECT_EQ(again->data(), first);  // the same allocation, not a fresh one
}

TEST(ProviderScratch, TwoLeasesAtOnceAreTwoBuffers) {
    const Scratch<rapidjson::StringBuffer> a;
    const Scratch<rapidjson::StringBuffer> b;
    a->Put('a');
    b->Put('b');
    EXPECT_EQ(std::string(a->GetString(), a->GetSize()), "a");
    EXPECT_EQ(std::string(b->GetString(), b->GetSize()), "b");
}

TEST(ProviderScratch, ABufferAboveTheBoundIsFreedNotKept) {
    constexpr std::size_t kBound = 64 * 1024;
    const KeepBound<rapidjson::StringBuffer> bound(kBound);
    { const Scratch<rapidjson::StringBuffer> small; small->Reserve(1000); }
    const std::size_t before = scratch_kept<rapidjson::StringBuffer>().bytes;
    {
        const Scratch<rapidjson::StringBuffer> big;
        big->Reserve(4 * kBound);
    }
    const ScratchKept after = scratch_kept<rapidjson::StringBuffer>();
    EXPECT_LE(after.bytes, before + kBound);
    EXPECT_LE(after.bytes, after.buffers * kBound);
    // The next lease still works, and is empty.
    const Scratch<rapidjson::StringBuffer> next;
    EXPECT_EQ(next->GetSize(), 0U);
}

TEST(ProviderScratch, ThePoolKeepsAtMostItsSize) {
    {
        std::vector<Scratch<std::string>> many;
        for (std::size_t i = 0; i < 3 * kScratchPoolSize; ++i) {
            many.emplace_back();
            many.back()->assign(1000, 'x');
        }
    }
    EXPECT_EQ(scratch_kept<std::string>().buffers, kScratchPoolSize);
}

TEST(ProviderScratch, ConcurrentLeasesOnTwoThreadsNeverShareABuffer) {
    const Scratch<std::string> mine;
    mine->assign(50'000, 'h');
    const char* here = mine->data();
    const char* there = nullptr;
    std::thread([&] {
        const Scratch<std::string> s;
        EXPECT_TRUE(s->empty());
        s->assign(50'000, 't');
        there = s->data();
        EXPECT_EQ(*s, std::string(50'000, 't'));
    }).join();
    EXPECT_NE(here, there);
    EXPECT_EQ(*mine, std::string(50'000, 'h'));
}

}  // namespace
}  // namespace nucleo::providers
