// The minimal artifact registry (artifacts.3, artifacts.7).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "nucleo/artifacts.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

using ::testing::HasSubstr;

// artifacts.3: "Reference Format: «artifact:type~shortid» Example: «artifact:link:cite~a1b2c3»".
TEST(Artifacts, ReferenceFollowsTheSeedFormat) {
    ArtifactRegistry registry;
    const std::string ref = registry.register_artifact("link:cite", R"({"url": "https://x"})");
    EXPECT_TRUE(std::regex_match(ref, std::regex("\xC2\xAB"
                                                 "artifact:link:cite~[0-9a-f]{6}\xC2\xBB")))
        << ref;
    const Artifact* a = registry.get(ref);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->type, "link:cite");
    EXPECT_EQ(a->value_json, R"({"url":"https://x"})");  // stored compact
    EXPECT_EQ(registry.get("«artifact:link:cite~ffffff»"), nullptr);
}

TEST(Artifacts, SameContentSameReferenceDifferentContentDifferentReference) {
    ArtifactRegistry registry;
    const std::string a = registry.register_artifact("doc", R"({"n":1})");
    const std::string again = registry.register_artifact("doc", R"({ "n" : 1 })");
    const std::string b = registry.register_artifact("doc", R"({"n":2})");
    const std::string other_type = registry.register_artifact("page", R"({"n":1})");
    EXPECT_EQ(a, again);
    EXPECT_NE(a, b);
    EXPECT_NE(a, other_type);
    EXPECT_EQ(registry.size(), 3U);
    // Stable across instances (and so across save/restore): derived from content, not order.
    ArtifactRegistry fresh;
    fresh.register_artifact("doc", R"({"n":2})");
    EXPECT_EQ(fresh.register_artifact("doc", R"({"n":1})"), a);
}

TEST(Artifacts, InvalidJsonAndUnusableTypesAreRefused) {
    ArtifactRegistry registry;
    try {
        registry.register_artifact("doc", "{oops");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
        EXPECT_THAT(e.what(), HasSubstr("'doc'"));
    }
    EXPECT_THROW(registry.register_artifact("", "{}"), Error);
    EXPECT_THROW(registry.register_artifact("a~b", "{}"), Error);
    EXPECT_TRUE(registry.empty());
}

// artifacts.7: the header and its two guidance lines, then the artifacts.
TEST(Artifacts, RegistrySectionHasTheSeedHeaderExactly) {
    ArtifactRegistry registry;
    EXPECT_EQ(registry.build_artifact_registry_section(), "");
    const std::string ref = registry.register_artifact("link:cite", R"({"url":"u"})");
    EXPECT_EQ(registry.build_artifact_registry_section(),
              "=== ARTIFACT REGISTRY ===\n"
              "Long text fields show summaries with original length. Use "
              "get_artifact_field(ref, fieldName) for full content.\n"
              "Use search_artifact_content(query) to search across all artifact text.\n"
              "\n" +
                  ref + "\n{\"url\":\"u\"}\n");
}

TEST(Artifacts, RestoreKeepsTheStoredReferenceAndRefusesMalformedOnes) {
    ArtifactRegistry registry;
    registry.restore(Artifact{"«artifact:doc~abc123»", "doc", R"({"n":1})"});
    EXPECT_NE(registry.get("«artifact:doc~abc123»"), nullptr);
    registry.restore(Artifact{"«artifact:doc~abc123»", "doc", R"({"n":1})"});  // identical: no-op
    EXPECT_EQ(registry.size(), 1U);
    EXPECT_THROW(registry.restore(Artifact{"«artifact:doc~abc123»", "doc", R"({"n":2})"}), Error);
    EXPECT_THROW(registry.restore(Artifact{"artifact:doc~x", "doc", "{}"}), Error);
    EXPECT_THROW(registry.restore(Artifact{"«artifact:page~x»", "doc", "{}"}), Error);
    EXPECT_EQ(registry.size(), 1U);
}

}  // namespace
}  // namespace nucleo
