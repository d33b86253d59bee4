// conversation.109: the audit after encode blames the plugin ("the plugin's encode is at fault")
// only when the plugin's input was valid UTF-8; a request that breaks the rules because the
// conversation handed to the plugin held invalid text is the input's fault, named where it is.
#include <gtest/gtest.h>

#include <string>

#include "common/utf8.hpp"
#include "llm/request_audit.hpp"
#include "nucleo/errors.hpp"

namespace {

struct Refusal {
    nucleo::ErrorKind kind = nucleo::ErrorKind::kInternal;
    std::string what;
};

/// Audits an Anthropic request whose one user message holds `body_text` (bytes put in the body
/// as they are), planned from a prepared conversation whose one turn holds `prepared_text`.
Refusal audit(const std::string& body_text, const std::string& prepared_text) {
    nucleo::ProviderConfig config;
    config.name = "claude";
    config.plugin = "anthropic";
    nucleo::ProviderCapabilities caps;
    caps.wire_family = "anthropic-messages";
    nucleo::PreparedConversation prepared;
    prepared.cache_system = false;
    nucleo::PreparedTurn turn;
    turn.message_id = "m1";
    turn.blocks = {nucleo::TextBlock{"Hello"}, nucleo::TextBlock{prepared_text}};
    prepared.turns.push_back(turn);
    nucleo::HttpRequest http;
    http.url = "https://api.example/v1/messages";
    http.headers = {{"content-type", "application/json"}};
    http.body =
        std::string(R"({"model":"m","max_tokens":512,"messages":[{"role":"user","content":")") +
        body_text + R"("}]})";
    nucleo::internal::AuditedCall call;
    call.prepared = &prepared;
    call.max_tokens = 512;
    try {
        nucleo::internal::audit_encoded_request(config, caps, "/v1/messages", http, call);
    } catch (const nucleo::Error& e) {
        return {e.kind(), e.what()};
    }
    ADD_FAILURE() << "the audit accepted a body that is not UTF-8";
    return {};
}

TEST(Utf8Blame, InvalidInputIsTheInputsFaultNamedWhereItIs) {
    const Refusal r = audit("Hello ab\xff", "ab\xff");
    EXPECT_EQ(r.kind, nucleo::ErrorKind::kInvalidArgument) << r.what;
    EXPECT_NE(r.what.find("provider 'claude' (plugin 'anthropic'): the conversation handed to the "
                          "plugin is not valid UTF-8 at turns[0].blocks[1].text byte 2"),
              std::string::npos)
        << r.what;
    EXPECT_NE(r.what.find("not the plugin"), std::string::npos) << r.what;
    EXPECT_EQ(r.what.find("encode is at fault"), std::string::npos) << r.what;
    EXPECT_TRUE(nucleo::internal::is_valid_utf8(r.what)) << r.what;
}

TEST(Utf8Blame, AValidInputLeavesTheBlameWithThePlugin) {
    // The same broken body from a conversation that was valid: the plugin wrote the bad bytes.
    const Refusal r = audit("Hello ab\xff", "ab");
    EXPECT_EQ(r.kind, nucleo::ErrorKind::kPlugin) << r.what;
    EXPECT_NE(r.what.find("the plugin's encode is at fault, update or replace it"),
              std::string::npos)
        << r.what;
}

}  // namespace
