// nucleo-emulator's Anthropic cache diagnostics (docs/emulator.md "Cache diagnostics", the types
// of @anthropic-ai/sdk 1.17.0): over HTTP, an answer carries `diagnostics: null` unless its request
// asked and its prompt diverged from the one it names; a request with a `diagnostics` object leaves
// a fingerprint under its answer's id, and the next one is told the first divergence (model, tools,
// system, the other prompt-affecting parameters, messages) with the tokens it cost, or that the id
// is unknown. Malformed members are 400s naming the field; the store keeps a bounded number.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulator_client.hpp"

namespace nucleo::emulator_test {
namespace {

long long tokens(std::size_t bytes) {
    return static_cast<long long>((bytes + 3) / 4);
}

/// An Anthropic request, member by member. Empty strings leave a member out.
struct Ask {
    std::string model = "claude-emu";
    std::string system = R"("You are a terse assistant of the emulator's tests.")";
    std::string tools;
    std::vector<std::string> messages = {R"({"role":"user","content":"Why is the sky blue?"})"};
    std::string extra;        ///< more members, each with its leading comma
    std::string diagnostics;  ///< the member's JSON value
    bool stream = false;

    /// The body; `with_answer_members` false leaves out what count_tokens does not take.
    std::string body(bool with_answer_members = true) const {
        std::string b = R"({"model":")" + model + "\"";
        if (!system.empty()) b += R"(,"system":)" + system;
        if (!tools.empty()) b += R"(,"tools":)" + tools;
        b += R"(,"messages":[)";
        for (std::size_t i = 0; i < messages.size(); ++i) b += (i > 0 ? "," : "") + messages[i];
        b += "]" + extra;
        if (with_answer_members) {
            b += R"(,"max_tokens":4096)";
            if (!diagnostics.empty()) b += R"(,"diagnostics":)" + diagnostics;
            if (stream) b += R"(,"stream":true)";
        }
        return b + "}";
    }

    /// The same request as a next turn naming `previous` (nullopt: `previous_message_id: null`).
    Ask naming(const std::optional<std::string>& previous) const {
        Ask next = *this;
        next.diagnostics = R"({"previous_message_id":)" +
                           (previous ? "\"" + *previous + "\"" : std::string("null")) + "}";
        return next;
    }
};

const std::string kTools =
    R"([{"name":"lookup","description":"Looks a word up","input_schema":{"type":"object"}},)"
    R"({"name":"weather","description":"Weather of a city","input_schema":{"type":"object"}}])";

std::string text_message(const std::string& role, const std::string& text) {
    return R"({"role":")" + role + R"(","content":")" + text + "\"}";
}

/// The canonical bytes of a message with one plain ASCII text (docs/emulator.md "Token counting"):
/// its role object, then its text as one text block.
std::size_t message_bytes(const std::string& role, const std::string& text) {
    return (R"({"role":")" + role + R"("})").size() +
           (R"({"type":"text","text":")" + text + R"("})").size();
}

class Diagnostics : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        emu_ = std::make_unique<EmulatorProcess>(std::vector<std::string>{"--catalog", "none"});
    }
    static void TearDownTestSuite() {
        EXPECT_EQ(emu_->stop(), 0);
        emu_.reset();
    }
    void SetUp() override { ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200); }

    static HttpResult call(const Ask& a) {
        return emu_->post("/v1/messages", a.body(), anthropic_headers());
    }

    /// The answer to `a`, which must be a 200 with a `diagnostics` member.
    static rapidjson::Document answer(const Ask& a) {
        const HttpResult r = call(a);
        EXPECT_EQ(r.status, 200) << r.body;
        rapidjson::Document d = parse(r.body);
        EXPECT_TRUE(d.IsObject() && d.HasMember("diagnostics")) << r.body;
        return d;
    }

    /// The answer's id, after checking that its diagnostics are null.
    static std::string stored(const Ask& a) {
        const auto d = answer(a);
        EXPECT_TRUE(d.HasMember("diagnostics") && d["diagnostics"].IsNull()) << str(d);
        return d.HasMember("id") ? d["id"].GetString() : "";
    }

    /// The `diagnostics` member of the answer to `a`, as compact JSON.
    static std::string diagnostics(const Ask& a) {
        const auto d = answer(a);
        return d.HasMember("diagnostics") ? str(d["diagnostics"]) : "<absent>";
    }

    /// The diagnostics of `next` right after `previous` was stored: the ids are digests of the
    /// prompt, so an earlier check with the same prompt (another speed, other parameters) has
    /// stored its own fingerprint under the same id since.
    static std::string against(const Ask& previous, const Ask& next) {
        stored(previous);
        return diagnostics(next);
    }

    static long long count_tokens(const Ask& a) {
        const HttpResult r =
            emu_->post("/v1/messages/count_tokens", a.body(false), anthropic_headers());
        EXPECT_EQ(r.status, 200) << r.body;
        return parse(r.body)["input_tokens"].GetInt64();
    }

    static std::string changed(const std::string& type, long long missed) {
        return R"({"cache_miss_reason":{"type":")" + type + R"(","cache_missed_input_tokens":)" +
               std::to_string(missed) + "}}";
    }

    static std::unique_ptr<EmulatorProcess> emu_;
};

std::unique_ptr<EmulatorProcess> Diagnostics::emu_;

const std::string kNotFound = R"({"cache_miss_reason":{"type":"previous_message_not_found"}})";
const std::string kUnavailable = R"({"cache_miss_reason":{"type":"unavailable"}})";

TEST_F(Diagnostics, WithoutTheMemberTheAnswerCarriesNullAndNothingIsStored) {
    Ask plain;
    const std::string id = stored(plain);
    ASSERT_EQ(id.rfind("msg_emu_", 0), 0U) << id;
    // The streamed answer's message_start carries the member too, and message_delta does not.
    plain.stream = true;
    const HttpResult r = call(plain);
    ASSERT_EQ(r.status, 200) << r.body;
    const auto events = parse_sse(r.body);
    ASSERT_FALSE(events.empty());
    ASSERT_EQ(events.front().first, "message_start");
    const auto start = parse(events.front().second);
    ASSERT_TRUE(start["message"].HasMember("diagnostics")) << events.front().second;
    EXPECT_TRUE(start["message"]["diagnostics"].IsNull());
    for (const auto& [name, data] : events) {
        if (name == "message_delta") {
            EXPECT_EQ(data.find("diagnostics"), std::string::npos) << data;
        }
    }
    // `diagnostics: null` (the SDK types it `DiagnosticsParam | null`) asks nothing either.
    Ask null_member = plain;
    null_member.stream = false;
    null_member.diagnostics = "null";
    EXPECT_EQ(stored(null_member), id);
    // Neither left a fingerprint: naming their id finds none.
    EXPECT_EQ(diagnostics(Ask{}.naming(id)), kNotFound);
}

TEST_F(Diagnostics, AFirstTurnIsStoredAndAppendedTurnsAreNoDivergence) {
    const Ask first = Ask{}.naming(std::nullopt);
    const std::string id1 = stored(first);
    Ask second = first.naming(id1);
    second.messages.push_back(
        R"({"role":"assistant","content":[{"type":"text","text":"Rayleigh scattering."}]})");
    second.messages.push_back(text_message("user", "And at sunset?"));
    const std::string id2 = stored(second);
    EXPECT_NE(id2, id1);
    Ask third = second.naming(id2);
    third.messages.push_back(text_message("assistant", "Longer paths."));
    third.messages.push_back(text_message("user", "And on Mars?"));
    EXPECT_EQ(diagnostics(third), "null");
    // The first turn was stored: a change against it is diagnosed, not previous_message_not_found.
    Ask other_system = first.naming(id1);
    other_system.system = R"("You are verbose.")";
    EXPECT_NE(diagnostics(other_system).find("system_changed"), std::string::npos);
    // `{}` opts in as a first turn does.
    Ask empty = Ask{};
    empty.messages = {text_message("user", "An empty diagnostics object")};
    empty.diagnostics = "{}";
    const std::string id3 = stored(empty);
    EXPECT_EQ(diagnostics(empty.naming(id3)), "null");
}

TEST_F(Diagnostics, AChangedSystemIsSystemChangedWithThePromptFromTheSystemOn) {
    const Ask first = Ask{}.naming(std::nullopt);
    const std::string id = stored(first);
    Ask next = first.naming(id);
    next.system = R"("You are a verbose assistant.")";
    // Without tools, the system and the messages are the whole prompt count_tokens counts.
    const long long missed = count_tokens(first);
    ASSERT_GT(missed, 0);
    EXPECT_EQ(diagnostics(next), changed("system_changed", missed));
    // A system of blocks whose text is the same string is the same system.
    Ask blocks = first.naming(id);
    blocks.system =
        R"([{"type":"text","text":"You are a terse assistant of the emulator's tests."}])";
    EXPECT_EQ(diagnostics(blocks), "null");
}

TEST_F(Diagnostics, ChangedToolsAreToolsChangedWithTheWholePrompt) {
    Ask first = Ask{}.naming(std::nullopt);
    first.tools = kTools;
    const std::string id = stored(first);
    const long long whole = count_tokens(first);
    Ask described = first.naming(id);
    described.tools = kTools;
    described.tools.replace(described.tools.find("Looks a word up"), 15, "Looks words up");
    EXPECT_EQ(diagnostics(described), changed("tools_changed", whole));
    Ask reordered = first.naming(id);
    reordered.tools =
        R"([{"name":"weather","description":"Weather of a city","input_schema":{"type":"object"}},)"
        R"({"name":"lookup","description":"Looks a word up","input_schema":{"type":"object"}}])";
    EXPECT_EQ(diagnostics(reordered), changed("tools_changed", whole));
    // Tools come before the system in the prompt: with both changed, the tools are the first
    // divergence.
    Ask both = reordered;
    both.system = R"("Another system.")";
    EXPECT_EQ(diagnostics(both), changed("tools_changed", whole));
    // A cache mark on a tool is not part of it.
    Ask marked = first.naming(id);
    marked.tools = kTools;
    marked.tools.insert(marked.tools.rfind('}'), R"(,"cache_control":{"type":"ephemeral"})");
    EXPECT_EQ(diagnostics(marked), "null");
}

TEST_F(Diagnostics, AChangedEarlierMessageIsMessagesChangedFromThatMessageOn) {
    Ask first = Ask{}.naming(std::nullopt);
    first.messages = {text_message("user", "Why is the sky blue?"),
                      text_message("assistant", "Rayleigh scattering."),
                      text_message("user", "And at sunset?")};
    const std::string id = stored(first);
    Ask edited = first.naming(id);
    edited.messages[1] = text_message("assistant", "Because of scattering.");
    edited.messages.push_back(text_message("assistant", "Longer paths."));
    edited.messages.push_back(text_message("user", "And on Mars?"));
    // The previous request's messages 1 and 2 could not be read.
    const long long missed = tokens(message_bytes("assistant", "Rayleigh scattering.") +
                                    message_bytes("user", "And at sunset?"));
    EXPECT_EQ(diagnostics(edited), changed("messages_changed", missed));
    // The last message changed: only its own tokens are missed.
    Ask last = first.naming(id);
    last.messages[2] = text_message("user", "And at noon?");
    EXPECT_EQ(diagnostics(last),
              changed("messages_changed", tokens(message_bytes("user", "And at sunset?"))));
    // Moving a cache mark from one message to another changes no message.
    Ask marked = first;
    marked.messages[0] =
        R"({"role":"user","content":[{"type":"text","text":"Why is the sky blue?",)"
        R"("cache_control":{"type":"ephemeral"}}]})";
    const std::string marked_id = stored(marked);
    Ask moved = first.naming(marked_id);
    moved.messages[2] = R"({"role":"user","content":[{"type":"text","text":"And at sunset?",)"
                        R"("cache_control":{"type":"ephemeral"}}]})";
    EXPECT_EQ(diagnostics(moved), "null");
}

TEST_F(Diagnostics, AChangedModelOrSpeedIsModelChangedWithTheWholePrompt) {
    Ask first = Ask{}.naming(std::nullopt);
    first.tools = kTools;
    const std::string id = stored(first);
    const long long whole = count_tokens(first);
    Ask other = first.naming(id);
    other.model = "claude-emu-2";
    EXPECT_EQ(diagnostics(other), changed("model_changed", whole));
    // The model is met first: a changed system beside it is not reported.
    other.system = R"("Another system.")";
    EXPECT_EQ(diagnostics(other), changed("model_changed", whole));
    // CacheMissModelChanged: "model or speed".
    Ask fast = first.naming(id);
    fast.extra = R"(,"speed":"fast")";
    EXPECT_EQ(against(first, fast), changed("model_changed", whole));
    // The standard speed is the default: sending it changes nothing.
    Ask standard = first.naming(id);
    standard.extra = R"(,"speed":"standard")";
    EXPECT_EQ(against(first, standard), "null");
}

TEST_F(Diagnostics, AnIdWithoutAFingerprintIsPreviousMessageNotFound) {
    EXPECT_EQ(diagnostics(Ask{}.naming("msg_never_answered")), kNotFound);
    // The member is a reason without cache_missed_input_tokens.
    const auto d = answer(Ask{}.naming("msg_never_answered"));
    EXPECT_FALSE(d["diagnostics"]["cache_miss_reason"].HasMember("cache_missed_input_tokens"));
}

TEST_F(Diagnostics, OtherPromptAffectingParametersAloneAreUnavailable) {
    const Ask first = Ask{}.naming(std::nullopt);
    const std::string id = stored(first);
    Ask thinking = first.naming(id);
    thinking.extra = R"(,"thinking":{"type":"enabled","budget_tokens":1024})";
    EXPECT_EQ(against(first, thinking), kUnavailable);
    Ask effort = first.naming(id);
    effort.extra = R"(,"output_config":{"effort":"low"})";
    EXPECT_EQ(against(first, effort), kUnavailable);
    // They invalidate the messages' cache entries, so they are met before the messages: a changed
    // message beside them is not reported.
    Ask also_messages = thinking;
    also_messages.messages = {text_message("user", "Why is grass green?")};
    EXPECT_EQ(against(first, also_messages), kUnavailable);
    // The same changed message alone is reported.
    Ask only_messages = first.naming(id);
    only_messages.messages = also_messages.messages;
    EXPECT_NE(against(first, only_messages).find("messages_changed"), std::string::npos);
    // Parameters that do not shape the prompt are no divergence.
    Ask sampling = first.naming(id);
    sampling.extra = R"(,"temperature":0.5,"stop_sequences":["END"],"metadata":{"user_id":"u1"})";
    EXPECT_EQ(against(first, sampling), "null");
    // tool_choice, with tools that stay the same.
    Ask with_tools = first;
    with_tools.tools = kTools;
    with_tools.messages = {text_message("user", "Look up the word sky")};
    const std::string tools_id = stored(with_tools);
    Ask forced = with_tools.naming(tools_id);
    forced.extra = R"(,"tool_choice":{"type":"tool","name":"weather"})";
    EXPECT_EQ(diagnostics(forced), kUnavailable);
}

TEST_F(Diagnostics, TheSamePromptAgainReplacesTheFingerprintUnderItsId) {
    // The answer id is a digest of the prompt: a request that differs from the one stored under
    // an id only in other parameters gets that id and stores its own fingerprint under it.
    const Ask first = Ask{}.naming(std::nullopt);
    const std::string id = stored(first);
    Ask thinking = first.naming(id);
    thinking.extra = R"(,"thinking":{"type":"enabled","budget_tokens":1024})";
    const auto d = answer(thinking);
    EXPECT_EQ(std::string(d["id"].GetString()), id);
    EXPECT_EQ(str(d["diagnostics"]), kUnavailable);
    // Named again, the id stands for the request with thinking, the latest stored under it.
    EXPECT_EQ(diagnostics(first.naming(id)), kUnavailable);
    // ... and that request stored the one without thinking under it again.
    EXPECT_EQ(diagnostics(first.naming(id)), "null");
}

TEST_F(Diagnostics, MalformedDiagnosticsIsA400NamingTheField) {
    const auto refused = [](const std::string& member, const std::string& message) {
        Ask a;
        a.diagnostics = member;
        const HttpResult r = call(a);
        EXPECT_EQ(r.status, 400) << member << ": " << r.body;
        const auto d = parse(r.body);
        ASSERT_TRUE(d.IsObject() && d.HasMember("error")) << r.body;
        EXPECT_STREQ(d["type"].GetString(), "error");
        EXPECT_STREQ(d["error"]["type"].GetString(), "invalid_request_error");
        EXPECT_EQ(std::string(d["error"]["message"].GetString()), message) << member;
    };
    refused(R"("msg_abc")", "diagnostics: Input should be a valid dictionary");
    refused("[]", "diagnostics: Input should be a valid dictionary");
    refused(R"({"previous_message_id":5})",
            "diagnostics.previous_message_id: Input should be a valid string");
    refused(R"({"previous_message_id":{"id":"msg_abc"}})",
            "diagnostics.previous_message_id: Input should be a valid string");
    refused(R"({"previous_id":"msg_abc"})",
            "diagnostics.previous_id: Extra inputs are not permitted");
    refused(R"({"previous_message_id":")" + std::string(257, 'a') + "\"}",
            "diagnostics.previous_message_id: String should have at most 256 characters");
    // 256 characters is a well-formed id (one that was never answered).
    EXPECT_EQ(diagnostics(Ask{}.naming(std::string(256, 'a'))), kNotFound);
}

TEST_F(Diagnostics, AStreamedAnswerCarriesThemInMessageStartAndIsStoredToo) {
    const Ask first = Ask{}.naming(std::nullopt);
    const std::string id = stored(first);
    Ask next = first.naming(id);
    next.system = R"("You are a verbose assistant.")";
    next.stream = true;
    const HttpResult r = call(next);
    ASSERT_EQ(r.status, 200) << r.body;
    const auto events = parse_sse(r.body);
    ASSERT_FALSE(events.empty());
    ASSERT_EQ(events.front().first, "message_start");
    const auto start = parse(events.front().second);
    ASSERT_TRUE(start["message"].HasMember("diagnostics")) << events.front().second;
    EXPECT_EQ(str(start["message"]["diagnostics"]), changed("system_changed", count_tokens(first)));
    // The streamed answer's id is the one the same request gets unstreamed, and its fingerprint
    // is stored under it.
    Ask after = next.naming(start["message"]["id"].GetString());
    after.stream = false;
    after.messages.push_back(text_message("assistant", "Rayleigh scattering."));
    after.messages.push_back(text_message("user", "And at sunset?"));
    EXPECT_EQ(diagnostics(after), "null");
}

TEST_F(Diagnostics, ResetForgetsTheFingerprints) {
    const Ask first = Ask{}.naming(std::nullopt);
    const std::string id = stored(first);
    EXPECT_EQ(diagnostics(first.naming(id)), "null");
    ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200);
    EXPECT_EQ(diagnostics(first.naming(id)), kNotFound);
}

TEST_F(Diagnostics, TheOtherProvidersAnswerWithoutThem) {
    const HttpResult openai =
        emu_->post("/v1/chat/completions",
                   R"({"model":"gpt-emu","messages":[{"role":"user","content":"Hi"}]})",
                   {"authorization: Bearer sk-test"});
    ASSERT_EQ(openai.status, 200) << openai.body;
    EXPECT_FALSE(parse(openai.body).HasMember("diagnostics")) << openai.body;
    const HttpResult converse = emu_->post(
        "/model/anthropic.claude-emu/converse",
        R"({"messages":[{"role":"user","content":[{"text":"Hi"}]}]})", bedrock_headers());
    ASSERT_EQ(converse.status, 200) << converse.body;
    EXPECT_FALSE(parse(converse.body).HasMember("diagnostics")) << converse.body;
}

TEST(DiagnosticsCapacity, TheOldestFingerprintIsForgottenFirst) {
    EmulatorProcess emu({"--catalog", "none", "--diagnostics-capacity", "2"});
    const auto post = [&emu](const Ask& a) {
        const HttpResult r = emu.post("/v1/messages", a.body(), anthropic_headers());
        EXPECT_EQ(r.status, 200) << r.body;
        return parse(r.body);
    };
    std::vector<std::string> ids;
    for (const char* question : {"First question", "Second question", "Third question"}) {
        Ask a = Ask{}.naming(std::nullopt);
        a.messages = {text_message("user", question)};
        ids.push_back(post(a)["id"].GetString());
    }
    // Two are kept: the first was forgotten when the third came, the second is still there.
    Ask second = Ask{}.naming(ids[1]);
    second.messages = {text_message("user", "Second question")};
    EXPECT_EQ(str(post(second)["diagnostics"]), "null");
    Ask first = Ask{}.naming(ids[0]);
    first.messages = {text_message("user", "First question")};
    EXPECT_EQ(str(post(first)["diagnostics"]), kNotFound);
    EXPECT_EQ(emu.stop(), 0);
    EXPECT_EQ(run_emulator_to_exit({"--diagnostics-capacity", "-1"}), 2);
}

}  // namespace
}  // namespace nucleo::emulator_test
