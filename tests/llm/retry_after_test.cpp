// limits.140, limits.141: a provider's Retry-After is honoured up to the cap (60 s by default)
// and a longer one fails the call at once naming the wait, through the real Anthropic plugin and
// the core transport against nucleo-emulator (its `retry-after=S` fault words the 429). Every wait
// goes through TransportOptions::wait, which records it instead of spending it: no test sleeps.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "emulator_client.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo {
namespace {

using emulator_test::EmulatorProcess;
using std::chrono::milliseconds;

/// The shipped catalog's Claude record, served by the emulator as by Anthropic.
ModelSpec claude() {
    return Config::load(std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml")
        .catalog()
        .find("claude-sonnet-5-5");
}

class RetryAfterTest : public ::testing::Test {
  protected:
    void SetUp() override {
        config_.name = "anthropic";
        config_.plugin = "anthropic";
        config_.base_url = "http://127.0.0.1:" + std::to_string(emulator_.port());
        config_.credentials.api_key = "sk-test";
    }

    /// A client whose waits are recorded, not spent.
    ProviderClient client(RetryPolicy retry = {}) {
        PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
        TransportOptions transport;
        transport.retry = retry;
        transport.wait = [this](milliseconds delay, const CancellationToken*) {
            waits_.push_back(delay);
            return false;
        };
        return {config_, loader.load(config_.plugin).make_provider(config_.options_json),
                transport};
    }

    static LLMResponse call(ProviderClient& pc, const std::string& fault, const std::string& id) {
        ConversationContext c("conv-retry-after", "alice");
        c.set_output(OutputSize::kShort);
        c.set_depth(Depth::kImmediate);
        c.add_message(Message::outgoing_text("Where is order 42?"));
        CallOptions options;
        options.extra_headers = {{"x-emulator-fault", fault}, {"x-emulator-request-id", id}};
        return pc.call(c, claude(), options);
    }

    EmulatorProcess emulator_;
    ProviderConfig config_;
    std::vector<milliseconds> waits_;
};

TEST_F(RetryAfterTest, AWaitUpToTheCapIsHonouredThenTheCallSucceeds) {
    ProviderClient pc = client();
    const auto began = std::chrono::steady_clock::now();
    const LLMResponse r = call(pc, "fail-first=1:429,retry-after=45", "honoured");
    EXPECT_EQ(r.stop_reason, "end_turn");
    ASSERT_EQ(waits_.size(), 1U);
    EXPECT_EQ(waits_[0], milliseconds(45000));  // the provider's wait, not the backoff's 500 ms
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(20));
}

TEST_F(RetryAfterTest, AWaitAtTheCapIsStillHonoured) {
    ProviderClient pc = client();
    (void)call(pc, "fail-first=1:429,retry-after=60", "at-cap");
    ASSERT_EQ(waits_.size(), 1U);
    EXPECT_EQ(waits_[0], milliseconds(60000));
}

TEST_F(RetryAfterTest, AWaitPastTheCapFailsAtOnceNamingTheWait) {
    ProviderClient pc = client();
    try {
        (void)call(pc, "429,retry-after=120", "past-cap");
        FAIL() << "a 429 asking for 120 s must fail the call";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.kind(), ErrorKind::kRateLimited) << what;
        EXPECT_NE(what.find("answered 429 and asked for a wait of 120 s before a retry "
                            "(Retry-After), past the 60 s a call waits at most"),
                  std::string::npos)
            << what;
    }
    EXPECT_TRUE(waits_.empty()) << "nothing was waited for";
}

TEST_F(RetryAfterTest, TheCapIsThePolicys) {
    RetryPolicy retry;
    retry.max_retry_after = milliseconds(500);
    ProviderClient pc = client(retry);
    try {
        (void)call(pc, "fail-first=1:429", "small-cap");  // the emulator's usual retry-after: 1
        FAIL() << "a 1 s wait past a 500 ms cap must fail the call";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("a wait of 1 s before a retry (Retry-After), past "
                                             "the 500 ms a call waits at most"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(waits_.empty());
}

TEST_F(RetryAfterTest, WithoutRetryAfterTheBackoffIsWaited) {
    ProviderClient pc = client();
    (void)call(pc, "fail-first=2:500", "backoff");
    EXPECT_EQ(waits_, (std::vector<milliseconds>{milliseconds(500), milliseconds(1000)}));
}

}  // namespace
}  // namespace nucleo
