// wire.191, wire.192: the history is append-only on the wire. For every in-tree dialect, over
// seeded generated conversations (tools, thinking, images, artifacts, late tools, typed answers,
// depth changes), the request of call N+1 carries every message of call N byte for byte once the
// cache marks are taken out; what rides a turn (the answer contract, the registry) stays on it,
// also through a save and a restore; a compaction takes the thinking out of the answers whose
// prefix it changed, and counts them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "compaction_support.hpp"
#include "dialect_client.hpp"
#include "growing_support.hpp"
#include "nucleo/compaction.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/document.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/response.hpp"
#include "wire_marks.hpp"

namespace nucleo::compaction_test {
namespace {

constexpr int kSeeds = 200;
constexpr int kRounds = 12;
constexpr int kKeptBodies = 6;
namespace fs = std::filesystem;

class TypedAnswer final : public ResponseHandler {
  public:
    [[nodiscard]] bool uses_schema_notation() const override { return false; }
    [[nodiscard]] std::string response_instructions(bool native, bool thinking) const override {
        return std::string("Answer as JSON") + (native ? "" : " with tool_calls") +
               (thinking ? "." : " with reasoning.");
    }
};

std::string compact(const rapidjson::Value& v) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return {buf.GetString(), buf.GetSize()};
}

/// The wire messages of a request body, each as compact JSON without cache marks; its system and
/// its tools the same way.
std::vector<std::string> wire_messages(const std::string& body, std::string& system,
                                       std::string& tools) {
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    EXPECT_FALSE(d.HasParseError()) << body.substr(0, 200);
    test_support::strip_cache_marks(d);
    system = d.HasMember("system") ? compact(d["system"]) : std::string();
    tools = d.HasMember("tools") ? compact(d["tools"]) : std::string();
    std::vector<std::string> out;
    if (!d.HasMember("messages")) return out;
    for (const auto& m : d["messages"].GetArray()) out.push_back(compact(m));
    return out;
}

/// The model of the test, with thinking at DEEP so a depth change moves the contract's text.
ModelSpec model_of(const std::string& dialect) {
    ModelSpec m = model_for_test();
    m.provider = dialect;
    if (dialect == "bedrock") m.wire_model = "us.anthropic.claude-sonnet-5-5";
    m.max_context_tokens = 1'000'000;
    m.thinking_budget = {{Depth::kDeep, 2048}};
    m.max_output_tokens = 16000;
    return m;
}

/// One answer of the model after a user turn; ends with a user turn again.
void answer_and_ask(ConversationContext& c, Grower& grow, int round) {
    const std::string n = std::to_string(round);
    Message answer;
    answer.direction = Direction::kIncoming;
    if (grow.pick(2) == 0)
        answer.blocks.push_back(ThinkingBlock{"Let me think about step " + n + ".", "sig-" + n});
    const bool tool = grow.pick(3) == 0;
    answer.blocks.push_back(TextBlock{"Working on step " + n + ": " + prose(1, round)});
    const std::string use = "call_" + n;
    if (tool) answer.blocks.push_back(ToolUseBlock{use, "read_file", R"({"path":"src/a.cpp"})"});
    c.add_message(std::move(answer));
    if (tool) {
        Message results;
        results.direction = Direction::kOutgoing;
        results.blocks.push_back(ToolResultBlock{use, {TextBlock{prose(2, round + 50)}}, false});
        c.add_message(std::move(results));
        return;
    }
    switch (grow.pick(6)) {
        case 0: {
            Message m = Message::outgoing_text("Reply in the shape asked, round " + n + ".");
            m.response_handler = std::make_shared<TypedAnswer>();
            c.add_message(std::move(m));
            break;
        }
        case 1: {
            Message m;
            m.direction = Direction::kOutgoing;
            m.blocks.push_back(TextBlock{"The state now:"});
            m.blocks.push_back(PojoBlock{"Status", R"({"round":)" + n + R"(,"ok":true})"});
            c.add_message(std::move(m));
            break;
        }
        case 2: {
            Message m;
            m.direction = Direction::kOutgoing;
            m.blocks.push_back(ImageBlock{"image/png", "iVBORw0KGgo=", ""});
            m.blocks.push_back(TextBlock{"What is in this picture, round " + n + "?"});
            c.add_message(std::move(m));
            break;
        }
        case 3:
            c.add_tool(ToolDefinitionBlock{"late_tool_" + n, "A tool declared late.",
                                           R"({"type":"object","properties":{}})"});
            c.add_message(Message::outgoing_text("Use the new tool if it helps, round " + n + "."));
            break;
        case 4:
            c.artifacts().register_artifact("note_" + n, R"({"round":)" + n + "}");
            c.add_message(Message::outgoing_text("A note was filed, round " + n + "."));
            break;
        default:
            c.add_message(Message::outgoing_text("Next, round " + n + ": " + prose(1, round + 9)));
    }
}

/// A request as the SDK check reads an envelope: its path, its headers and its body.
std::string envelope(const HttpRequest& request) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("method");
    w.String(request.method.c_str());
    w.Key("url");
    w.String(request.url.c_str());
    w.Key("headers");
    w.StartObject();
    for (const auto& [name, value] : request.headers) {
        if (name == "x-api-key" || name == "authorization") continue;
        w.Key(name.c_str());
        w.String(value.c_str());
    }
    w.EndObject();
    w.Key("body");
    const std::string body = request.body.str();
    w.RawValue(body.data(), body.size(), rapidjson::kObjectType);
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

/// A dialect, and "+tool_changes" for a model whose record takes mid-conversation tool changes
/// (tools.103): late tools are tool additions in the stream and `tools` never changes.
class AppendOnly : public ::testing::TestWithParam<const char*> {};

TEST_P(AppendOnly, EveryCallCarriesThePreviousCallsMessagesByteForByte) {
    const std::string param = GetParam();
    const std::string dialect = param.substr(0, param.find('+'));
    const bool tool_changes = param.ends_with("+tool_changes");
    // The per-turn encode cache on, as every client has it: the bodies are its joins.
    ProviderClient client = client_of(dialect, true);
    ModelSpec model = model_of(dialect);
    model.tool_changes = tool_changes;
    model.system_messages = tool_changes;
    bool added = false;  // a tool addition was sent
    for (int seed = 1; seed <= kSeeds; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        Grower grow(static_cast<std::uint64_t>(seed) * 104729);
        ConversationContext c = base("append-only-" + std::to_string(seed));
        Message first = Message::outgoing_text("Fix the build, please.");
        if (grow.pick(2) == 0) first.response_handler = std::make_shared<TypedAnswer>();
        c.add_message(std::move(first));
        std::string system_before;
        std::string tools_before;
        HttpRequest request = client.build_request(c, model, {}, true);
        std::string body = request.body.str();
        std::vector<std::string> before = wire_messages(body, system_before, tools_before);
        for (int round = 1; round <= kRounds; ++round) {
            SCOPED_TRACE("round " + std::to_string(round));
            answer_and_ask(c, grow, round);
            if (grow.pick(5) == 0)
                c.set_depth(grow.pick(2) == 0 ? Depth::kDeep : Depth::kImmediate);
            // A restore composes its head freely again (conversation.15), which moves `tools`
            // for a late tool: the tool-changes case keeps one instance.
            if (grow.pick(7) == 0 && !tool_changes)
                c = ConversationContext::from_parts(c.parts());  // a restore
            std::string system_after;
            std::string tools_after;
            request = client.build_request(c, model, {}, true);
            body = request.body.str();
            const std::vector<std::string> after = wire_messages(body, system_after, tools_after);
            EXPECT_EQ(system_after, system_before);
            if (tool_changes) {
                EXPECT_EQ(tools_after, tools_before) << "a late tool changed `tools`";
                added = added || body.find(R"("type":"tool_addition")") != std::string::npos;
            }
            ASSERT_GT(after.size(), before.size());
            for (std::size_t i = 0; i < before.size(); ++i) {
                ASSERT_EQ(after[i], before[i])
                    << "wire message " << i << " of the previous call changed";
            }
            before = after;
            system_before = system_after;
            tools_before = tools_after;
        }
        // The last body of the first six generated conversations, kept for the SDK type check
        // (sdk_types.append_only).
        // The beta requests go as envelopes: their headers choose the SDK's beta types.
        if (seed <= kKeptBodies) {
            const fs::path dir =
                fs::path(NUCLEO_BINARY_DIR) / "tests" / "compaction" / "bodies" / dialect;
            const std::string prefix = tool_changes ? "tool-changes-seed-" : "seed-";
            fs::create_directories(dir);
            if (seed == 1) {
                for (const auto& entry : fs::directory_iterator(dir)) {
                    if (entry.path().filename().string().starts_with(prefix))
                        fs::remove(entry.path());
                }
            }
            std::ofstream(dir / (prefix + std::to_string(seed) + ".json"), std::ios::binary)
                << (tool_changes ? envelope(request) : body);
        }
    }
    if (tool_changes) {
        EXPECT_TRUE(added) << "no seed sent a late tool as a tool addition";
    }
}

INSTANTIATE_TEST_SUITE_P(Dialects, AppendOnly,
                         ::testing::Values("anthropic", "anthropic+tool_changes", "openai",
                                           "bedrock"),
                         [](const auto& info) {
                             std::string name = info.param;
                             std::replace(name.begin(), name.end(), '+', '_');
                             return name;
                         });

// ---- what rides a turn
// ---------------------------------------------------------------------------

const FixedContentFormatter kNative(true, true);

std::string last_text(const PreparedTurn& turn) {
    const auto* t = turn.blocks.back().get_if<TextBlock>();
    return t != nullptr ? t->text : std::string();
}

TEST(SentWith, TheContractStaysOnTheTurnItRodeAndALaterCallsRidesItsOwn) {
    ConversationContext c = base("contract");
    Message q1 = Message::outgoing_text("First question.");
    q1.response_handler = std::make_shared<TypedAnswer>();
    c.add_message(q1);
    const PreparedConversation first = c.prepare_messages_for_llm(kNative, false);
    EXPECT_EQ(last_text(first.turns[0]), "Answer as JSON with reasoning.");
    c.add_message(Message::incoming_text("An answer."));
    c.add_message(Message::outgoing_text("A plain follow-up."));
    const PreparedConversation second = c.prepare_messages_for_llm(kNative, true);
    // The first turn as it was sent (its contract of the call without thinking), byte for byte.
    EXPECT_EQ(second.turns[0].blocks, first.turns[0].blocks);
    EXPECT_EQ(last_text(second.turns[2]), "A plain follow-up.");
}

TEST(SentWith, AnUnansweredTurnTakesTheContractOfTheNewCallAndAnAnsweredOneNever) {
    ConversationContext c = base("retry");
    Message q = Message::outgoing_text("Question.");
    q.response_handler = std::make_shared<TypedAnswer>();
    c.add_message(q);
    EXPECT_EQ(last_text(c.prepare_messages_for_llm(kNative, false).turns[0]),
              "Answer as JSON with reasoning.");
    // A retry at another depth, nothing answered: the turn rides this call's contract.
    EXPECT_EQ(last_text(c.prepare_messages_for_llm(kNative, true).turns[0]), "Answer as JSON.");
    c.add_message(Message::incoming_text("Answered."));
    const PreparedConversation prefill = c.prepare_messages_for_llm(kNative, false);
    EXPECT_EQ(last_text(prefill.turns[0]), "Answer as JSON.")
        << "an answered turn keeps what the model saw";
}

TEST(SentWith, TheRegistryRidesTheTurnOfTheCallInWhichItChangedAndStays) {
    ConversationContext c = base("registry");  // registers "log"
    c.add_message(Message::outgoing_text("Look at the log."));
    const PreparedConversation first = c.prepare_messages_for_llm(kNative, false);
    ASSERT_EQ(first.turns.size(), 1U) << "no trailing registry turn";
    const std::string registry = last_text(first.turns[0]);
    EXPECT_EQ(registry.rfind("=== ARTIFACT REGISTRY ===", 0), 0U) << registry;
    c.add_message(Message::incoming_text("Looked."));
    c.add_message(Message::outgoing_text("And now?"));
    const PreparedConversation second = c.prepare_messages_for_llm(kNative, false);
    EXPECT_EQ(second.turns[0].blocks, first.turns[0].blocks);
    EXPECT_EQ(second.turns[2].blocks.size(), 1U) << "an unchanged registry is not sent again";
    c.artifacts().register_artifact("trace", R"({"frames":3})");
    c.add_message(Message::incoming_text("Nothing new."));
    c.add_message(Message::outgoing_text("A trace was filed."));
    const PreparedConversation third = c.prepare_messages_for_llm(kNative, false);
    EXPECT_EQ(third.turns[0].blocks, first.turns[0].blocks);
    const std::string changed = last_text(third.turns[4]);
    EXPECT_NE(changed.find("trace"), std::string::npos) << changed;
}

TEST(SentWith, WhatRodeATurnSurvivesASaveAndARestore) {
    ConversationContext c = base("restore");
    Message q = Message::outgoing_text("Question.");
    q.response_handler = std::make_shared<TypedAnswer>();
    c.add_message(q);
    const PreparedConversation sent = c.prepare_messages_for_llm(kNative, false);
    c.add_message(Message::incoming_text("Answer."));
    c.add_message(Message::outgoing_text("Next."));
    // The restored messages have no response handler: the record carries the contract.
    ConversationContext restored = read_conversation_document(write_conversation_document(c));
    EXPECT_EQ(restored.parts().sent_with, c.parts().sent_with);
    const PreparedConversation after = restored.prepare_messages_for_llm(kNative, true);
    EXPECT_EQ(after.turns[0].blocks, sent.turns[0].blocks);
}

TEST(SentWith, ABadSentWithIsRefusedNamingWhereAndAnUnknownIdIsNotKept) {
    ConversationContext c = base("bad");
    c.add_message(Message::outgoing_text("Question."));
    (void)c.prepare_messages_for_llm(kNative, false);
    std::string doc = write_conversation_document(c, {.pretty = false});
    ASSERT_NE(doc.find("\"sent_with\""), std::string::npos);
    std::string bad = doc;
    bad.replace(bad.find("\"sent_with\""), 11, "\"sent_with\":{\"m1\":3},\"_\"");
    try {
        (void)read_conversation_document(bad);
        ADD_FAILURE() << "a sent_with entry that is not an object was read";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("sent_with.m1"), std::string::npos) << e.what();
    }
    std::string unknown = doc;
    unknown.replace(unknown.find("\"sent_with\":{"), 13,
                    "\"sent_with\":{\"gone\":{\"contract\":\"x\"},");
    EXPECT_EQ(read_conversation_parts(unknown).sent_with.count("gone"), 0U);
}

// ---- compaction and bound thinking -------------------------------------------------------------

TEST(ReboundThinking, CompactionDropsTheThinkingOfAnswersAfterTheFirstChangeAndCountsIt) {
    ConversationContext c = base("thinking");
    for (int k = 1; k <= 14; ++k) {
        c.add_message(
            Message::outgoing_text("Question " + std::to_string(k) + ": " + prose(25, k)));
        Message a;
        a.direction = Direction::kIncoming;
        a.compactable = k < 12;  // the last answers stay verbatim, after the summaries
        a.blocks.push_back(ThinkingBlock{"Thinking about " + std::to_string(k), "sig"});
        a.blocks.push_back(TextBlock{"Answer " + std::to_string(k) + ": " + prose(25, 100 + k)});
        c.add_message(a);
    }
    c.add_message(Message::outgoing_text("What is left to fix?"));
    const std::vector<Message> old = c.messages();
    ContextWindowManager manager(scripted(), test_settings());
    const CompactionReport r = manager.ensure_fits(c, test_model(), 512);
    ASSERT_TRUE(r.compacted());
    std::size_t same = 0;
    while (same < old.size() && same < c.messages().size() && old[same].id == c.messages()[same].id)
        ++same;
    std::int64_t kept_before = 0;
    std::int64_t left_after = 0;
    for (std::size_t i = 0; i < c.messages().size(); ++i) {
        for (const ContentBlock& b : c.messages()[i].blocks) {
            if (!b.is<ThinkingBlock>()) continue;
            (i < same ? kept_before : left_after) += 1;
        }
    }
    EXPECT_EQ(left_after, 0) << "a thinking block after the first change was sent on";
    std::int64_t originally_after = 0;
    for (const Message& m : old) {
        const bool survives =
            std::any_of(c.messages().begin() + static_cast<std::ptrdiff_t>(same),
                        c.messages().end(), [&](const Message& n) { return n.id == m.id; });
        if (!survives) continue;
        for (const ContentBlock& b : m.blocks) originally_after += b.is<ThinkingBlock>() ? 1 : 0;
    }
    EXPECT_GT(originally_after, 0) << "the fixture keeps answers after the summary";
    EXPECT_EQ(r.thinking_blocks_dropped, originally_after);
}

}  // namespace
}  // namespace nucleo::compaction_test
