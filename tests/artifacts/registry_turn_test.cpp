// The registry turn (artifacts.7, tokens.11): its
// exact header, its digest of a 200-iterand list, its place — last, user role, never system
// content, never moving the cached prefix — in the wire request of each provider encoder
// (anthropic, openai, bedrock plugins), and its token count on the string sent.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "artifact_types.hpp"
#include "nucleo/conversation.hpp"
#include "wire_marks.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/tokenizer.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo {
namespace {

using namespace artifact_test;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kHeader =
    "=== ARTIFACT REGISTRY ===\n"
    "Long text fields show summaries with original length. Use get_artifact_field(ref, "
    "fieldName) for full content.\n"
    "Use search_artifact_content(query) to search across all artifact text.\n";

ArtifactList<Citation> citations(int n) {
    ArtifactList<Citation> list;
    for (int i = 0; i < n; ++i) {
        list.items.push_back(Citation{"https://example.com/" + std::to_string(i),
                                      "Title " + std::to_string(i), long_text(500, "text")});
    }
    return list;
}

// artifacts.7: "=== ARTIFACT REGISTRY === / Long text fields show summaries with
// original length. Use get_artifact_field(ref, fieldName) for full content. / Use
// search_artifact_content(query) to search across all artifact text."
TEST(RegistryTurn, HeaderIsExactlyTheSeeds) {
    ArtifactRegistry registry;
    EXPECT_EQ(registry.build_artifact_registry_section(), "");
    const std::string ref = registry.register_artifact(Citation{"u", "t", "short"});
    EXPECT_EQ(registry.build_artifact_registry_section(),
              std::string(kHeader) + "\n" + ref + "\n" +
                  R"({"url":"u","title":"t","body":"short"})" + "\n");
}

// artifacts.7: a 200-iterand list contributes one digest entry (iterand_type, count, head sample),
// not 200 entries.
TEST(RegistryTurn, ATwoHundredIterandListIsOneDigestEntry) {
    ArtifactRegistry registry;
    const std::string ref = registry.register_artifact(citations(200));
    const std::string section = registry.build_artifact_registry_section();
    const std::size_t refs = [&] {
        std::size_t n = 0;
        for (std::size_t pos = 0; (pos = section.find("\xC2\xAB", pos)) != std::string::npos;
             ++pos) {
            ++n;
        }
        return n;
    }();
    EXPECT_EQ(refs, 1U + ArtifactRegistry::kDigestHead) << "the list's ref and its head sample";
    const std::string body = section.substr(section.find(ref) + ref.size() + 1);
    rapidjson::Document digest;
    digest.Parse(body.data(), body.size() - 1);
    ASSERT_FALSE(digest.HasParseError()) << body;
    EXPECT_STREQ(digest["iterand_type"].GetString(), "link:cite");
    EXPECT_EQ(digest["count"].GetUint(), 200U);
    ASSERT_EQ(digest["head"].Size(), ArtifactRegistry::kDigestHead);
    EXPECT_EQ(std::string(digest["head"][0]["@ref"].GetString()), registry.get(ref)->nested[0]);
    EXPECT_THAT(std::string(digest["head"][0]["body"].GetString()),
                HasSubstr("[SUMMARY: 500 chars]"));
    EXPECT_THAT(section, Not(HasSubstr("example.com/3\"")));
}

// tokens.11: the registry section is counted on the string prepare_messages_for_llm would
// send.
TEST(RegistryTurn, TheCountMeasuresTheStringSent) {
    ConversationContext c("c", "u");
    Message m = Message::outgoing_text("results");
    SearchResult r;
    r.list = citations(20);
    m.blocks.push_back(pojo_block(r));
    c.add_message(m);
    TokenCounter counter(Tokenizer::get("o200k_base"));
    const std::int64_t counted = counter.breakdown(c).artifacts;  // before any render
    const PreparedConversation p =
        c.prepare_messages_for_llm(FixedContentFormatter(true, true), false);
    // wire.191: the registry rides the last outgoing turn, its last block (no turn of its own).
    const std::string& sent = p.turns.back().blocks.back().get_if<TextBlock>()->text;
    ASSERT_TRUE(sent.starts_with(kHeader));
    EXPECT_EQ(counted, counter.count_text(sent));
    // Sent, it stays on that turn and is counted there once: the next call adds no second copy.
    EXPECT_EQ(counter.breakdown(c).artifacts, counted);
}

// tokens.101: a PojoBlock is counted on the string write_summarized_with_refs sends (each
// artifact as its reference), before any render and after it, not on its raw JSON.
TEST(RegistryTurn, APojoIsCountedOnTheStringSent) {
    ConversationContext c("c", "u");
    Message m = Message::outgoing_text("results");
    m.id = "m1";
    SearchResult r;
    r.list = citations(200);
    for (auto& cite : r.list->items) cite.body = long_text(4000, "text");
    m.blocks.push_back(pojo_block(r));
    c.add_message(m);
    TokenCounter counter(Tokenizer::get("o200k_base"));
    const std::int64_t before_render = counter.breakdown(c).per_message.front();
    const PreparedConversation p =
        c.prepare_messages_for_llm(FixedContentFormatter(true, true), false);
    std::int64_t sent = TokenArithmetic::kMessageOverheadTokens;
    for (const PreparedTurn& turn : p.turns) {
        if (turn.message_id != "m1") continue;
        for (const ContentBlock& b : turn.blocks) {
            const auto* t = b.get_if<TextBlock>();
            if (t != nullptr && t->text.starts_with(kHeader)) continue;  // the registry riding it
            if (t != nullptr) sent += counter.count_text(t->text);
            if (const auto* j = b.get_if<JsonBlock>()) sent += counter.count_text(j->json);
        }
    }
    EXPECT_EQ(before_render, sent);
    counter.clear_cache();
    EXPECT_EQ(counter.breakdown(c).per_message.front(), sent);
    // The raw JSON is 200 bodies of 4,000 characters: far more than what is sent.
    EXPECT_LT(sent * 10, counter.count_text(
                             c.messages().front().blocks.back().get_if<PojoBlock>()->value_json));
}

// tokens.101: a PojoBlock in the objective is counted on the string the render puts in the
// system content, as one in a message is, not on its raw JSON.
TEST(RegistryTurn, AnObjectivePojoIsCountedOnTheStringSent) {
    ConversationContext c("c", "u");
    SearchResult r;
    r.list = citations(200);
    for (auto& cite : r.list->items) cite.body = long_text(4000, "text");
    c.put_main_objective("data", pojo_block(r));
    TokenCounter counter(Tokenizer::get("o200k_base"));
    const std::int64_t before_render = counter.breakdown(c).objective;
    const PreparedConversation p =
        c.prepare_messages_for_llm(FixedContentFormatter(true, true), false);
    // The pojo is sent as the one JSON block of the system content (the render also adds the
    // tool-weight guidance as text, for the artifact tools the registered artifacts declare).
    std::int64_t sent = 0;
    for (const ContentBlock& b : p.system_blocks) {
        if (const auto* j = b.get_if<JsonBlock>()) sent += counter.count_text(j->json);
    }
    ASSERT_GT(sent, 0);
    EXPECT_EQ(before_render, sent);
    EXPECT_LT(sent * 10,
              counter.count_text(c.main_objective().front().value.get_if<PojoBlock>()->value_json));
}

TEST(RegistryTurn, ConcurrentConstReadersBuildOneSection) {
    // TokenCounter counts one const conversation from several threads: the summary caches the
    // first render fills are shared by those readers.
    ArtifactRegistry registry;
    for (int i = 0; i < 20; ++i) {
        registry.register_artifact(Citation{"u" + std::to_string(i), "t", long_text(900)});
    }
    const ArtifactRegistry& reader = registry;
    std::vector<std::string> got(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < got.size(); ++t) {
        threads.emplace_back([&, t] { got[t] = reader.build_artifact_registry_section(); });
    }
    for (auto& th : threads) th.join();
    for (const std::string& g : got) EXPECT_EQ(g, got.front());
    EXPECT_THAT(got.front(), HasSubstr("[SUMMARY: 900 chars]"));
}

// ---- the place of the turn in each provider's wire request ----

ModelSpec model_for(const std::string& provider) {
    ModelSpec m;
    m.id = provider + "-test";
    m.provider = provider;
    m.wire_model = provider == "anthropic" ? "claude-sonnet-5-5"
                   : provider == "openai"  ? "gpt-4o"
                                           : "anthropic.claude-3-5-sonnet-20241022-v2:0";
    m.max_context_tokens = 200000;
    m.max_output_tokens = 4096;
    m.output_budget = {{OutputSize::kShort, 1024}};
    m.supports_caching = provider != "openai";
    m.native_tools = provider != "bedrock";
    m.token_counter = "o200k_base";
    return m;
}

ProviderClient client_for(const std::string& plugin) {
    ProviderConfig config;
    config.name = plugin;
    config.plugin = plugin;
    config.base_url = "http://127.0.0.1:9";
    config.credentials.api_key = "sk-test";
    config.credentials.access_key_id = "AKIDTEST";
    config.credentials.secret_access_key = "secret";
    config.credentials.region = "us-east-1";
    return {config, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load(plugin).make_provider(), {}};
}

ConversationContext conversation() {
    ConversationContext c("c", "u");
    c.put_main_objective("task", "Answer with citations.");
    c.set_output(OutputSize::kShort);
    c.set_depth(Depth::kImmediate);
    Message ask = Message::outgoing_text("What do the sources say?");
    ask.cache = true;
    c.add_message(ask);
    Message use;
    use.direction = Direction::kIncoming;
    use.blocks = {ToolUseBlock{"toolu_1", "search", R"({"q":"sources"})"}};
    c.add_message(use);
    SearchResult r;
    r.query = "sources";
    r.sections = {Section{"found", {Citation{"https://a", "A", long_text(800, "alpha")}}}};
    r.list = citations(200);
    Message result;
    result.blocks = {ToolResultBlock{"toolu_1", {pojo_block(r)}, false}};
    result.cache = true;
    c.add_message(result);
    return c;
}

std::string compact(const rapidjson::Value& v) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    v.Accept(w);
    return {b.GetString(), b.GetSize()};
}

/// The wire's messages array and its system content, whatever the dialect's layout.
struct Wire {
    rapidjson::Document body;
    std::string system;
    const rapidjson::Value* messages = nullptr;
};

Wire wire(const std::string& provider, ConversationContext& c) {
    Wire w;
    const HttpRequest req = client_for(provider).build_request(c, model_for(provider));
    w.body.Parse(req.body.data(), req.body.size());
    EXPECT_FALSE(w.body.HasParseError()) << req.body.str().substr(0, 200);
    w.messages = &w.body["messages"];
    if (provider == "openai") {
        // A leading system message carries the objective.
        EXPECT_STREQ((*w.messages)[0]["role"].GetString(), "system");
        w.system = compact((*w.messages)[0]);
    } else {
        w.system = compact(w.body["system"]);
    }
    return w;
}

/// The text of the last text part of a wire message (string content or a list of parts; a
/// Converse cachePoint after it is passed over).
std::string last_text(const rapidjson::Value& message) {
    const rapidjson::Value& content = message["content"];
    if (content.IsString()) return content.GetString();
    for (rapidjson::SizeType i = content.Size(); i-- > 0;) {
        if (content[i].HasMember("text")) return content[i]["text"].GetString();
    }
    return {};
}

/// A wire message without its cache marks (cache_control, prompt_cache_breakpoint, cachePoint).
std::string unmarked(const rapidjson::Value& message) {
    rapidjson::Document d;
    d.CopyFrom(message, d.GetAllocator());
    test_support::strip_cache_marks(d);
    return compact(d);
}

class RegistryTurnOnTheWire : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override {
        const std::string file =
            std::string(NUCLEO_BUILD_PLUGIN_DIR) + "/nucleo-" + GetParam() + ".so";
        ASSERT_TRUE(std::filesystem::exists(file)) << "build the " << GetParam() << " plugin";
    }
};

// channel.9 with wire.191: the artifact registry rides the last user turn of the call in which
// it changed, because it is data: never in the system content; it stays on that turn, so the
// next call sends every message of this one again byte for byte (cache marks aside).
TEST_P(RegistryTurnOnTheWire, LastUserTurnNeverSystemNeverMovingThePrefix) {
    ConversationContext c = conversation();
    Wire first = wire(GetParam(), c);
    const rapidjson::Value& messages = *first.messages;
    const rapidjson::Value& last = messages[messages.Size() - 1];
    EXPECT_STREQ(last["role"].GetString(), "user");
    const std::string text = last_text(last);
    EXPECT_TRUE(text.starts_with(kHeader)) << text.substr(0, 120);
    EXPECT_THAT(text, HasSubstr("\"count\":200"));
    EXPECT_THAT(first.system, Not(HasSubstr("=== ARTIFACT REGISTRY ===")));
    EXPECT_THAT(first.system, HasSubstr("Answer with citations."));

    // The next call: an answer, a new question with a new artifact. Every message of the first
    // call, its registry included, is sent again byte for byte; the changed registry rides the
    // new question.
    c.add_message(Message::incoming_text("Here is what they say."));
    Message more = Message::outgoing_text("And this one?");
    more.blocks.push_back(pojo_block(
        SearchResult{"more", "", {Section{"x", {Citation{"https://b", "B", "b"}}}}, {}, {}}));
    c.add_message(more);
    Wire second = wire(GetParam(), c);
    EXPECT_EQ(second.system, first.system);
    const rapidjson::Value& again = *second.messages;
    const std::string second_last = last_text(again[again.Size() - 1]);
    EXPECT_TRUE(second_last.starts_with(kHeader));
    EXPECT_THAT(second_last, HasSubstr("https://b"));
    ASSERT_GT(again.Size(), messages.Size());
    for (rapidjson::SizeType i = 0; i < messages.Size(); ++i) {
        EXPECT_EQ(unmarked(again[i]), unmarked(messages[i])) << "message " << i;
    }
    EXPECT_THAT(unmarked(again[messages.Size() - 1]), HasSubstr("=== ARTIFACT REGISTRY ==="))
        << "the first call's registry stays where it was sent";
}

INSTANTIATE_TEST_SUITE_P(Dialects, RegistryTurnOnTheWire,
                         ::testing::Values("anthropic", "openai", "bedrock"));

}  // namespace
}  // namespace nucleo
