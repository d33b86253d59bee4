// wire.173 through the core's audit after encode: a request whose body the per-turn encode cache
// joined from kept chunks is audited over the chunks' records, with the whole audit's verdict and
// the same one-line refusal naming the provider, the plugin and the rule.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nucleo/wire/contract.hpp"
#include "llm/request_audit.hpp"
#include "nucleo/errors.hpp"

namespace {

using nucleo::contract::MessageChunk;
using nucleo::contract::SplitBody;
using nucleo::contract::WireFamily;

struct Audited {
    bool refused = false;
    std::string what;
};

Audited audit(const std::vector<std::string>& chunk_bytes, const std::string& first) {
    nucleo::ProviderConfig config;
    config.name = "claude";
    config.plugin = "anthropic";
    nucleo::ProviderCapabilities caps;
    caps.wire_family = "anthropic-messages";
    std::vector<MessageChunk> chunks;
    for (const std::string& c : chunk_bytes) chunks.emplace_back(WireFamily::kAnthropicMessages, c);
    SplitBody split{R"({"model":"m","max_tokens":512,"messages":[)", first, "]}", {}};
    for (const MessageChunk& c : chunks) split.chunks.push_back(&c);
    nucleo::HttpRequest http;
    http.url = "https://api.example/v1/messages";
    http.headers = {{"content-type", "application/json"}};
    http.body = split.join();
    nucleo::internal::AuditedCall call;
    call.max_tokens = 512;
    call.split = &split;
    Audited out;
    try {
        nucleo::internal::audit_encoded_request(config, caps, "/v1/messages", http, call);
    } catch (const nucleo::Error& e) {
        out.refused = true;
        out.what = e.what();
        // The same request audited whole gives the same refusal.
        call.split = nullptr;
        try {
            nucleo::internal::audit_encoded_request(config, caps, "/v1/messages", http, call);
            ADD_FAILURE() << "the whole audit accepted what the split audit refused: " << out.what;
        } catch (const nucleo::Error& whole) {
            EXPECT_EQ(std::string(whole.what()), out.what);
        }
    }
    return out;
}

TEST(SplitAuditThroughCore, KeptChunksThatKeepTheRulesPass) {
    const auto r = audit({R"({"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t1","name":"x","input":{}}]})",
                          R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]})"},
                         R"({"role":"user","content":"hi"})");
    EXPECT_FALSE(r.refused) << r.what;
}

TEST(SplitAuditThroughCore, AChunkThatBreaksPairingAcrossChunksIsRefusedNamingTheRule) {
    const auto r = audit({R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"x","input":{}}]})",
                          R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]})"},
                         R"({"role":"user","content":"hi"})");
    ASSERT_TRUE(r.refused);
    EXPECT_NE(r.what.find("provider 'claude' (plugin 'anthropic'"), std::string::npos) << r.what;
    EXPECT_NE(r.what.find("wire.112 at messages.1"), std::string::npos) << r.what;
}

}  // namespace
