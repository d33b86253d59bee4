// wire.150-wire.163: the audit after encode over hand-written outgoing requests, one that keeps
// each check and one that breaks it.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "nucleo/wire/contract.hpp"

namespace {

using nucleo::contract::audit_request;
using nucleo::contract::CallPlan;
using nucleo::contract::OutgoingRequest;
using nucleo::contract::WireFamily;

using Headers = std::vector<std::pair<std::string, std::string>>;

const std::string kAnthropicBody =
    R"({"model":"m","max_tokens":1000,"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],)"
    R"("messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]})";

CallPlan plan(std::size_t breakpoints = 2, std::int64_t max_tokens = 1000) {
    CallPlan p;
    p.breakpoints = breakpoints;
    p.system_texts = {"You are terse."};
    p.max_tokens = max_tokens;
    return p;
}

std::optional<nucleo::contract::Violation> audit(WireFamily family, const std::string& body,
                                                 const CallPlan& p, std::string_view path = "/v1/messages",
                                                 const Headers& headers = {{"content-type", "application/json"}}) {
    OutgoingRequest r;
    r.method = "POST";
    r.path = path;
    r.headers = &headers;
    r.body = body;
    return audit_request(family, r, p);
}

std::string rule_of(const std::optional<nucleo::contract::Violation>& v) {
    return v ? v->rule : std::string("none");
}

TEST(Audit, AFaithfulAnthropicRequestPasses) {
    const auto v = audit(WireFamily::kAnthropicMessages, kAnthropicBody, plan());
    EXPECT_FALSE(v.has_value()) << v->line();
}

TEST(Audit, PathThatNamesAnotherHostOrClimbsIsRefused) {
    for (const char* path : {"@127.0.0.1:9/v1/messages", "//evil.example/v1", "http://x/v1",
                             "/v1/@evil", "/v1/../admin", "/v1/%2E%2E/admin", "v1/messages",
                             "/v1/messages\r\nX: y"}) {
        const auto v = audit(WireFamily::kAnthropicMessages, kAnthropicBody, plan(), path);
        EXPECT_EQ(rule_of(v), "wire.150") << path;
    }
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, kAnthropicBody, plan(),
                            "/v1/messages?beta=true")),
              "none");
}

TEST(Audit, HeaderWithCarriageReturnLineFeedOrNulIsRefused) {
    for (const Headers& h : {Headers{{"x-a", "v\r\nx-injected: 1"}}, Headers{{"x-a", "v\n"}},
                             Headers{{"x-a", std::string("v\0w", 3)}}, Headers{{"x\r\n-a", "v"}},
                             Headers{{"", "v"}}}) {
        EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, kAnthropicBody, plan(), "/v1/messages", h)),
                  "wire.151");
    }
}

TEST(Audit, BodyMustBeAJsonObjectUnderTheCap) {
    EXPECT_EQ(rule_of(audit(WireFamily::kUnknown, "{\"a\":", plan())), "wire.152");
    EXPECT_EQ(rule_of(audit(WireFamily::kUnknown, "[]", plan())), "wire.152");
    EXPECT_EQ(rule_of(audit(WireFamily::kUnknown, "{}", plan())), "none");
    // wire.175: a raw NUL byte is never JSON, though RapidJSON takes it for the end of the text.
    EXPECT_EQ(rule_of(audit(WireFamily::kUnknown, std::string("{}\0{\"a\":", 7), plan())),
              "wire.152");
    EXPECT_EQ(
        rule_of(audit(WireFamily::kAnthropicMessages, std::string(kAnthropicBody) + '\0', plan())),
        "wire.152");
    CallPlan small = plan();
    small.max_body_bytes = 10;
    EXPECT_EQ(rule_of(audit(WireFamily::kUnknown, kAnthropicBody, small)), "wire.153");
}

TEST(Audit, UnknownFamilyGetsTheGenericChecksOnly) {
    // A fifth mark and no system: nothing a generic check sees.
    EXPECT_EQ(rule_of(audit(WireFamily::kUnknown, R"({"messages":[{"role":"system"}]})", plan(9, 1))),
              "none");
    EXPECT_EQ(rule_of(audit(WireFamily::kUnknown, "{}", plan(), "@h/v1")), "wire.150");
}

TEST(Audit, BreakpointsInTheBodyEqualThePlan) {
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, kAnthropicBody, plan(1))), "wire.160");
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, kAnthropicBody, plan(3))), "wire.160");
    const std::string bedrock =
        R"({"inferenceConfig":{"maxTokens":1000},"system":[{"text":"You are terse."},{"cachePoint":{"type":"default"}}],)"
        R"("messages":[{"role":"user","content":[{"text":"hi"}]}]})";
    EXPECT_EQ(rule_of(audit(WireFamily::kBedrockConverse, bedrock, plan(1), "/model/m/converse")), "none");
    EXPECT_EQ(rule_of(audit(WireFamily::kBedrockConverse, bedrock, plan(2), "/model/m/converse")), "wire.160");
}

TEST(Audit, SystemTextOnlyWhereTheFamilyPutsIt) {
    const std::string dropped =
        R"({"max_tokens":1000,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]})";
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, dropped, plan(0))), "wire.161");
    const std::string moved =
        R"({"max_tokens":1000,"messages":[{"role":"user","content":[{"type":"text","text":"You are terse.\n\nhi"}]}]})";
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, moved, plan(0))), "wire.161");
    const std::string twice =
        R"({"max_tokens":1000,"system":[{"type":"text","text":"You are terse."}],"messages":[{"role":"user","content":[{"type":"text","text":"You are terse."}]}]})";
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, twice, plan(0))), "wire.161");
    const std::string unasked =
        R"({"max_tokens":1000,"system":[{"type":"text","text":"extra"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]})";
    CallPlan none = plan(0);
    none.system_texts.clear();
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, unasked, none)), "wire.161");
    const std::string openai =
        R"({"max_completion_tokens":1000,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"hi"}]})";
    EXPECT_EQ(rule_of(audit(WireFamily::kOpenAIChat, openai, plan(0), "/v1/chat/completions")), "none");
    const std::string openai_moved =
        R"({"max_completion_tokens":1000,"messages":[{"role":"user","content":"You are terse.\n\nhi"}]})";
    EXPECT_EQ(rule_of(audit(WireFamily::kOpenAIChat, openai_moved, plan(0), "/v1/chat/completions")),
              "wire.161");
}

// wire.106 with wire.210: a system message of blocks after a turn is read as part of it (the
// tool additions the core writes); one that opens the list or holds a string is refused.
TEST(Audit, RolesComeFromTheFamilysRuleBook) {
    const std::string folded =
        R"({"max_tokens":1000,"system":[{"type":"text","text":"You are terse."}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"system","content":[{"type":"text","text":"x"}]}]})";
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, folded, plan(0))), "none");
    const std::string opening =
        R"({"max_tokens":1000,"system":[{"type":"text","text":"You are terse."}],"messages":[{"role":"system","content":[{"type":"text","text":"x"}]},{"role":"user","content":[{"type":"text","text":"hi"}]}]})";
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, opening, plan(0))), "wire.106");
    const std::string text =
        R"({"max_tokens":1000,"system":[{"type":"text","text":"You are terse."}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"system","content":"x"}]})";
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, text, plan(0))), "wire.106");
}

TEST(Audit, MaxTokensEqualsTheReservedBudget) {
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, kAnthropicBody, plan(2, 999))), "wire.163");
    const std::string openai =
        R"({"max_tokens":1000,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"hi"}]})";
    EXPECT_EQ(rule_of(audit(WireFamily::kOpenAIChat, openai, plan(0), "/v1/chat/completions")), "none");
    EXPECT_EQ(rule_of(audit(WireFamily::kOpenAIChat, openai, plan(0, 5), "/v1/chat/completions")), "wire.163");
}

}  // namespace

namespace {

// wire.164: a body over the reader's keep size frees its buffers after the audit; the verdicts
// on it and on the bodies after it are unchanged.
TEST(Audit, ABodyOverTheReadersKeepSizeIsAuditedAndSoAreTheOnesAfterIt) {
    std::string big = kAnthropicBody;
    const std::string marker = R"("text":"hi")";
    big.replace(big.find(marker), marker.size(), R"("text":")" + std::string(9U * 1024U * 1024U, 'x') + "\"");
    EXPECT_FALSE(audit(WireFamily::kAnthropicMessages, big, plan()).has_value());
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, big, plan(1))), "wire.160");
    EXPECT_FALSE(audit(WireFamily::kAnthropicMessages, kAnthropicBody, plan()).has_value());
    EXPECT_EQ(rule_of(audit(WireFamily::kAnthropicMessages, kAnthropicBody, plan(2, 999))), "wire.163");
}

}  // namespace
