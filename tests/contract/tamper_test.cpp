// wire.150: a provider plugin that breaks its own request is refused by the core's audit before a
// byte leaves the process: the real nucleo-emulator on loopback counts zero requests, the error
// names the plugin and the rule, and the conversation is unchanged.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core_support.hpp"
#include "emulator_client.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo {
namespace {

using emulator_test::EmulatorProcess;

ModelSpec claude() { return contract_test::claude("tamper"); }

struct Mode {
    const char* mode;
    const char* rule;
};

class TamperTest : public ::testing::TestWithParam<Mode> {
  protected:
    void SetUp() override { emulator_ = std::make_unique<EmulatorProcess>(); }

    ProviderClient client(const std::string& mode) const {
        return contract_test::emulator_client(*emulator_, "tamper", TAMPER_PLUGIN_DIR,
                                              R"({"mode":")" + mode + R"("})");
    }

    static ConversationContext conversation() {
        ConversationContext c("c-tamper", "alice");
        c.put_main_objective("task", "You answer questions about orders, briefly and exactly.");
        c.set_output(OutputSize::kShort);
        c.set_depth(Depth::kImmediate);
        Message q = Message::outgoing_text("Where is order 42?");
        q.cache = true;
        c.add_message(q);
        return c;
    }

    long requests_seen() const { return contract_test::requests_seen(*emulator_); }

    std::unique_ptr<EmulatorProcess> emulator_;
};

TEST_F(TamperTest, AFaithfulRequestPassesTheAuditAndIsSent) {
    ConversationContext c = conversation();
    ProviderClient pc = client("faithful");
    const LLMResponse r = pc.call(c, claude());
    EXPECT_EQ(r.stop_reason, "end_turn");
    EXPECT_EQ(requests_seen(), 1);
    EXPECT_EQ(c.messages().size(), 2U);
}

TEST_P(TamperTest, TheBrokenRequestIsRefusedBeforeAnyByteIsSent) {
    const Mode& m = GetParam();
    ConversationContext c = conversation();
    ProviderClient pc = client(m.mode);
    try {
        pc.call(c, claude());
        FAIL() << m.mode << ": the tampered request was sent";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.kind(), ErrorKind::kPlugin) << what;
        EXPECT_NE(what.find("plugin 'tamper'"), std::string::npos) << what;
        EXPECT_NE(what.find("breaks " + std::string(m.rule) + " "), std::string::npos) << what;
        EXPECT_NE(what.find("nothing was sent"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        EXPECT_EQ(what.find("sk-test-secret"), std::string::npos) << what;
    }
    EXPECT_EQ(requests_seen(), 0) << m.mode;
    EXPECT_EQ(c.messages().size(), 1U);
}

INSTANTIATE_TEST_SUITE_P(Modes, TamperTest,
                         ::testing::Values(Mode{"fifth_cache_control", "wire.160"},
                                           Mode{"drop_system", "wire.161"},
                                           Mode{"system_into_turn", "wire.161"},
                                           Mode{"system_role_turn", "wire.106"},
                                           Mode{"max_tokens", "wire.163"},
                                           Mode{"header_crlf", "wire.151"},
                                           Mode{"authority_path", "wire.150"}),
                         [](const ::testing::TestParamInfo<Mode>& info) {
                             return std::string(info.param.mode);
                         });

// caching.113: through the per-turn encode cache (abi.108) the audit reads a kept chunk's records,
// not its bytes again; a plugin whose encode_split breaks a chunk (or the head) is refused all the
// same, on the call that encoded it and on the next, which reuses the kept chunk. The plugin's
// whole encode is faithful: had the split path not been taken, the request would have been sent.
class TamperSplitTest : public TamperTest {};

TEST_P(TamperSplitTest, ABrokenPartOfTheSplitEncodeIsRefusedOnEveryCall) {
    const std::string mode = GetParam().mode;
    ConversationContext c = conversation();
    c.add_message(Message::incoming_text("Order 42 left the depot this morning."));
    c.add_message(Message::outgoing_text("And order 43?"));
    ProviderClient pc = client(mode);
    for (int call = 0; call < 2; ++call) {
        try {
            pc.call(c, claude());
            FAIL() << mode << ": the tampered request was sent on call " << call;
        } catch (const Error& e) {
            const std::string what = e.what();
            EXPECT_EQ(e.kind(), ErrorKind::kPlugin) << what;
            EXPECT_NE(what.find("plugin 'tamper'"), std::string::npos) << what;
            EXPECT_NE(what.find("breaks " + std::string(GetParam().rule) + " "), std::string::npos) << what;
            EXPECT_NE(what.find("nothing was sent"), std::string::npos) << what;
        }
        EXPECT_EQ(requests_seen(), 0) << mode;
        EXPECT_EQ(c.messages().size(), 3U);
    }
    // The same conversation through the whole encode (the cache off) is faithful and is sent.
    pc.set_turn_fragment_cache(false);
    EXPECT_EQ(pc.call(c, claude()).stop_reason, "end_turn");
    EXPECT_EQ(requests_seen(), 1);
}

INSTANTIATE_TEST_SUITE_P(Parts, TamperSplitTest,
                         ::testing::Values(Mode{"chunk_system_role", "wire.106"},
                                           Mode{"head_system_role", "wire.106"}),
                         [](const ::testing::TestParamInfo<Mode>& info) {
                             return std::string(info.param.mode);
                         });

}  // namespace
}  // namespace nucleo
