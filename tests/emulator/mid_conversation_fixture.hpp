// The emulator of the mid-conversation tests (emulator_mid_conversation_test.cpp,
// emulator_tool_changes_test.cpp): started on a catalog of the tests' own, since the shipped
// config/models.yaml does not carry `mid_conversation:` (the core's loader refuses a key it does
// not read yet), with a model of each kind the record can describe.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <memory>
#include <string>
#include <vector>

#include "emulator_client.hpp"

namespace nucleo::emulator_test {

/// Takes system messages and tool changes, and caches from 64 tokens on.
inline const std::string kMid = "claude-emu-mid";
/// Takes system messages, not tool changes.
inline const std::string kSystemOnly = "claude-emu-mid-system";
/// A record without `mid_conversation:`: takes neither.
inline const std::string kNeither = "claude-emu-mid-none";
/// Takes both, and binds its thinking to the prefix.
inline const std::string kBound = "claude-emu-mid-bound";

inline const std::string kMidCatalog = R"(models:
  - id: emu-mid
    provider: anthropic
    wire_model: claude-emu-mid
    mid_conversation: [system_messages, tool_changes]
    caching: {min_tokens: 64}
  - id: emu-mid-system
    provider: anthropic
    wire_model: claude-emu-mid-system
    mid_conversation: [system_messages]
  - id: emu-mid-none
    provider: anthropic
    wire_model: claude-emu-mid-none
  - id: emu-mid-bound
    provider: anthropic
    wire_model: claude-emu-mid-bound
    mid_conversation: [system_messages, tool_changes]
    thinking: {forms: [adaptive], efforts: [low, medium, high], bound_to_prefix: true}
)";

inline const std::string kToolChangesBeta = "mid-conversation-tool-changes-2026-07-01";
inline const std::string kInlineToolsBeta = "inline-tools-2026-09-15";

/// The tail of both placement texts (the API's own).
inline const std::string kDirectiveNote =
    "; the directive-only form (content: [] with output_config) is accepted at any position";
inline const std::string kMustFollow =
    ": role 'system' must follow a 'user' message or an 'assistant' message ending in a server "
    "tool result" +
    kDirectiveNote;
inline const std::string kMustPrecede =
    ": role 'system' must precede an 'assistant' message or end the array" + kDirectiveNote;

inline std::string user(const std::string& text) {
    return R"({"role":"user","content":")" + text + "\"}";
}
inline std::string assistant(const std::string& text) {
    return R"({"role":"assistant","content":")" + text + "\"}";
}
inline std::string system_text(const std::string& text) {
    return R"({"role":"system","content":")" + text + "\"}";
}
/// A system message of `blocks` (a JSON list's items).
inline std::string system_blocks(const std::string& blocks) {
    return R"({"role":"system","content":[)" + blocks + "]}";
}
inline std::string list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (const auto& i : items) out += (out.size() > 1 ? "," : "") + i;
    return out + "]";
}
/// A tool_addition of a custom tool by value: `name` with one required string property `q`.
inline std::string add_by_value(const std::string& name) {
    return R"({"type":"tool_addition","tool":{"type":"tool_definition","definition":{"name":")" +
           name +
           R"(","input_schema":{"type":"object","properties":{"q":{"type":"string"}},)"
           R"("required":["q"]}}}})";
}
inline std::string add_by_reference(const std::string& name) {
    return R"({"type":"tool_addition","tool":{"type":"tool_reference","name":")" + name + "\"}}";
}
inline std::string remove_tool(const std::string& name) {
    return R"({"type":"tool_removal","tool":{"type":"tool_reference","name":")" + name + "\"}}";
}
/// A custom tool of `tools` with an empty object schema.
inline std::string tool(const std::string& name) {
    return R"({"name":")" + name + R"(","input_schema":{"type":"object"}})";
}

class MidConversationEmulator : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        catalog_ = std::make_unique<CatalogFile>(kMidCatalog);
        emu_ = std::make_unique<EmulatorProcess>(
            std::vector<std::string>{"--catalog", catalog_->path()});
    }
    static void TearDownTestSuite() {
        EXPECT_EQ(emu_->stop(), 0);
        emu_.reset();
        catalog_.reset();
    }
    void SetUp() override { ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200); }

    /// `POST /v1/messages` of `model` with `messages` (a JSON list) and `extra` members (each
    /// with its leading comma), naming `betas` in `anthropic-beta`.
    static HttpResult call(const std::string& model, const std::string& messages,
                           const std::string& extra = "",
                           const std::vector<std::string>& betas = {}) {
        return emu_->post(
            "/v1/messages",
            R"({"model":")" + model + R"(","max_tokens":512,"messages":)" + messages + extra + "}",
            headers(betas));
    }

    /// `POST /v1/messages/count_tokens` of the same request; -1 unless it is a 200.
    static long long count(const std::string& model, const std::string& messages,
                           const std::string& extra = "",
                           const std::vector<std::string>& betas = {}) {
        const HttpResult r = emu_->post(
            "/v1/messages/count_tokens",
            R"({"model":")" + model + R"(","messages":)" + messages + extra + "}", headers(betas));
        if (r.status != 200) {
            ADD_FAILURE() << r.body;
            return -1;
        }
        return parse(r.body)["input_tokens"].GetInt64();
    }

    /// The 400's error message of `r` ("" and a failure when it is not a 400).
    static std::string refusal(const HttpResult& r) {
        EXPECT_EQ(r.status, 400) << r.body;
        if (r.status != 400) return "";
        const auto d = parse(r.body);
        EXPECT_STREQ(d["error"]["type"].GetString(), "invalid_request_error");
        return d["error"]["message"].GetString();
    }

    /// Whether `r` is an answer (a 200 with content); a failure when it is not, which the caller
    /// ASSERTs on before it reads the answer's members.
    static bool answered(const HttpResult& r) {
        EXPECT_EQ(r.status, 200) << r.body;
        return r.status == 200 && parse(r.body).HasMember("content");
    }

    static std::vector<std::string> headers(const std::vector<std::string>& betas) {
        std::string list;
        for (const auto& b : betas) list += (list.empty() ? "" : ",") + b;
        return list.empty() ? anthropic_headers() : anthropic_headers({"anthropic-beta: " + list});
    }

    static inline std::unique_ptr<CatalogFile> catalog_;
    static inline std::unique_ptr<EmulatorProcess> emu_;
};

}  // namespace nucleo::emulator_test
