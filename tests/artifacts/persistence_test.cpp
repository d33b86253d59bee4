// Artifacts in the conversation document (artifacts.10, persistence.24: list iterands ride
// inside their list's full-form JSON and are rehydrated one by one, each by the type of its own
// reference alias; an unresolvable iterand type fails the read rather than silently shortening
// the list).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "artifact_types.hpp"
#include "compaction/work.hpp"
#include "nucleo/compaction.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

using namespace artifact_test;
using ::testing::HasSubstr;

ConversationContext with_artifacts() {
    ConversationContext c("c-7", "alice");
    Message m = Message::outgoing_text("results");
    SearchResult r;
    r.paper = Paper{"P", Author{"Ada"}, long_text(600, "abs")};
    ArtifactList<Citation> list;
    for (int i = 0; i < 200; ++i) {
        list.items.push_back(Citation{"https://x/" + std::to_string(i), "T", long_text(450)});
    }
    r.list = list;
    m.blocks.push_back(pojo_block(r));
    c.add_message(m);
    return c;
}

// artifacts.10: reference format and stability across a save and restore; list iterands ride
// inside their list's full form and come back one by one.
TEST(ArtifactPersistence, ReferencesAndIterandsSurviveASaveAndRestore) {
    ConversationContext c = with_artifacts();
    const std::string before_section = c.artifacts().build_artifact_registry_section();
    const std::string doc = write_conversation_document(c);
    // The document holds the registered tier; iterands ride inside their list, each with its ref.
    EXPECT_THAT(doc, HasSubstr("\"@ref\": \"\xC2\xAB"
                               "artifact:link:cite~"));

    const ConversationContext back = read_conversation_document(doc);
    EXPECT_EQ(back.artifacts(), c.artifacts());
    ASSERT_EQ(back.artifacts().all_artifacts_including_reachable().size(),
              c.artifacts().all_artifacts_including_reachable().size());
    for (const Artifact* a : c.artifacts().all_artifacts_including_reachable()) {
        const Artifact* restored = back.artifacts().get(a->ref);
        ASSERT_NE(restored, nullptr) << a->ref;
        EXPECT_EQ(*restored, *a);
        EXPECT_EQ(back.artifacts().reachable(a->ref), c.artifacts().reachable(a->ref));
    }
    EXPECT_EQ(back.artifacts().build_artifact_registry_section(), before_section);
    // Written again, byte-identical.
    EXPECT_EQ(write_conversation_document(back), doc);
}

// persistence.24: an iterand whose type cannot be resolved fails the read instead of shortening
// the list.
TEST(ArtifactPersistence, AnUnresolvableIterandTypeFailsTheRead) {
    declare_artifact_type<Citation>();
    const std::string doc = R"({"schema_version": 1, "artifacts": [
        {"ref": "«artifact:list~abc123»", "type": "list",
         "value": {"@artifact": "list", "iterand_type": "link:cite", "items": [
            {"@artifact": "link:cite", "url": "u", "@ref": "«artifact:link:cite~aaaaaa»"},
            {"@artifact": "ghost:type", "name": "g", "@ref": "«artifact:ghost:type~bbbbbb»"}]}}]})";
    try {
        (void)read_conversation_parts(doc);
        FAIL() << "the list must not come back shortened";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
        EXPECT_THAT(e.what(), HasSubstr("artifacts[0]"));
        EXPECT_THAT(e.what(), HasSubstr("items[1]"));
        EXPECT_THAT(e.what(), HasSubstr("'ghost:type'"));
    }
    // An iterand whose own ref names another type is refused too.
    const std::string lying = R"({"schema_version": 1, "artifacts": [
        {"ref": "«artifact:list~abc123»", "type": "list",
         "value": {"@artifact": "list", "iterand_type": "link:cite", "items": [
            {"@artifact": "link:cite", "url": "u", "@ref": "«artifact:doc:paper~aaaaaa»"}]}}]})";
    EXPECT_THROW((void)read_conversation_parts(lying), Error);
}

TEST(ArtifactPersistence, StoredNestedReferencesAreKeptVerbatim) {
    declare_artifact_type<Citation>();
    const std::string doc = R"({"schema_version": 1, "artifacts": [
        {"ref": "«artifact:list~abc123»", "type": "list",
         "value": {"@artifact": "list", "iterand_type": "link:cite", "items": [
            {"@artifact": "link:cite", "url": "u", "@ref": "«artifact:link:cite~aaaaaa»"}]}}]})";
    const ConversationParts parts = read_conversation_parts(doc);
    const Artifact* iterand = parts.artifacts.get("«artifact:link:cite~aaaaaa»");
    ASSERT_NE(iterand, nullptr);
    EXPECT_EQ(iterand->value_json, R"({"@artifact":"link:cite","url":"u"})");
    EXPECT_TRUE(parts.artifacts.reachable(iterand->ref));
    EXPECT_EQ(
        parts.artifacts.get("«artifact:list~abc123»")->value_json,
        R"({"@artifact":"list","iterand_type":"link:cite","items":[{"@artifact":"link:cite","url":"u"}]})");
}

// compaction.33: compaction keeps every «artifact:…» reference that appeared in summarized text —
// the text the compaction summarizer reads shows a PojoBlock as the model saw it, refs included, so
// the ladder's reference rule keeps them.
TEST(ArtifactCompaction, EveryReferenceTheModelSawSurvivesCompaction) {
    ConversationContext c("c", "u");
    c.put_main_objective("task", "Collect citations.");
    std::vector<std::string> seen;
    for (int i = 0; i < 12; ++i) {
        c.add_message(Message::outgoing_text("Search round " + std::to_string(i)));
        Message use;
        use.direction = Direction::kIncoming;
        const std::string id = "toolu_" + std::to_string(i);
        use.blocks = {ToolUseBlock{id, "search", "{}"}};
        c.add_message(use);
        SearchResult r;
        r.query = "round " + std::to_string(i);
        r.sections = {Section{"s",
                              {Citation{"https://x/" + std::to_string(i), "T",
                                        long_text(1500, "para" + std::to_string(i))}}}};
        Message result;
        result.blocks = {ToolResultBlock{id, {pojo_block(r)}, false}};
        c.add_message(result);
    }
    c.add_message(Message::incoming_text("Done."));
    // What the model saw: the rendered turns carry the references.
    const PreparedConversation p =
        c.prepare_messages_for_llm(FixedContentFormatter(true, true), false);
    for (const PreparedTurn& t : p.turns) {
        for (const ContentBlock& b : t.blocks) {
            if (const auto* r = b.get_if<ToolResultBlock>()) {
                for (const std::string& ref :
                     compaction::artifact_refs(r->content[0].get_if<JsonBlock>()->json)) {
                    seen.push_back(ref);
                }
            }
        }
    }
    ASSERT_EQ(seen.size(), 12U);
    // The summarizer's source text carries them (not the artifacts' raw JSON).
    EXPECT_EQ(
        compaction::artifact_refs(compaction::render_for_summary(c.messages()[2], &c.artifacts())),
        std::vector<std::string>{seen[0]});

    ModelSpec model;
    model.id = "m";
    model.provider = "anthropic";
    model.max_context_tokens = 20000;
    model.max_output_tokens = 1024;
    model.token_counter = "o200k_base";
    // The window is set under the conversation as it is sent (tokens.101: each artifact counts
    // as its reference, not its raw JSON), so compaction has work to do.
    const std::int64_t sent = get_total_tokens(c, model);
    ContextWindowManager manager(
        PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("extractive").make_summarizer(),
        ContextWindowSettings{sent / 2, std::nullopt});
    const CompactionReport report = manager.ensure_fits(c, model, 256);
    ASSERT_TRUE(report.compacted());
    std::string all;
    for (const Message& m : c.messages())
        all += compaction::render_for_summary(m, &c.artifacts()) + "\n";
    for (const std::string& ref : seen) EXPECT_THAT(all, HasSubstr(ref));
    EXPECT_EQ(c.artifacts().size(), 12U) << "compaction never touches the registry";
}

}  // namespace
}  // namespace nucleo
