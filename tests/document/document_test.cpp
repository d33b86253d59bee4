// The conversation document v1 (conversation.30-32, docs/conversation-document.md) and its bad
// input (conversation.31).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(NUCLEO_SOURCE_DIR) + "/tests/document/fixtures/" + name);
    EXPECT_TRUE(in) << name;
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

/// The message of the refusal of `json`, which must be kInvalidArgument.
std::string refusal(const std::string& json) {
    try {
        (void)read_conversation_parts(json);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "accepted: " << json;
    return {};
}

/// A document with one message list around `messages` (a JSON array body).
std::string with_messages(const std::string& messages) {
    return R"({"schema_version": 1, "conversation_id": "c", "messages": [)" + messages + "]}";
}

void expect_same_message(const Message& a, const Message& b) {
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.direction, b.direction);
    EXPECT_EQ(a.provider_message_id, b.provider_message_id);
    EXPECT_EQ(a.compactable, b.compactable);
    EXPECT_EQ(a.cache, b.cache);
    EXPECT_EQ(a.app_authored, b.app_authored);
    EXPECT_EQ(a.requested_output_tokens, b.requested_output_tokens);
    EXPECT_EQ(a.blocks, b.blocks);
}

void expect_same_parts(const ConversationParts& a, const ConversationParts& b) {
    EXPECT_EQ(a.conversation_id, b.conversation_id);
    EXPECT_EQ(a.user_id, b.user_id);
    EXPECT_EQ(a.workflow_id, b.workflow_id);
    EXPECT_EQ(a.prior_spec_id, b.prior_spec_id);
    EXPECT_EQ(a.objective, b.objective);
    EXPECT_EQ(a.cache_main_objective, b.cache_main_objective);
    EXPECT_EQ(a.compactable, b.compactable);
    EXPECT_EQ(a.tools, b.tools);
    ASSERT_EQ(a.messages.size(), b.messages.size());
    for (std::size_t i = 0; i < a.messages.size(); ++i) {
        expect_same_message(a.messages[i], b.messages[i]);
    }
    EXPECT_EQ(a.artifacts, b.artifacts);
    EXPECT_EQ(a.grade, b.grade);
    EXPECT_EQ(a.depth, b.depth);
    EXPECT_EQ(a.output, b.output);
}

/// Parts holding all eleven block kinds, every message flag and every document field.
ConversationParts every_kind() {
    ConversationParts p;
    p.conversation_id = "c-1";
    p.user_id = "alice";
    p.workflow_id = "wf-7";
    p.prior_spec_id = "claude-sonnet-5-5";
    p.cache_main_objective = false;
    p.compactable = false;
    ToolDefinitionBlock search{"search", "Search the corpus.",
                               R"({"type":"object","properties":{"q":{"type":"string"}}})"};
    ToolDefinitionBlock fetch{"fetch", "Fetch a page.", R"({"type":"object","properties":{}})"};
    p.objective = {{"task", TextBlock{"Answer questions.\nCite sources."}},
                   {"tool:search", search}};
    p.tools = {
        {search, 0}, {fetch, 2}, {ToolDefinitionBlock{"later", "Not yet rendered.", R"({"type":"object"})"}, 3}};

    Message m1;
    m1.id = "m1";
    m1.cache = true;
    m1.compactable = false;
    m1.app_authored = true;
    m1.requested_output_tokens = 2048;
    m1.blocks = {TextBlock{"Hello \"quoted\" \u00e9\u4e2d"},
                 JsonBlock{R"({"a":[1,2.5,true,null],"b":{"c":"d"}})"},
                 PojoBlock{"Order", R"({"id":42})"},
                 ImageBlock{"image/png", "iVBORw0KGgo=", ""},
                 ImageBlock{"image/jpeg", "", "https://example.com/a.jpg"},
                 FileBlock{"application/pdf", "a.pdf", "JVBERi0=", ""},
                 FileBlock{"text/plain", "b.txt", "", "https://example.com/b.txt"},
                 SkillBlock{"review", "How to review."}};
    Message m2;
    m2.id = "m2";
    m2.direction = Direction::kIncoming;
    m2.blocks = {ThinkingBlock{"Let me think.", "sig"}, RedactedThinkingBlock{"b64data"},
                 ProviderBlock{"anthropic-messages", "compaction",
                               R"({"type":"compaction","content":"So far: x.","encrypted_content":null})"},
                 ToolUseBlock{"toolu_1", "search", R"({"q":"x"})"}};
    m2.provider_message_id = "msg_01";
    Message m3;
    m3.id = "m3";
    m3.blocks = {ToolResultBlock{
                     "toolu_1",
                     {TextBlock{"found"}, JsonBlock{"[1,2]"}, ImageBlock{"image/gif", "R0lG", ""},
                      FileBlock{"text/csv", "r.csv", "YSxi", ""}},
                     true},
                 TextBlock{"Additional tools now available: fetch"}, fetch};
    p.messages = {m1, m2, m3};
    p.artifacts.register_artifact("link:cite", R"({"url":"https://example.com"})");
    p.grade = Grade::kLarge;
    p.depth = Depth::kDeep;
    p.output = OutputDeclaration{OutputSize::kLong};
    return p;
}

// conversation.30: a round trip is lossless for every block kind — write, read, write.
TEST(Document, RoundTripOfEveryBlockKindIsByteIdenticalAndLossless) {
    const ConversationParts original = every_kind();
    const std::string first = write_conversation_parts(original);
    const ConversationParts back = read_conversation_parts(first);
    expect_same_parts(back, original);
    EXPECT_EQ(write_conversation_parts(back), first);
    // Compact layout round-trips as well, and reads to the same values.
    const std::string compact = write_conversation_parts(original, {.pretty = false});
    EXPECT_EQ(compact.find('\n'), std::string::npos);
    expect_same_parts(read_conversation_parts(compact), original);
}

TEST(Document, EveryBlockKindFixtureRoundTrips) {
    const ConversationParts parts = read_conversation_parts(fixture("every_block.json"));
    std::set<std::string> kinds;
    for (const Message& m : parts.messages) {
        for (const ContentBlock& b : m.blocks) {
            kinds.insert(block_type_name(b));
            if (const auto* r = b.get_if<ToolResultBlock>()) {
                for (const ContentBlock& c : r->content) kinds.insert(block_type_name(c));
            }
        }
    }
    EXPECT_EQ(kinds.size(), 11U);  // all but tool_definition, which lives in the tools list
    const std::string written = write_conversation_parts(parts);
    EXPECT_EQ(write_conversation_parts(read_conversation_parts(written)), written);
}

TEST(Document, WriteOrderIsFixedAndDefaultsAreWrittenOut) {
    ConversationParts p;
    p.conversation_id = "c";
    p.messages.push_back(Message::outgoing_text("hi"));
    p.messages[0].id = "m1";
    const std::string text = write_conversation_parts(p, {.pretty = false});
    EXPECT_EQ(text,
              R"({"schema_version":1,"conversation_id":"c","user_id":"","workflow_id":"",)"
              R"("objective":[],"cache_main_objective":true,"compactable":true,"tools":[],)"
              R"("messages":[{"id":"m1","direction":"outgoing","compactable":true,"cache":false,)"
              R"("app_authored":false,"blocks":[{"type":"text","text":"hi"}]}],"artifacts":[],)"
              R"("declarations":{},"prior_spec_id":null})");
}

TEST(Document, JsonValuedFieldsAreWrittenCanonically) {
    ConversationParts p;
    Message m;
    m.id = "m1";
    m.blocks = {JsonBlock{"{ \"a\" :  1.50 , \"b\": [ ] }"}};
    p.messages = {m};
    const std::string once = write_conversation_parts(p, {.pretty = false});
    EXPECT_NE(once.find(R"("json":{"a":1.5,"b":[]})"), std::string::npos) << once;
    EXPECT_EQ(write_conversation_parts(read_conversation_parts(once), {.pretty = false}), once);
}

TEST(Document, WritingAJsonFieldThatIsNotJsonIsRefusedWithItsPosition) {
    ConversationParts p;
    Message m;
    m.id = "m1";
    m.direction = Direction::kIncoming;
    m.blocks = {TextBlock{"ok"}, ToolUseBlock{"t1", "search", "{not json"}};
    p.messages = {m};
    try {
        (void)write_conversation_parts(p);
        FAIL() << "wrote invalid JSON";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
        EXPECT_EQ(std::string(e.what()).rfind("messages[0].blocks[1].input: not valid JSON", 0), 0U)
            << e.what();
    }
}

// docs/conversation-document.md: a minimal document (fields left out take their defaults:
// compactable true, cache false, app_authored false, cache_main_objective true).
TEST(Document, TheMinimalExampleReadsWithTheDefaultsApplied) {
    const ConversationParts p = read_conversation_parts(fixture("minimal.json"));
    EXPECT_EQ(p.conversation_id, "c-42");
    EXPECT_EQ(p.user_id, "alice");
    ASSERT_EQ(p.objective.size(), 1U);
    EXPECT_EQ(p.objective[0].key, "task");
    EXPECT_EQ(p.objective[0].value,
              ContentBlock(TextBlock{"Answer customer questions about their orders."}));
    EXPECT_TRUE(p.cache_main_objective);
    EXPECT_TRUE(p.compactable);
    ASSERT_EQ(p.tools.size(), 1U);
    EXPECT_EQ(p.tools[0].definition.name, "search_orders");
    EXPECT_EQ(p.tools[0].definition.schema_json,
              R"({"type":"object","properties":{"query":{"type":"string"}},"required":["query"]})");
    ASSERT_EQ(p.messages.size(), 3U);
    // m1 sets cache and compactable; the others take the defaults.
    EXPECT_TRUE(p.messages[0].cache);
    EXPECT_FALSE(p.messages[0].compactable);
    EXPECT_FALSE(p.messages[0].app_authored);
    for (std::size_t i : {1U, 2U}) {
        EXPECT_TRUE(p.messages[i].compactable) << i;
        EXPECT_FALSE(p.messages[i].cache) << i;
        EXPECT_FALSE(p.messages[i].app_authored) << i;
        EXPECT_FALSE(p.messages[i].requested_output_tokens) << i;
    }
    EXPECT_EQ(p.messages[1].direction, Direction::kIncoming);
    EXPECT_EQ(p.messages[1].blocks[0],
              ContentBlock(ToolUseBlock{"toolu_1", "search_orders", R"({"query":"42"})"}));
    const auto* result = p.messages[2].blocks[0].get_if<ToolResultBlock>();
    ASSERT_NE(result, nullptr);
    EXPECT_EQ(result->tool_use_id, "toolu_1");
    EXPECT_FALSE(result->is_error);
    EXPECT_EQ(result->content, std::vector<ContentBlock>{TextBlock{"Order 42 shipped on Monday."}});
    EXPECT_EQ(p.grade, Grade::kMedium);
    EXPECT_EQ(p.depth, Depth::kImmediate);
    EXPECT_EQ(p.output, OutputDeclaration{std::int64_t{1024}});
    EXPECT_FALSE(p.prior_spec_id);
    EXPECT_TRUE(p.artifacts.empty());
}

TEST(Document, UnknownFieldsAreIgnoredAtEveryLevel) {
    const std::string json = R"({"schema_version": 1, "future": {"x": 1}, "conversation_id": "c",
        "objective": [{"key": "task", "value": "v", "weight": 3}],
        "tools": [{"name": "t", "schema": {"type": "object"}, "color": "red"}],
        "messages": [{"id": "m1", "direction": "incoming", "mood": "happy",
                      "blocks": [{"type": "tool_use", "id": "u1", "name": "t", "input": {}, "extra": [1]}]},
                     {"id": "m2", "direction": "outgoing",
                      "blocks": [{"type": "tool_result", "tool_use_id": "u1", "cache_control": {},
                                  "content": [{"type": "text", "text": "r", "citations": []}]}]}],
        "declarations": {"grade": "SMALL", "temperature": 0.2}})";
    const ConversationParts p = read_conversation_parts(json);
    EXPECT_EQ(p.objective.size(), 1U);
    EXPECT_EQ(p.tools.size(), 1U);
    ASSERT_EQ(p.messages.size(), 2U);
    EXPECT_EQ(p.messages[1].blocks[0],
              ContentBlock(ToolResultBlock{"u1", {TextBlock{"r"}}, false}));
    EXPECT_EQ(p.grade, Grade::kSmall);
    EXPECT_EQ(write_conversation_parts(p).find("mood"), std::string::npos);
}

// conversation.31: an unknown role or block type is refused with the position named.
TEST(Document, AnUnknownBlockTypeIsRefusedNamingItAndItsPosition) {
    EXPECT_EQ(refusal(fixture("bad_block_type.json")),
              "messages[3].blocks[1].type: unknown block type \"video\"");
}

TEST(Document, AnUnknownBlockTypeInsideAToolResultIsRefusedWithItsPosition) {
    const std::string json = with_messages(
        R"({"id": "a", "direction": "incoming", "blocks": [{"type": "tool_use", "id": "u", "name": "t"}]},
           {"id": "b", "direction": "outgoing", "blocks": [{"type": "tool_result", "tool_use_id": "u",
             "content": [{"type": "text", "text": "x"}, {"type": "audio"}]}]})");
    EXPECT_EQ(refusal(json), "messages[1].blocks[0].content[1].type: unknown block type \"audio\"");
    const std::string nested = with_messages(
        R"({"id": "a", "direction": "incoming", "blocks": [{"type": "tool_use", "id": "u", "name": "t"}]},
           {"id": "b", "direction": "outgoing", "blocks": [{"type": "tool_result", "tool_use_id": "u",
             "content": [{"type": "thinking", "thinking": "x"}]}]})");
    EXPECT_EQ(
        refusal(nested).rfind("messages[1].blocks[0].content[0].type: block type \"thinking\" "
                              "is not allowed inside a tool_result",
                              0),
        0U);
}

TEST(Document, AnUnknownDirectionIsRefusedNamingItAndItsPosition) {
    const std::string json = with_messages(
        R"({"id": "a", "direction": "outgoing", "blocks": []},
           {"id": "b", "direction": "system", "blocks": [{"type": "text", "text": "x"}]})");
    EXPECT_EQ(refusal(json).rfind("messages[1].direction: unknown direction \"system\"", 0), 0U);
}

TEST(Document, ADuplicateMessageIdIsRefusedNamingBothPositions) {
    const std::string json = with_messages(
        R"({"id": "m1", "direction": "outgoing", "blocks": []},
           {"id": "m2", "direction": "incoming", "blocks": []},
           {"id": "m1", "direction": "outgoing", "blocks": []})");
    EXPECT_EQ(refusal(json), "messages[2].id: duplicate message id \"m1\" (first at messages[0])");
}

// conversation.4: a tool_result whose tool_use_id appears nowhere is refused with the position
// named, never silently relabelled or dropped.
TEST(Document, AToolResultWhoseToolUseIdAppearsNowhereIsRefusedWithItsPosition) {
    const std::string json = with_messages(
        R"({"id": "m1", "direction": "outgoing", "blocks": [{"type": "text", "text": "q"}]},
           {"id": "m2", "direction": "outgoing", "blocks": [{"type": "text", "text": "x"},
             {"type": "tool_result", "tool_use_id": "toolu_9", "content": []}]})");
    EXPECT_EQ(refusal(json),
              "messages[1].blocks[1].tool_use_id: tool_result answers \"toolu_9\", "
              "which no tool_use in the document carries");
}

// persistence.20: "Message restoration drops any tool_result whose tool_use
// id appears nowhere in the transcript" — the store-restore variant of the reader.
TEST(Document, TheRestoreVariantDropsOrphanToolResultsAndNamesThem) {
    const std::string json = R"({"schema_version": 1,
        "tools": [{"name": "t", "declared_at": 5}, {"name": "early", "declared_at": 1}],
        "messages": [
          {"id": "m1", "direction": "outgoing", "blocks": [{"type": "text", "text": "q"}]},
          {"id": "m2", "direction": "incoming", "blocks": [{"type": "tool_use", "id": "u1", "name": "t"}]},
          {"id": "m3", "direction": "outgoing", "blocks": [
             {"type": "tool_result", "tool_use_id": "u1", "content": []},
             {"type": "tool_result", "tool_use_id": "u9", "content": []}]},
          {"id": "m4", "direction": "outgoing", "blocks": [
             {"type": "tool_result", "tool_use_id": "u8", "content": []}]},
          {"id": "m5", "direction": "incoming", "blocks": [{"type": "text", "text": "a"}]}]})";
    EXPECT_EQ(refusal(json).rfind("messages[2].blocks[1].tool_use_id: ", 0), 0U);

    std::vector<std::string> dropped;
    const ConversationParts p = read_conversation_parts(json, &dropped);
    EXPECT_EQ(dropped, (std::vector<std::string>{"u9", "u8"}));
    std::vector<std::string> ids;
    for (const Message& m : p.messages) ids.push_back(m.id);
    // m4 held nothing but an orphan: an empty turn would be refused, so it goes too.
    EXPECT_EQ(ids, (std::vector<std::string>{"m1", "m2", "m3", "m5"}));
    EXPECT_EQ(p.messages[2].blocks, (std::vector<ContentBlock>{ToolResultBlock{"u1", {}, false}}));
    EXPECT_EQ(p.tools[0].declared_at, 4U);  // declared after the dropped message
    EXPECT_EQ(p.tools[1].declared_at, 1U);  // declared before it

    std::vector<std::string> none;
    (void)read_conversation_parts(fixture("minimal.json"), &none);
    EXPECT_TRUE(none.empty());
}

TEST(Document, MalformedJsonIsRefusedWithTheByteOffset) {
    const std::string json = R"({"schema_version": 1, "messages": [}])";
    const std::string offset = std::to_string(json.find('}', 2));  // the stray brace
    EXPECT_EQ(refusal(json).rfind("byte offset " + offset + ": ", 0), 0U) << refusal(json);
    EXPECT_EQ(refusal("").rfind("byte offset 0: ", 0), 0U);
}

TEST(Document, WrongTypesAreRefusedWithTheirPath) {
    EXPECT_EQ(refusal(with_messages(
                  R"({"id": "a", "direction": "outgoing", "cache": "yes", "blocks": []})")),
              "messages[0].cache: expected a boolean, found a string");
    EXPECT_EQ(refusal(with_messages(R"({"id": "a", "direction": "outgoing", "blocks": {}})")),
              "messages[0].blocks: expected an array, found an object");
    EXPECT_EQ(refusal(with_messages(R"({"id": "a", "direction": "outgoing",
                                        "blocks": [{"type": "text", "text": 7}]})")),
              "messages[0].blocks[0].text: expected a string, found an integer");
    EXPECT_EQ(refusal(with_messages(R"({"id": "a", "direction": "incoming",
                                        "blocks": [{"type": "tool_use", "id": "u", "name": "t", "input": []}]})")),
              "messages[0].blocks[0].input: expected an object, found an array");
    EXPECT_EQ(refusal(R"({"schema_version": 1, "objective": "task"})"),
              "objective: expected an array, found a string");
    EXPECT_EQ(refusal(R"({"schema_version": 1, "declarations": {"grade": "HUGE"}})"),
              "declarations.grade: unknown value \"HUGE\" (expected one of SMALL, MEDIUM, LARGE)");
    EXPECT_EQ(refusal(R"({"schema_version": 1, "declarations": {"output": {"tokens": -5}}})"),
              "declarations.output.tokens: expected a positive token count, found -5");
    EXPECT_EQ(refusal(R"([1, 2])"), "expected an object, found an array");
}

TEST(Document, MissingRequiredFieldsAreRefusedWithTheirPath) {
    EXPECT_EQ(refusal(with_messages(R"({"id": "a", "blocks": []})")),
              "messages[0].direction: missing (a string is required)");
    EXPECT_EQ(refusal(with_messages(R"({"id": "a", "direction": "outgoing"})")),
              "messages[0].blocks: missing (an array of blocks is required)");
    EXPECT_EQ(
        refusal(with_messages(R"({"id": "a", "direction": "outgoing",
                                        "blocks": [{"type": "image", "media_type": "image/png"}]})")),
        "messages[0].blocks[0]: carries neither \"data\" nor \"url\" (exactly one is required)");
}

// answers.110: a provider block names its wire family and holds an object with a type.
TEST(Document, AProviderBlockOffItsShapeIsRefusedWithItsPath) {
    const auto incoming = [](const std::string& block) {
        return with_messages(R"({"id": "a", "direction": "outgoing", "blocks": [{"type": "text", "text": "q"}]},
                                {"id": "b", "direction": "incoming", "blocks": [)" +
                             block + "]}");
    };
    EXPECT_EQ(refusal(incoming(R"({"type": "provider_block", "block": {"type": "compaction"}})")),
              "messages[1].blocks[0].wire_family: missing (a string is required)");
    EXPECT_EQ(refusal(incoming(R"({"type": "provider_block", "wire_family": "anthropic-messages"})")),
              "messages[1].blocks[0].block: missing (the provider's block, an object)");
    EXPECT_EQ(refusal(incoming(
                  R"({"type": "provider_block", "wire_family": "anthropic-messages", "block": [1]})")),
              "messages[1].blocks[0].block: expected an object, found an array");
    EXPECT_EQ(refusal(incoming(
                  R"({"type": "provider_block", "wire_family": "anthropic-messages", "block": {"content": "x"}})")),
              "messages[1].blocks[0].block.type: missing (a string is required)");
}

TEST(Document, AnUnsupportedSchemaVersionIsRefused) {
    EXPECT_EQ(refusal(R"({"schema_version": 2})"),
              "schema_version: unsupported version 2 (this build reads version 1)");
    EXPECT_EQ(refusal(R"({"conversation_id": "c"})"),
              "schema_version: missing (this build reads version 1)");
}

TEST(Document, DuplicateToolsAndObjectiveKeysAreRefusedNamingBothPositions) {
    EXPECT_EQ(
        refusal(R"({"schema_version": 1, "tools": [{"name": "a"}, {"name": "b"}, {"name": "a"}]})"),
        "tools[2].name: duplicate tool \"a\" (first at tools[0])");
    EXPECT_EQ(refusal(R"({"schema_version": 1, "objective": [{"key": "k", "value": "1"},
                                                             {"key": "k", "value": "2"}]})"),
              "objective[1].key: duplicate objective slot \"k\" (first at objective[0])");
}

TEST(Document, ABadArtifactIsRefusedWithItsPosition) {
    const std::string message = refusal(
        R"({"schema_version": 1, "artifacts": [{"ref": "not a ref", "type": "link", "value": {}}]})");
    EXPECT_EQ(message.rfind("artifacts[0]: ", 0), 0U) << message;
}

TEST(Document, ToolAnnouncementIsDerivedFromContentOnWrite) {
    const ConversationParts p = every_kind();
    const ConversationParts back = read_conversation_parts(write_conversation_parts(p));
    const std::string text = write_conversation_parts(p, {.pretty = false});
    // search sits in the head, fetch in message m3, later nowhere yet.
    EXPECT_NE(
        text.find(
            R"("name":"search","description":"Search the corpus.","schema":{"type":"object","properties":{"q":{"type":"string"}}},"declared_at":0,"announced_in":"head")"),
        std::string::npos)
        << text;
    EXPECT_NE(text.find(R"("declared_at":2,"announced_in":"m3")"), std::string::npos) << text;
    EXPECT_NE(
        text.find(
            R"("name":"later","description":"Not yet rendered.","schema":{"type":"object"},"declared_at":3})"),
        std::string::npos)
        << text;
}

// conversation.15: "The freeze is instance-lifetime and never persists: a restored conversation has
// not rendered, has no warm provider cache to lose, and composes freely until its own first
// render".
TEST(Document, TheFreezeIsNeverPersisted) {
    ConversationContext live = read_conversation_document(fixture("minimal.json"));
    (void)live.prepare_messages_for_llm(FixedContentFormatter(true, true), false);
    ASSERT_TRUE(live.frozen());
    const std::string text = write_conversation_document(live);
    EXPECT_EQ(text.find("frozen"), std::string::npos);

    ConversationContext restored = read_conversation_document(text);
    EXPECT_FALSE(restored.frozen());
    EXPECT_TRUE(restored.put_main_objective("task", std::string("A new task.")));
    EXPECT_TRUE(restored.put_main_objective("extra", std::string("Composes freely.")));
}

// tools.5: "The announced set derives from the conversation content itself, never a side field".
TEST(Document, AfterARenderTheDocumentSaysWhereEachToolWasAnnounced) {
    ConversationContext live = read_conversation_document(fixture("minimal.json"));
    ConversationParts before = read_conversation_parts(write_conversation_document(live));
    EXPECT_EQ(write_conversation_document(live, {.pretty = false}).find("announced_in"),
              std::string::npos);
    (void)live.prepare_messages_for_llm(FixedContentFormatter(true, true), false);
    const std::string after = write_conversation_document(live, {.pretty = false});
    // The fixture gives no declared_at: the tool counts as declared after its 3 messages.
    EXPECT_NE(after.find(R"("declared_at":3,"announced_in":"head")"), std::string::npos) << after;
    // What the render placed in the head round-trips as it stands.
    const ConversationParts back = read_conversation_parts(after);
    EXPECT_EQ(back.objective, live.main_objective());
    EXPECT_GT(back.objective.size(), before.objective.size());
    EXPECT_EQ(write_conversation_parts(back, {.pretty = false}), after);
}

TEST(Document, ContentBlocksReadAndWriteAlone) {
    const ContentBlock b = read_content_block(R"({"type":"skill","name":"s","content":"c"})");
    EXPECT_EQ(b, ContentBlock(SkillBlock{"s", "c"}));
    EXPECT_EQ(write_content_block(b), R"({"type":"skill","name":"s","content":"c"})");
    try {
        (void)read_content_block(R"({"type":"video"})", "input");
        FAIL();
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "input.type: unknown block type \"video\"");
    }
}

}  // namespace
}  // namespace nucleo
