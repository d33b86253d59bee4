// The guarded JSON reader (limits.120 to limits.122) on its own and under the conversation
// document: depth limits at and past their value, duplicate keys with their path, a raw NUL named
// as such; and an 88,000-deep document through every CLI command that reads one (exit 2, a clear
// error, no crash).
#include <gtest/gtest.h>

#include <rapidjson/document.h>
#include <rapidjson/writer.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"
#include "common/json_guard/json_guard.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

namespace fs = std::filesystem;

/// `[[[...]]]`, `depth` arrays deep.
std::string nested_arrays(std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

/// A conversation document `depth` levels deep in all: its message carries a member of nested
/// arrays (the reader would refuse the member; the depth limit comes first).
std::string deep_document(std::size_t depth) {
    const std::string head =
        R"({"schema_version":1,"messages":[{"id":"m1","direction":"outgoing","blocks":[)"
        R"({"type":"text","text":"hi"}],"deep":)";
    const std::size_t own = 3;  // the root, "messages", the message
    return head + nested_arrays(depth - own) + "}]}";
}

std::string document_refusal(const std::string& json) {
    try {
        (void)read_conversation_parts(json);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
        return e.what();
    }
    return "";
}

TEST(JsonGuard, AcceptsTheLimitAndRefusesOneLevelMoreNamingIt) {
    rapidjson::Document doc;
    EXPECT_FALSE(json_guard::parse(doc, nested_arrays(json_guard::kMaxDepth)));
    ASSERT_TRUE(doc.IsArray());
    const auto refusal = json_guard::parse(doc, nested_arrays(json_guard::kMaxDepth + 1));
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->kind, json_guard::Refusal::Kind::kDepth);
    EXPECT_EQ(refusal->text(), "byte offset 512: nesting deeper than 512 levels (the JSON depth limit)");
    EXPECT_TRUE(doc.IsNull());  // nothing half-built is left behind
}

TEST(JsonGuard, ADeepTextIsRefusedWithoutRecursion) {
    // 10^6 levels: a recursive parser would overflow the stack long before.
    rapidjson::Document doc;
    const auto refusal = json_guard::parse(doc, nested_arrays(1000000), json_guard::kDocumentMaxDepth);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->reason, "nesting deeper than 640 levels (the JSON depth limit)");
}

TEST(JsonGuard, ADuplicateKeyIsRefusedWithItsPath) {
    rapidjson::Document doc;
    auto refusal = json_guard::parse(doc, R"({"schema_version":1,"schema_version":2})");
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->kind, json_guard::Refusal::Kind::kDuplicateKey);
    EXPECT_EQ(refusal->text(),
              "schema_version: duplicate key \"schema_version\" (a key may appear once in an object)");
    // Deep in arrays and objects, and in an object of many keys (the sorted check).
    std::string many = R"({"a":[{"x":1},{"k0":0)";
    for (int i = 1; i < 20; ++i) many += ",\"k" + std::to_string(i) + "\":0";
    many += R"(,"k7":1}]})";
    refusal = json_guard::parse(doc, many);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->where, "a[1].k7");
    EXPECT_FALSE(json_guard::parse(doc, R"({"a":{"k":1},"b":{"k":1}})"));  // same key, two objects
}

TEST(JsonGuard, ARawNulIsNamedAsSuch) {
    rapidjson::Document doc;
    const std::string text = std::string(R"({"a":"x)") + '\0' + R"("})";
    const auto refusal = json_guard::parse(doc, text);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->kind, json_guard::Refusal::Kind::kNul);
    EXPECT_EQ(refusal->offset, 7U);
    EXPECT_EQ(refusal->text().find("Missing a closing quotation mark"), std::string::npos);
    EXPECT_NE(refusal->text().find("a raw NUL byte"), std::string::npos);
    // Written as an escape, it is an ordinary character.
    EXPECT_FALSE(json_guard::parse(doc, R"({"a":"x\u0000"})"));
}

TEST(JsonGuard, SyntaxErrorsKeepRapidJsonsWords) {
    rapidjson::Document doc;
    const auto refusal = json_guard::parse(doc, R"({"a":)");
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->kind, json_guard::Refusal::Kind::kSyntax);
    EXPECT_EQ(refusal->text(), "byte offset 5: Invalid value.");
}

TEST(DocumentLimits, ADocumentAtTheDepthLimitIsReadAndOnePastItIsRefused) {
    EXPECT_EQ(document_refusal(deep_document(json_guard::kDocumentMaxDepth)).find("nesting deeper"),
              std::string::npos);
    EXPECT_NE(document_refusal(deep_document(json_guard::kDocumentMaxDepth + 1))
                  .find("nesting deeper than 640 levels (the JSON depth limit)"),
              std::string::npos);
}

TEST(DocumentLimits, An88000DeepDocumentIsRefusedNamingTheLimit) {
    const std::string message = document_refusal(deep_document(88000));
    EXPECT_EQ(message.rfind("byte offset ", 0), 0U) << message;
    EXPECT_NE(message.find("nesting deeper than 640 levels"), std::string::npos) << message;
}

TEST(DocumentLimits, ADuplicateKeyIsRefusedNotFirstWins) {
    const std::string message = document_refusal(R"({"schema_version":1,"schema_version":2})");
    EXPECT_NE(message.find("duplicate key \"schema_version\""), std::string::npos) << message;
}

TEST(DocumentLimits, ARawNulIsRefusedAsSuch) {
    const std::string message =
        document_refusal(std::string(R"({"schema_version":1,"conversation_id":"a)") + '\0' + R"("})");
    EXPECT_NE(message.find("a raw NUL byte"), std::string::npos) << message;
}

/// A folder of this test's own under the build tree, removed afterwards.
struct Scratch {
    Scratch()
        : dir(fs::path(NUCLEO_BINARY_DIR) / "tests" / "document" /
              (std::string("limits-") +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~Scratch() {
        std::error_code ignored;
        fs::remove_all(dir, ignored);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    fs::path dir;
};

TEST(DocumentLimits, EveryCommandThatReadsADocumentRefusesAnEightyEightThousandDeepOne) {
    Scratch scratch;
    const fs::path deep = scratch.dir / "deep.json";
    std::ofstream(deep) << deep_document(88000);
    const fs::path db = scratch.dir / "store.db";
    std::ofstream(scratch.dir / "nucleo.yaml")
        << "plugins:\n  paths:\n    - \"" << NUCLEO_BUILD_PLUGIN_DIR << "\"\n"
        << "stores:\n  persistent:\n    plugin: sqlite\n    options:\n      path: \"" << db.string()
        << "\"\n";
    const std::string shipped = std::string(" --config \"") + NUCLEO_SOURCE_DIR + "/config/nucleo.yaml\"";
    const std::string own = " --config \"" + (scratch.dir / "nucleo.yaml").string() + "\"";
    const std::string in = " --in \"" + deep.string() + "\"";
    const std::string cli = std::string("env NUCLEO_PLUGIN_PATH=") + NUCLEO_BUILD_PLUGIN_DIR +
                            " ANTHROPIC_API_KEY=sk-test ANTHROPIC_BASE_URL=http://127.0.0.1:9 \"" +
                            NUCLEO_CLI + "\" ";
    for (const std::string& args :
         {"render" + in + " --model claude-sonnet-4-5" + shipped,
          "send" + in + " --model claude-sonnet-4-5" + shipped,
          "compact" + in + " --model claude-sonnet-4-5" + shipped,
          "tokens" + in + " --model claude-sonnet-4-5" + shipped, "transcript" + in,
          "conversations --user alice import \"" + deep.string() + "\"" + own}) {
        const test_support::CliRun r = test_support::run_command(cli + args);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
        EXPECT_NE(r.err.find("nesting deeper than 640 levels (the JSON depth limit)"), std::string::npos)
            << args << "\n" << r.err;
        EXPECT_NE(r.err.find("deep.json"), std::string::npos) << args << "\n" << r.err;
    }
}

}  // namespace
}  // namespace nucleo
