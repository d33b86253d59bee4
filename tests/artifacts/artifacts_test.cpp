// Typed artifacts, the registry's tiers, write_summarized_with_refs and the artifact tools
// (artifacts.1-9).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include <rapidjson/document.h>

#include "artifact_types.hpp"
#include "nucleo/config.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo {
namespace {

using namespace artifact_test;
using ::testing::HasSubstr;
using ::testing::Not;

const std::regex kRef(
    "\xC2\xAB"
    "artifact:[a-z:]+~[0-9a-f]{6,}\xC2\xBB");

Citation citation(int i, std::size_t body = 40) {
    return Citation{"https://example.com/" + std::to_string(i), "Title " + std::to_string(i),
                    long_text(body, "word" + std::to_string(i))};
}

ArtifactList<Citation> citations(int n, std::size_t body = 40) {
    ArtifactList<Citation> list;
    for (int i = 0; i < n; ++i) list.items.push_back(citation(i, body));
    return list;
}

rapidjson::Document parse(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    EXPECT_FALSE(doc.HasParseError()) << json;
    return doc;
}

ToolResultBlock call(const ArtifactRegistry& registry, std::string_view tool, std::string input) {
    const auto result = answer_artifact_tool(
        registry, ToolUseBlock{"toolu_1", std::string(tool), std::move(input)});
    EXPECT_TRUE(result.has_value());
    return result.value_or(ToolResultBlock{});
}

std::string text_of(const ToolResultBlock& r) {
    return r.content.empty() ? "" : r.content.front().get_if<TextBlock>()->text;
}

// ---- 1. Typed artifacts ----

// artifacts.1: a C++ way to declare an artifact type with a type alias (e.g. link:cite) and
// described fields (the schema facility).
TEST(ArtifactTypes, ADeclaredTypeCarriesItsAliasAndItsDescribedFields) {
    const schema::TypeNode& node = schema::node_of<Citation>();
    EXPECT_EQ(node.artifact_alias, "link:cite");
    ASSERT_EQ(node.fields.size(), 3U);
    EXPECT_TRUE(node.fields[2].summarizable);
    EXPECT_FALSE(node.fields[0].summarizable);
    // The JSON carries the marker one pass discovers it by; the schema facility's JSON Schema
    // is unchanged.
    EXPECT_EQ(schema::to_json(Citation{"u", "t", "b"}),
              R"({"@artifact":"link:cite","url":"u","title":"t","body":"b"})");
    EXPECT_THAT(schema::json_schema<Citation>(), Not(HasSubstr("@artifact")));
}

// artifacts.2: deserialization goes by the alias through a type registry; an unknown alias fails
// the read with the alias named.
TEST(ArtifactTypes, DeserializationGoesByAliasAndAnUnknownAliasIsNamed) {
    declare_artifact_type<Paper>();
    EXPECT_EQ(ArtifactTypes::find("doc:paper"), &schema::node_of<Paper>());
    // Declaring a type declares the artifact types nested in its fields.
    EXPECT_EQ(ArtifactTypes::find("person:author"), &schema::node_of<Author>());
    EXPECT_NE(ArtifactTypes::find("list"), nullptr);
    try {
        ArtifactTypes::resolve("ghost:type", "artifacts[0]");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
        EXPECT_THAT(e.what(), HasSubstr("'ghost:type'"));
        EXPECT_THAT(e.what(), HasSubstr("artifacts[0]"));
    }
}

TEST(ArtifactTypes, ARegisteredArtifactReadsBackAsItsCppType) {
    ArtifactRegistry registry;
    const Paper paper{"On refs", Author{"Ada"}, "short"};
    const std::string ref = registry.register_artifact(paper);
    const Paper back = registry.get_as<Paper>(ref);
    EXPECT_EQ(back.title, "On refs");
    EXPECT_EQ(back.author, Author{"Ada"});
    EXPECT_THROW(registry.get_as<Citation>(ref), Error);  // another type
    try {
        (void)registry.get_as<Paper>("«artifact:doc:paper~000000»");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
        EXPECT_THAT(e.what(), HasSubstr("«artifact:doc:paper~000000»"));
    }
}

// artifacts.1, artifacts.2: list artifacts of a declared iterand type.
TEST(ArtifactTypes, AListOfADeclaredIterandTypeRefusesAForeignIterand) {
    ArtifactRegistry registry;
    const std::string ref = registry.register_artifact(citations(3));
    EXPECT_THAT(ref, HasSubstr("artifact:list~"));
    EXPECT_EQ(registry.get_as<ArtifactList<Citation>>(ref).items, citations(3).items);
    try {
        registry.register_artifact(
            "list",
            R"({"iterand_type":"link:cite","items":[{"@artifact":"person:author","name":"x"}]})");
        FAIL();
    } catch (const Error& e) {
        EXPECT_THAT(e.what(), HasSubstr("items[0]"));
        EXPECT_THAT(e.what(), HasSubstr("'person:author'"));
    }
}

// ---- 2. The registry tiers ----

// artifacts.3: the reference format «artifact:type~shortid»; registering assigns a short,
// stable reference.
TEST(ArtifactRegistryTiers, RegisteringAssignsAStableReferenceInTheSeedFormat) {
    ArtifactRegistry a;
    ArtifactRegistry b;
    const std::string ref = a.register_artifact(citation(1));
    EXPECT_TRUE(std::regex_match(ref, std::regex("\xC2\xAB"
                                                 "artifact:link:cite~[0-9a-f]{6}\xC2\xBB")))
        << ref;
    b.register_artifact(citation(2));
    EXPECT_EQ(b.register_artifact(citation(1)), ref) << "content, not order, makes the reference";
}

// artifacts.5: all_artifacts() excludes the reachable tier - iterands of registered list
// artifacts, artifacts nested in registered artifacts' fields ... Reachable artifacts remain
// resolvable by ref (get()) and searchable (all_artifacts_including_reachable()).
TEST(ArtifactRegistryTiers, GetResolvesEveryTierAndAllArtifactsExcludesTheReachableOne) {
    ArtifactRegistry registry;
    const std::string paper = registry.register_artifact(Paper{"T", Author{"Ada"}, "a"});
    const std::string list = registry.register_artifact(citations(200));
    ASSERT_EQ(registry.all_artifacts().size(), 2U);
    EXPECT_EQ(registry.all_artifacts()[0].ref, paper);
    EXPECT_EQ(registry.all_artifacts()[1].ref, list);
    EXPECT_EQ(registry.all_artifacts_including_reachable().size(), 2U + 1U + 200U);

    const Artifact* p = registry.get(paper);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(p->nested.size(), 1U);
    const Artifact* author = registry.get(p->nested[0]);
    ASSERT_NE(author, nullptr);
    EXPECT_EQ(author->type, "person:author");
    EXPECT_TRUE(registry.reachable(author->ref));
    const Artifact* l = registry.get(list);
    ASSERT_EQ(l->nested.size(), 200U);
    EXPECT_EQ(registry.get_as<Citation>(l->nested[199]), citation(199));

    // Registered on its own, a reachable artifact joins the registered tier. (Pointers from
    // get() last until the next registration: keep references, not pointers.)
    const std::string author_ref = author->ref;
    const std::string iterand_ref = l->nested[150];
    EXPECT_EQ(registry.register_artifact(Author{"Ada"}), author_ref);
    EXPECT_FALSE(registry.reachable(author_ref));
    EXPECT_EQ(registry.get(author_ref)->type, "person:author");
    EXPECT_EQ(registry.all_artifacts().size(), 3U);
    EXPECT_NE(registry.get(iterand_ref), nullptr) << "the index survives the move";
}

TEST(ArtifactRegistryTiers, SearchCoversEveryTierUnderEachArtifactsOwnReference) {
    ArtifactRegistry registry;
    ArtifactList<Citation> list = citations(50);
    list.items[37].body = "the NEEDLE sits in iterand 37";
    const std::string ref = registry.register_artifact(list);
    const auto matches = registry.search("needle");
    ASSERT_EQ(matches.size(), 1U);
    EXPECT_EQ(matches[0].ref, registry.get(ref)->nested[37]);
    EXPECT_EQ(matches[0].field, "body");
    EXPECT_THAT(matches[0].excerpt, HasSubstr("NEEDLE"));
    EXPECT_TRUE(registry.search("absent words").empty());
}

// ---- 3. write_summarized_with_refs ----

SearchResult deep_result() {
    SearchResult r;
    r.query = "refs";
    r.notes = long_text(900, "note");
    r.sections = {Section{"intro", {citation(1), citation(2)}},
                  Section{"body", {citation(3, 2000)}}};
    r.paper = Paper{"Deep", Author{"Grace"}, long_text(1200, "abstract")};
    r.list = citations(200, 600);
    return r;
}

// artifacts.4, artifacts.6: discovers artifact fields, registers them in the registry, assigns
// references, replaces artifact fields with {"@ref": "..."} — at any depth.
TEST(WriteSummarizedWithRefs, EveryArtifactAtAnyDepthBecomesARef) {
    ArtifactRegistry registry;
    const JsonBlock out = registry.write_summarized_with_refs(pojo_block(deep_result()));
    const rapidjson::Document doc = parse(out.json);
    EXPECT_EQ(out.json.find("@artifact"), std::string::npos) << out.json;
    const auto& source = doc["sections"][1]["sources"][0];
    ASSERT_TRUE(source.IsObject());
    ASSERT_EQ(source.MemberCount(), 1U);
    const std::string ref = source["@ref"].GetString();
    EXPECT_TRUE(std::regex_match(ref, kRef)) << ref;
    EXPECT_EQ(registry.get_as<Citation>(ref), citation(3, 2000)) << "the data travels intact";
    EXPECT_EQ(std::string(doc["paper"]["@ref"].GetString()).find("artifact:doc:paper~"), 2U);
    EXPECT_TRUE(doc["list"].HasMember("@ref"));
    // Three citations, the paper and the list are registered; the author and the iterands are
    // reachable through them.
    EXPECT_EQ(registry.all_artifacts().size(), 5U);
    EXPECT_EQ(registry.all_artifacts_including_reachable().size(), 5U + 1U + 200U);
}

// artifacts.6, artifacts.8: long summarizable fields become "[SUMMARY: 2847 chars] This
// comprehensive study..." and subsequent calls reuse cached summaries.
TEST(WriteSummarizedWithRefs, LongSummarizableFieldsGetALengthPrefixedSummaryCachedPerArtifact) {
    auto summarizer = std::make_shared<CountingSummarizer>();
    ArtifactRegistry registry;
    registry.set_summarizer(summarizer);
    const PojoBlock pojo = pojo_block(deep_result());
    const JsonBlock first = registry.write_summarized_with_refs(pojo);
    const rapidjson::Document doc = parse(first.json);
    EXPECT_EQ(std::string(doc["notes"].GetString()),
              "[SUMMARY: 900 chars] summary of 900 bytes to " +
                  std::to_string(ArtifactRegistry::kSummaryTarget));
    EXPECT_EQ(summarizer->calls, 1) << "only the block's own field: artifacts are refs here";

    // The registry turn summarizes the artifacts' long fields: the 2000-char citation, the
    // paper's abstract and the list digest's head (3 iterands of 600 chars).
    const std::string section = registry.build_artifact_registry_section();
    EXPECT_THAT(section, HasSubstr("\"body\":\"[SUMMARY: 2000 chars] summary of 2000 bytes"));
    EXPECT_THAT(section, HasSubstr("\"abstract\":\"[SUMMARY: 1200 chars] "));
    EXPECT_THAT(section, HasSubstr("\"body\":\"word1 word1"));  // 40 chars: not summarized
    EXPECT_THAT(section, Not(HasSubstr(long_text(2000, "word3"))));
    const int after_first_render = summarizer->calls;
    EXPECT_EQ(after_first_render, 1 + 1 + 1 + 3);

    // The second render costs no summarizer call.
    EXPECT_EQ(registry.write_summarized_with_refs(pojo), first);
    ArtifactRegistry copy = registry;  // a copy keeps the caches too
    EXPECT_EQ(copy.build_artifact_registry_section(), section);
    for (const Artifact& a : registry.all_artifacts()) (void)registry.write_summarized(a);
    EXPECT_EQ(summarizer->calls, after_first_render);
}

TEST(WriteSummarizedWithRefs, TheDefaultSummarizerTruncatesDeterministicallyAtAWord) {
    ArtifactRegistry registry;  // no summarizer set: TruncatingSummarizer
    const std::string ref = registry.register_artifact(citation(7, 1000));
    const std::string& summarized = registry.write_summarized(*registry.get(ref));
    const rapidjson::Document doc = parse(summarized);
    const std::string body = doc["body"].GetString();
    EXPECT_TRUE(body.starts_with("[SUMMARY: 1000 chars] word7 word7")) << body;
    EXPECT_TRUE(body.ends_with("word7...")) << body;
    EXPECT_LE(body.size(),
              std::string("[SUMMARY: 1000 chars] ").size() + ArtifactRegistry::kSummaryTarget + 3);
    EXPECT_FALSE(doc.HasMember("@artifact")) << "the reference names the type";
}

// artifacts.8, a decision: the configured summarizer plugin when there is one, else the
// deterministic truncating summarizer.
TEST(WriteSummarizedWithRefs, TheDefaultIsTheConfiguredSummarizerPluginElseTruncation) {
    const PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
    const auto none = default_artifact_summarizer(Config::parse("{}\n", "nucleo.yaml"), loader);
    EXPECT_NE(dynamic_cast<const TruncatingSummarizer*>(none.get()), nullptr);

    const auto plugin = default_artifact_summarizer(
        Config::parse("summarizer: {plugin: extractive}\n", "nucleo.yaml"), loader);
    ASSERT_EQ(dynamic_cast<const TruncatingSummarizer*>(plugin.get()), nullptr);
    ArtifactRegistry registry;
    registry.set_summarizer(plugin);
    std::string body;
    for (int i = 0; i < 30; ++i) {
        body += "Sentence " + std::to_string(i) + " reports a distinct finding about caching. ";
    }
    const std::string ref = registry.register_artifact(Citation{"u", "t", body});
    const rapidjson::Document doc = parse(registry.write_summarized(*registry.get(ref)));
    const std::string summary = doc["body"].GetString();
    const std::string prefix = "[SUMMARY: " + std::to_string(body.size()) + " chars] ";
    ASSERT_TRUE(summary.starts_with(prefix)) << summary;
    EXPECT_GT(summary.size(), prefix.size());
    EXPECT_LT(summary.size(), body.size());
}

TEST(WriteSummarizedWithRefs, ABlockWithoutArtifactsOrSummarizableFieldsPassesAsItIs) {
    ArtifactRegistry registry;
    const PojoBlock plain{"Anything", R"({"a":[1,2,{"b":"c"}]})"};
    EXPECT_EQ(registry.write_summarized_with_refs(plain).json, plain.value_json);
    EXPECT_TRUE(registry.empty());
    EXPECT_THROW(registry.write_summarized_with_refs(PojoBlock{"X", R"({"@artifact":"x", oops})"}),
                 Error);
}

// channel.7: PojoBlocks become JsonBlocks this way in prepare_messages_for_llm.
TEST(WriteSummarizedWithRefs, PrepareTurnsPojoBlocksIntoJsonBlocksWithRefs) {
    ConversationContext c("c", "u");
    c.add_message(Message::outgoing_text("find refs"));
    Message m;
    m.direction = Direction::kIncoming;
    m.blocks = {ToolUseBlock{"toolu_1", "search", R"({"q":"refs"})"}};
    c.add_message(m);
    Message result;
    result.blocks = {ToolResultBlock{"toolu_1", {pojo_block(deep_result())}, false}};
    c.add_message(result);
    // Registered as the message arrived, before any render.
    EXPECT_EQ(c.artifacts().size(), 5U);
    const PreparedConversation p =
        c.prepare_messages_for_llm(FixedContentFormatter(true, true), false);
    const auto* r = p.turns[2].blocks[0].get_if<ToolResultBlock>();
    ASSERT_NE(r, nullptr);
    const auto* json = r->content[0].get_if<JsonBlock>();
    ASSERT_NE(json, nullptr);
    EXPECT_THAT(json->json, HasSubstr("\"@ref\":\"\xC2\xAB"
                                      "artifact:link:cite~"));
    EXPECT_THAT(json->json, HasSubstr("[SUMMARY: 900 chars]"));
}

// A warm render reuses a message's rendered PojoBlocks; a new summarizer is seen at once.
TEST(WriteSummarizedWithRefs, ANewSummarizerIsUsedByTheNextRender) {
    ConversationContext c("c", "u");
    Message m = Message::outgoing_text("results");
    m.blocks.push_back(pojo_block(deep_result()));
    c.add_message(m);
    const FixedContentFormatter native(true, true);
    auto notes = [&c, &native] {
        const PreparedConversation p = c.prepare_messages_for_llm(native, false);
        const rapidjson::Document doc = parse(p.turns[0].blocks[1].get_if<JsonBlock>()->json);
        return std::string(doc["notes"].GetString());
    };
    EXPECT_THAT(notes(), HasSubstr("[SUMMARY: 900 chars] note note"));
    EXPECT_EQ(notes(), notes());
    auto summarizer = std::make_shared<CountingSummarizer>();
    c.artifacts().set_summarizer(summarizer);
    EXPECT_THAT(notes(), HasSubstr("[SUMMARY: 900 chars] summary of 900 bytes"));
    const int calls = summarizer->calls;
    (void)notes();
    EXPECT_EQ(summarizer->calls, calls) << "the second render makes no summarizer call";
}

// ---- 5. The artifact tools ----

// artifacts.9: the two tools answer from intact data after the model saw only summaries.
TEST(ArtifactTools, GetArtifactFieldAnswersTheFullValueTheModelSawOnlySummarized) {
    ConversationContext c("c", "u");
    Message m = Message::outgoing_text("here");
    m.blocks.push_back(pojo_block(deep_result()));
    c.add_message(m);
    const PreparedConversation p =
        c.prepare_messages_for_llm(FixedContentFormatter(true, true), false);
    const std::string registry_text =
        p.turns.back().blocks.back().get_if<TextBlock>()->text;  // wire.191: it rides the last turn
    const std::string full = long_text(2000, "word3");
    EXPECT_THAT(registry_text, Not(HasSubstr(full)));
    // Declared, with schemas from the facility.
    std::vector<std::string> names;
    for (const ToolDefinitionBlock& t : p.tool_definitions) names.push_back(t.name);
    EXPECT_THAT(names, ::testing::ElementsAre("get_artifact_field", "search_artifact_content"));
    EXPECT_EQ(
        p.tool_definitions[0].schema_json,
        R"({"type":"object","properties":{"ref":{"type":"string","description":"The artifact's reference, exactly as shown: «artifact:TYPE~ID»"},"field_name":{"type":"string","description":"The field whose full value to return"}},"required":["ref","field_name"]})");

    std::string ref;
    for (const Artifact& a : c.artifacts().all_artifacts()) {
        if (a.value_json.find(full) != std::string::npos) ref = a.ref;
    }
    ASSERT_FALSE(ref.empty());
    EXPECT_THAT(registry_text, HasSubstr(ref));
    const ToolResultBlock r = call(c.artifacts(), kGetArtifactFieldTool,
                                   R"({"ref":")" + ref + R"(","field_name":"body"})");
    EXPECT_FALSE(r.is_error);
    EXPECT_EQ(r.tool_use_id, "toolu_1");
    EXPECT_EQ(text_of(r), full);

    const ToolResultBlock s =
        call(c.artifacts(), kSearchArtifactContentTool, R"({"query":"WORD199"})");
    EXPECT_FALSE(s.is_error);
    const rapidjson::Document hits = parse(text_of(s));
    ASSERT_TRUE(hits.IsArray());
    ASSERT_EQ(hits.Size(), 1U) << text_of(s);
    EXPECT_TRUE(c.artifacts().reachable(hits[0]["ref"].GetString())) << "an iterand was found";
    EXPECT_EQ(answer_artifact_tool(c.artifacts(), ToolUseBlock{"t", "other_tool", "{}"}),
              std::nullopt);
}

// artifacts.9, bad input: a reference that resolves to nothing gets an error result naming the
// reference, never an empty success; a field name that the artifact lacks gets an error listing
// the fields it has.
TEST(ArtifactTools, BadReferencesAndMissingFieldsAnswerErrorsThatSayWhat) {
    ArtifactRegistry registry;
    const std::string ref = registry.register_artifact(citation(1));
    const ToolResultBlock missing =
        call(registry, kGetArtifactFieldTool,
             R"({"ref":"«artifact:link:cite~ffffff»","field_name":"body"})");
    EXPECT_TRUE(missing.is_error);
    EXPECT_THAT(text_of(missing), HasSubstr("'«artifact:link:cite~ffffff»'"));

    const ToolResultBlock no_field =
        call(registry, kGetArtifactFieldTool, R"({"ref":")" + ref + R"(","field_name":"author"})");
    EXPECT_TRUE(no_field.is_error);
    EXPECT_THAT(text_of(no_field), HasSubstr("no field 'author'"));
    EXPECT_THAT(text_of(no_field), HasSubstr("url, title, body"));

    const ToolResultBlock malformed = call(registry, kGetArtifactFieldTool, R"({"ref":3})");
    EXPECT_TRUE(malformed.is_error);
    EXPECT_THAT(text_of(malformed), HasSubstr("ref"));
    EXPECT_TRUE(call(registry, kSearchArtifactContentTool, R"({"query":""})").is_error);
}

}  // namespace
}  // namespace nucleo
