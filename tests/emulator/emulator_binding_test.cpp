// nucleo-emulator's thinking bound to its conversation (wire.193-wire.198, docs/emulator.md
// "Thinking bound to its conversation"): over HTTP, a thinking block answered by a model whose
// record says `thinking.bound_to_prefix` is taken back after the same prefix and appended turns,
// refused after an earlier message, the system or the tools changed, not broken by a moved cache
// mark, dropped with the drop_block control; a made-up signature and a model without the binding
// take a changed prefix. Bedrock Converse the same with reasoningContent, adaptive thinking on
// Converse, and a model that always thinks when it is not asked to.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <memory>
#include <string>
#include <vector>

#include "emulator_client.hpp"

namespace nucleo::emulator_test {
namespace {

const std::string kBound = "messages.1.content.0: The block is bound to a different conversation";
const std::string kBetaHeader = "anthropic-beta: thinking-binding-controls-2026-08-01";
const std::string kDropBlock =
    R"({"type":"adaptive","block_binding":{"prefix_mismatch_behavior":"drop_block"}})";

long long tokens(std::size_t bytes) {
    return static_cast<long long>((bytes + 3) / 4);
}

class Binding : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        emu_ = std::make_unique<EmulatorProcess>(
            std::vector<std::string>{"--catalog", shipped_catalog()});
    }
    static void TearDownTestSuite() {
        EXPECT_EQ(emu_->stop(), 0);
        emu_.reset();
    }
    void SetUp() override { ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200); }

    /// An Anthropic request: `head` holds the members before `messages` (model, system, tools,
    /// thinking...), `messages` the JSON list.
    static HttpResult messages(const std::string& head, const std::string& messages,
                               const std::vector<std::string>& extra_headers = {}) {
        return emu_->post("/v1/messages",
                          "{" + head + R"(,"max_tokens":4096,"messages":)" + messages + "}",
                          anthropic_headers(extra_headers));
    }

    /// The answer's content to `head` and `messages`, as an assistant turn to send back.
    static std::string answer_turn(const std::string& head, const std::string& messages) {
        const HttpResult r = Binding::messages(head, messages);
        EXPECT_EQ(r.status, 200) << r.body;
        const auto d = parse(r.body);
        EXPECT_STREQ(d["content"][0]["type"].GetString(), "thinking") << r.body;
        return R"({"role":"assistant","content":)" + str(d["content"]) + "}";
    }

    static HttpResult converse(const std::string& model, const std::string& body) {
        return emu_->post("/model/" + model + "/converse", body, bedrock_headers());
    }

    static std::unique_ptr<EmulatorProcess> emu_;
};

std::unique_ptr<EmulatorProcess> Binding::emu_;

const std::string kSonnet =
    R"("model":"claude-sonnet-5-5","thinking":{"type":"adaptive"},"output_config":{"effort":"low"})";
const std::string kSystem = R"(,"system":"You are terse.")";
const std::string kFirst = R"({"role":"user","content":"Why is the sky blue?"})";
const std::string kSecond = R"({"role":"user","content":"And at sunset?"})";
const std::string kThird = R"({"role":"user","content":"And on Mars?"})";

std::string list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (const auto& i : items) out += (out.size() > 1 ? "," : "") + i;
    return out + "]";
}

std::string refusal_message(const HttpResult& r) {
    const auto d = parse(r.body);
    return d.HasMember("error") ? d["error"]["message"].GetString() : "";
}

// ---- Anthropic Messages (wire.193, wire.194, wire.196) ---------------------------------------

TEST_F(Binding, TheBlockComesBackUnchangedAfterAppendedTurns) {
    const std::string head = kSonnet + kSystem;
    const std::string a1 = answer_turn(head, list({kFirst}));
    const std::string a2 = answer_turn(head, list({kFirst, a1, kSecond}));
    // Two bound blocks, each after its own prefix; appending turns after them breaks neither.
    const HttpResult r = messages(head, list({kFirst, a1, kSecond, a2, kThird}));
    EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(Binding, AChangedEarlierUserMessageSystemOrToolsIsRefused) {
    const std::string head = kSonnet + kSystem;
    const std::string a1 = answer_turn(head, list({kFirst}));
    const auto expect_refused = [](const HttpResult& r, const std::string& what) {
        EXPECT_EQ(r.status, 400) << what << ": " << r.body;
        EXPECT_STREQ(parse(r.body)["error"]["type"].GetString(), "invalid_request_error");
        EXPECT_EQ(refusal_message(r).rfind(kBound, 0), 0U) << what << ": " << r.body;
    };
    expect_refused(
        messages(head, list({R"({"role":"user","content":"Why is grass green?"})", a1, kSecond})),
        "the first message");
    expect_refused(
        messages(kSonnet + R"(,"system":"You are verbose.")", list({kFirst, a1, kSecond})),
        "the system");
    expect_refused(messages(kSonnet, list({kFirst, a1, kSecond})), "no system");
    const std::string tool =
        R"(,"tools":[{"name":"lookup","description":"Looks up","input_schema":{"type":"object"}}])";
    expect_refused(messages(head + tool, list({kFirst, a1, kSecond})), "the tools");
    // The block's index is that of the message it is in.
    const std::string a2 = answer_turn(head, list({kFirst, a1, kSecond}));
    const HttpResult later =
        messages(kSonnet + R"(,"system":"Other.")", list({kFirst, a1, kSecond, a2, kThird}));
    EXPECT_EQ(later.status, 400);
    EXPECT_NE(refusal_message(later).find("messages.1.content.0"), std::string::npos);
    // Only the turns before a block bind it: a changed second question breaks the block that
    // followed it, not the one before it.
    const HttpResult second_changed = messages(
        head, list({kFirst, a1, R"({"role":"user","content":"And at noon?"})", a2, kThird}));
    EXPECT_EQ(second_changed.status, 400);
    EXPECT_EQ(refusal_message(second_changed)
                  .rfind("messages.3.content.0: The block is bound to a different conversation", 0),
              0U)
        << second_changed.body;
}

TEST_F(Binding, AToolLoopsBlockIsBoundToTheToolsItWasAnsweredWith) {
    const std::string head =
        kSonnet + R"(,"tools":[{"name":"lookup","description":"Looks up","input_schema":)"
                  R"({"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}])";
    const HttpResult call = messages(head, list({kFirst}));
    ASSERT_EQ(call.status, 200) << call.body;
    const auto d = parse(call.body);
    ASSERT_STREQ(d["content"][1]["type"].GetString(), "tool_use") << call.body;
    const std::string a1 = R"({"role":"assistant","content":)" + str(d["content"]) + "}";
    const std::string result =
        R"({"role":"user","content":[{"type":"tool_result","tool_use_id":")" +
        std::string(d["content"][1]["id"].GetString()) + R"(","content":"Rayleigh scattering"}]})";
    EXPECT_EQ(messages(head, list({kFirst, a1, result})).status, 200);
    const std::string other_tools =
        kSonnet + R"(,"tools":[{"name":"lookup","description":"Finds","input_schema":)"
                  R"({"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}])";
    const HttpResult r = messages(other_tools, list({kFirst, a1, result}));
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(refusal_message(r).rfind(kBound, 0), 0U) << r.body;
}

TEST_F(Binding, MovingACacheMarkDoesNotBreakTheBlock) {
    const std::string marked_first =
        R"({"role":"user","content":[{"type":"text","text":"Why is the sky blue?","cache_control":{"type":"ephemeral"}}]})";
    const std::string plain_first =
        R"({"role":"user","content":[{"type":"text","text":"Why is the sky blue?"}]})";
    const std::string marked_second =
        R"({"role":"user","content":[{"type":"text","text":"And at sunset?","cache_control":{"type":"ephemeral","ttl":"5m"}}]})";
    const std::string system_marked =
        R"(,"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}])";
    const std::string system_plain = R"(,"system":[{"type":"text","text":"You are terse."}])";
    const std::string a1 = answer_turn(kSonnet + system_plain, list({marked_first}));
    // The mark leaves the first message for the new last one, and another lands on the system.
    const HttpResult r = messages(kSonnet + system_marked, list({plain_first, a1, marked_second}));
    EXPECT_EQ(r.status, 200) << r.body;
    // A string content and its one text block are the same prefix.
    EXPECT_EQ(
        messages(kSonnet + R"(,"system":"You are terse.")", list({kFirst, a1, kSecond})).status,
        200);
    // The thinking request is not part of the prefix: another effort or display binds the same.
    EXPECT_EQ(
        messages(
            R"("model":"claude-sonnet-5-5","thinking":{"type":"adaptive","display":"summarized"},"output_config":{"effort":"high"})" +
                system_plain,
            list({plain_first, a1, kSecond}))
            .status,
        200);
}

TEST_F(Binding, DropBlockWithTheBetaDropsTheChangedBlockAndAnswers) {
    const std::string a1 = answer_turn(kSonnet + kSystem, list({kFirst}));
    const std::string changed = R"({"role":"user","content":"Why is grass green?"})";
    const std::string head = R"("model":"claude-sonnet-5-5","thinking":)" + kDropBlock + kSystem;
    // Without the beta the control is not read: refused.
    const HttpResult without = messages(head, list({changed, a1, kSecond}));
    EXPECT_EQ(without.status, 400) << without.body;
    // With it, the block leaves the prompt: the input is what it is without the block.
    const HttpResult dropped = messages(head, list({changed, a1, kSecond}), {kBetaHeader});
    ASSERT_EQ(dropped.status, 200) << dropped.body;
    auto turn = parse(a1);
    turn["content"].Erase(turn["content"].Begin());
    const HttpResult counted =
        emu_->post("/v1/messages/count_tokens",
                   "{" + head + R"(,"messages":)" + list({changed, str(turn), kSecond}) + "}",
                   anthropic_headers());
    ASSERT_EQ(counted.status, 200) << counted.body;
    EXPECT_EQ(parse(dropped.body)["usage"]["input_tokens"].GetInt64(),
              parse(counted.body)["input_tokens"].GetInt64());
    // The beta among others in the header counts too; an unchanged block is kept.
    const HttpResult kept = messages(head, list({kFirst, a1, kSecond}),
                                     {"anthropic-beta: other-2025-01-01, "
                                      "thinking-binding-controls-2026-08-01"});
    ASSERT_EQ(kept.status, 200) << kept.body;
    EXPECT_GT(parse(kept.body)["usage"]["input_tokens"].GetInt64(),
              parse(dropped.body)["usage"]["input_tokens"].GetInt64());
}

TEST_F(Binding, AMadeUpSignatureBindsNothing) {
    const std::string made_up =
        R"({"role":"assistant","content":[{"type":"thinking","thinking":"Hmm.","signature":"sig"},{"type":"text","text":"Scattering."}]})";
    EXPECT_EQ(messages(kSonnet + kSystem, list({kFirst, made_up, kSecond})).status, 200);
    // A signature that only looks like the emulator's bound form binds nothing either.
    const std::string look_alike =
        R"({"role":"assistant","content":[{"type":"thinking","thinking":"","signature":"emu-sig-0000000000000000-bound-xyz"},{"type":"text","text":"Scattering."}]})";
    EXPECT_EQ(messages(kSonnet, list({kFirst, look_alike, kSecond})).status, 200);
}

TEST_F(Binding, AModelWithoutTheBindingTakesAChangedPrefix) {
    // Claude Opus 5's record has adaptive thinking and no bound_to_prefix.
    const std::string head =
        R"("model":"claude-opus-5","thinking":{"type":"adaptive"},"output_config":{"effort":"low"})";
    const std::string a1 = answer_turn(head + kSystem, list({kFirst}));
    const HttpResult r = messages(head + R"(,"system":"You are verbose.")",
                                  list({R"({"role":"user","content":"Other."})", a1, kSecond}));
    EXPECT_EQ(r.status, 200) << r.body;
    // The same block on a bound model is checked (the signature carries its prefix).
    EXPECT_EQ(
        messages(kSonnet + R"(,"system":"You are verbose.")", list({kFirst, a1, kSecond})).status,
        400);
}

// ---- Adaptive and default thinking (wire.197, wire.198) --------------------------------------

TEST_F(Binding, AModelThatAlwaysThinksThinksAtItsDefaultEffortUnasked) {
    // Opus 5.5: always thinks, default effort medium (2,000 tokens); Fable 5.2: high (4,000).
    for (const auto& [model, spent] : std::vector<std::pair<std::string, long long>>{
             {"claude-opus-5-5", 2000}, {"claude-fable-5-2", 4000}}) {
        const HttpResult r = messages(R"("model":")" + model + R"(")", list({kFirst}));
        ASSERT_EQ(r.status, 200) << r.body;
        const auto d = parse(r.body);
        ASSERT_STREQ(d["content"][0]["type"].GetString(), "thinking") << model;
        EXPECT_STRNE(d["content"][0]["signature"].GetString(), "");
        const std::string text = d["content"][1]["text"].GetString();
        EXPECT_EQ(d["usage"]["output_tokens_details"]["thinking_tokens"].GetInt64(), spent)
            << model;
        EXPECT_EQ(d["usage"]["output_tokens"].GetInt64(), spent + tokens(text.size())) << model;
    }
    // Adaptive thinking without an effort spends the record's default too.
    const auto adaptive = parse(
        messages(R"("model":"claude-opus-5-5","thinking":{"type":"adaptive"})", list({kFirst}))
            .body);
    EXPECT_EQ(adaptive["usage"]["output_tokens_details"]["thinking_tokens"].GetInt64(), 2000);
    // A model that does not always think answers without thinking when not asked.
    const auto plain = parse(messages(R"("model":"claude-sonnet-5-5")", list({kFirst})).body);
    EXPECT_STREQ(plain["content"][0]["type"].GetString(), "text");
    EXPECT_TRUE(plain["usage"]["output_tokens_details"].IsNull());
}

// ---- Bedrock Converse (wire.195, wire.197) ---------------------------------------------------

const std::string kBedrockSonnet = "us.anthropic.claude-sonnet-5-5";

std::string converse_body(const std::string& system, const std::string& messages,
                          const std::string& extra = "") {
    return R"({"system":[{"text":")" + system + R"("}],"messages":)" + messages +
           R"(,"inferenceConfig":{"maxTokens":4096},"outputConfig":{"effort":"low"},)"
           R"("additionalModelRequestFields":{"thinking":{"type":"adaptive")" +
           extra + "}}";
}

const std::string kUserFirst = R"({"role":"user","content":[{"text":"Why is the sky blue?"}]})";
const std::string kUserSecond = R"({"role":"user","content":[{"text":"And at sunset?"}]})";

TEST_F(Binding, ConverseThinksAdaptivelyWithReasoningContentAndCountsItsTokens) {
    const HttpResult r = converse(kBedrockSonnet, converse_body("Terse.", list({kUserFirst}), "}"));
    ASSERT_EQ(r.status, 200) << r.body;
    const auto d = parse(r.body);
    const auto& content = d["output"]["message"]["content"];
    ASSERT_TRUE(content[0].HasMember("reasoningContent")) << r.body;
    const auto& reasoning = content[0]["reasoningContent"]["reasoningText"];
    EXPECT_STREQ(reasoning["text"].GetString(), "");  // display omitted
    EXPECT_NE(std::string(reasoning["signature"].GetString()).find("-bound-"), std::string::npos);
    const std::string text = content[1]["text"].GetString();
    EXPECT_EQ(d["usage"]["outputTokens"].GetInt64(), 1000 + tokens(text.size()));  // effort low

    // Streamed: the reasoning's signature in block 0, the text in block 1, the same usage.
    const HttpResult s =
        emu_->post("/model/" + kBedrockSonnet + "/converse-stream",
                   converse_body("Terse.", list({kUserFirst}), "}"), bedrock_headers());
    ASSERT_EQ(s.status, 200);
    std::string signature, streamed_text;
    long long output = -1;
    for (const auto& [event, payload] : parse_event_stream(s.body)) {
        const auto p = parse(payload);
        if (event == "contentBlockDelta" && p["delta"].HasMember("reasoningContent")) {
            EXPECT_EQ(p["contentBlockIndex"].GetInt(), 0);
            if (p["delta"]["reasoningContent"].HasMember("signature"))
                signature = p["delta"]["reasoningContent"]["signature"].GetString();
        } else if (event == "contentBlockDelta") {
            EXPECT_EQ(p["contentBlockIndex"].GetInt(), 1);
            streamed_text += p["delta"]["text"].GetString();
        } else if (event == "metadata") {
            output = p["usage"]["outputTokens"].GetInt64();
        }
    }
    EXPECT_EQ(signature, reasoning["signature"].GetString());
    EXPECT_EQ(streamed_text, text);
    EXPECT_EQ(output, 1000 + tokens(text.size()));
}

TEST_F(Binding, ConverseBindsReasoningContentToItsPrefix) {
    const HttpResult first =
        converse(kBedrockSonnet, converse_body("Terse.", list({kUserFirst}), "}"));
    ASSERT_EQ(first.status, 200) << first.body;
    const std::string a1 = str(parse(first.body)["output"]["message"]);
    // Unchanged, with a turn appended and a cachePoint added: taken.
    const std::string pointed =
        R"({"role":"user","content":[{"text":"Why is the sky blue?"},{"cachePoint":{"type":"default"}}]})";
    EXPECT_EQ(
        converse(kBedrockSonnet, converse_body("Terse.", list({pointed, a1, kUserSecond}), "}"))
            .status,
        200);
    // The system changed: the model's refusal passed through as a ValidationException.
    const HttpResult refused = converse(
        kBedrockSonnet, converse_body("Verbose.", list({kUserFirst, a1, kUserSecond}), "}"));
    EXPECT_EQ(refused.status, 400) << refused.body;
    EXPECT_EQ(refused.headers.at("x-amzn-errortype"), "ValidationException");
    EXPECT_EQ(std::string(parse(refused.body)["message"].GetString())
                  .rfind("The model returned the following errors: " + kBound, 0),
              0U)
        << refused.body;
    // An earlier user message changed: refused the same way.
    const std::string other_first = R"({"role":"user","content":[{"text":"Why is grass green?"}]})";
    const HttpResult earlier = converse(
        kBedrockSonnet, converse_body("Terse.", list({other_first, a1, kUserSecond}), "}"));
    EXPECT_EQ(earlier.status, 400) << earlier.body;
    EXPECT_NE(std::string(parse(earlier.body)["message"].GetString()).find(kBound),
              std::string::npos)
        << earlier.body;
    // drop_block with the beta in additionalModelRequestFields.anthropic_beta: answered.
    const std::string drop =
        R"(,"block_binding":{"prefix_mismatch_behavior":"drop_block"}},"anthropic_beta":["thinking-binding-controls-2026-08-01"])";
    EXPECT_EQ(converse(kBedrockSonnet,
                       converse_body("Verbose.", list({kUserFirst, a1, kUserSecond}), drop))
                  .status,
              200);
    // A made-up signature binds nothing.
    const std::string made_up =
        R"({"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"Hmm.","signature":"sig"}}},{"text":"Scattering."}]})";
    EXPECT_EQ(converse(kBedrockSonnet,
                       converse_body("Verbose.", list({kUserFirst, made_up, kUserSecond}), "}"))
                  .status,
              200);
}

TEST_F(Binding, AConverseModelWithoutTheBindingTakesAChangedPrefix) {
    // Claude Haiku 4.5 on Bedrock: manual thinking, no bound_to_prefix.
    const std::string model = "global.anthropic.claude-haiku-4-5-20251001-v1:0";
    const auto body = [](const std::string& system, const std::string& messages) {
        return R"({"system":[{"text":")" + system + R"("}],"messages":)" + messages +
               R"(,"inferenceConfig":{"maxTokens":4096},)"
               R"("additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":1024}}})";
    };
    const HttpResult first = converse(model, body("Terse.", list({kUserFirst})));
    ASSERT_EQ(first.status, 200) << first.body;
    const auto d = parse(first.body);
    ASSERT_TRUE(d["output"]["message"]["content"][0].HasMember("reasoningContent")) << first.body;
    const std::string a1 = str(d["output"]["message"]);
    const HttpResult r = converse(model, body("Verbose.", list({kUserFirst, a1, kUserSecond})));
    EXPECT_EQ(r.status, 200) << r.body;
}

}  // namespace
}  // namespace nucleo::emulator_test
