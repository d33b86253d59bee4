// The guarded JSON reader (limits.120 to limits.122) on its own and under the conversation
// document: depth limits at and past their value, duplicate keys with their path, a raw NUL named
// as such; full-precision numbers read as RapidJSON reads them and a zero with any exponent read
// as zero (limits.137); and an 88,000-deep document through every CLI command that reads one (exit
// 2, a clear error, no crash).
#include <gtest/gtest.h>

#include <rapidjson/document.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "nucleo/wire/json_guard.hpp"
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

/// A JSON value of objects and arrays whose keys come from a small set, so that some objects
/// repeat a key and most do not; objects of up to 12 members (the pairwise and the sorted check).
void random_value(std::mt19937& rng, int depth, std::string& out) {
    const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    const int kind = depth > 6 ? 2 : pick(3);
    if (kind == 0) {
        out += '{';
        const int members = pick(13);
        for (int i = 0; i < members; ++i) {
            if (i > 0) out += ',';
            out += "\"k" + std::to_string(pick(24)) + "\":";
            random_value(rng, depth + 1, out);
        }
        out += '}';
    } else if (kind == 1) {
        out += '[';
        const int elements = pick(5);
        for (int i = 0; i < elements; ++i) {
            if (i > 0) out += ',';
            random_value(rng, depth + 1, out);
        }
        out += ']';
    } else {
        out += pick(2) == 0 ? "\"s\"" : "1";
    }
}

TEST(JsonGuard, TheKeyWatchSeesADuplicateExactlyWhenTheDocumentHasOne) {
    // limits.121: the in-place parse notes a repeated key while parsing (KeyWatch) and walks the
    // document for its path only then; on 2,000 generated values its verdict is the walk's.
    int with = 0;
    for (unsigned seed = 1; seed <= 2000; ++seed) {
        std::mt19937 rng(seed);
        std::string text;
        random_value(rng, 0, text);
        std::string buffer = text;
        rapidjson::Document doc;
        rapidjson::InsituStringStream in(buffer.data());
        rapidjson::Reader reader;
        bool parsed = false;
        bool seen = false;
        auto generate = [&](rapidjson::Document& target) {
            json_guard::KeyWatch<rapidjson::Document> watch(target);
            parsed = !reader.Parse<rapidjson::kParseInsituFlag>(in, watch).IsError();
            seen = watch.duplicate_seen();
            return parsed;
        };
        doc.Populate(generate);
        ASSERT_TRUE(parsed) << text;
        const bool walked =
            json_guard::find_duplicate_key(static_cast<const rapidjson::Value&>(doc)).has_value();
        ASSERT_EQ(seen, walked) << "seed " << seed << ": " << text;
        with += walked ? 1 : 0;
    }
    EXPECT_GT(with, 200);  // both verdicts were drawn often
    EXPECT_LT(with, 1800);
}

/// The number `text` read by the guarded full-precision reader, as the only element of an array.
rapidjson::Document guarded_number(const std::string& text) {
    rapidjson::Document doc;
    const auto refusal =
        json_guard::parse<rapidjson::kParseFullPrecisionFlag>(doc, "[" + text + "]");
    EXPECT_FALSE(refusal) << text << ": " << (refusal ? refusal->text() : "");
    return doc;
}

TEST(JsonGuard, AZeroWithAnyExponentIsReadAsZero) {
    // RapidJSON 1.1's full-precision path normalizes a zero significand with clz(0) (undefined)
    // whenever the exponent is out of its fast path's range; the sanitizer suite stops on it.
    const std::vector<std::pair<std::string, bool>> zeros = {
        {"0e40", false},
        {"-0e40", true},
        {"0E-400", false},
        {"0.0e300", false},
        {"-0.00e-300", true},
        {"0.000000000000000000000000000", false},
        {"-0.0000000000000000000000000000000000000000e-23", true},
        {"0e+0", false},
        {"0.0", false},
        {"-0.0", true}};
    for (const auto& [text, negative] : zeros) {
        const rapidjson::Document doc = guarded_number(text);
        ASSERT_TRUE(doc.IsArray() && doc.Size() == 1) << text;
        ASSERT_TRUE(doc[0].IsDouble()) << text;
        EXPECT_EQ(doc[0].GetDouble(), 0.0) << text;
        EXPECT_EQ(std::signbit(doc[0].GetDouble()), negative) << text;
    }
    // An integer zero stays an integer, as RapidJSON reads it.
    EXPECT_TRUE(guarded_number("0")[0].IsInt());
    EXPECT_TRUE(guarded_number("-0")[0].IsInt());
}

/// A JSON number drawn to reach every branch of RapidJSON's number reader: integers at the 32-
/// and 64-bit edges and past 64 bits, fractions, exponents near both ends of a double's range,
/// and long significands that need the big-integer path.
std::string generated_number(std::mt19937_64& rng) {
    auto digits = [&](std::size_t n, bool first_nonzero) {
        std::string out;
        for (std::size_t i = 0; i < n; ++i) {
            const auto lo = (i == 0 && first_nonzero) ? 1 : 0;
            out += static_cast<char>('0' + std::uniform_int_distribution<int>(lo, 9)(rng));
        }
        return out;
    };
    const std::string sign = rng() % 2 ? "-" : "";
    static const std::vector<std::string> edges = {"2147483647",
                                                   "2147483648",
                                                   "2147483649",
                                                   "4294967295",
                                                   "4294967296",
                                                   "9223372036854775807",
                                                   "9223372036854775808",
                                                   "9223372036854775809",
                                                   "18446744073709551615",
                                                   "18446744073709551616",
                                                   "1"};
    switch (rng() % 4) {
        case 0:
            return sign + edges[rng() % edges.size()];
        case 1:
            return sign + digits(1 + rng() % 25, true);
        case 2: {
            std::string n = sign + (rng() % 3 ? digits(1 + rng() % 6, true) : "0") + "." +
                            digits(1 + rng() % 30, false);
            if (n.find_first_of("123456789") == std::string::npos) n.back() = '7';
            return n;
        }
        default: {
            std::string n = sign + digits(1 + rng() % 20, true);
            if (rng() % 2) n += "." + digits(1 + rng() % 20, false);
            const int exp = std::uniform_int_distribution<int>(-360, 300)(rng);
            const std::string plus = exp >= 0 && rng() % 2 ? "+" : "";
            return n + (rng() % 2 ? "e" : "E") + plus + std::to_string(exp);
        }
    }
}

TEST(JsonGuard, ATinyNumberIsZeroOfItsSignAndAHugeOneIsRefused) {
    // RapidJSON 1.1's full-precision reader reads past its table of powers of ten on the first.
    rapidjson::Document doc = guarded_number("-57234331.27256170654E-341");
    ASSERT_TRUE(doc[0].IsDouble());
    EXPECT_EQ(doc[0].GetDouble(), 0.0);
    EXPECT_TRUE(std::signbit(doc[0].GetDouble()));
    EXPECT_EQ(guarded_number("1e-400")[0].GetDouble(), 0.0);
    EXPECT_EQ(guarded_number("4.9e-324")[0].GetDouble(), 4.9406564584124654e-324);  // subnormal
    EXPECT_EQ(guarded_number("1.7976931348623157e308")[0].GetDouble(), 1.7976931348623157e308);
    for (const std::string huge : {"1.8e308", "-1.8e308", "1e400", "0.00002e313", "0.00001e314"}) {
        const auto refusal =
            json_guard::parse<rapidjson::kParseFullPrecisionFlag>(doc, "[1, " + huge + "]");
        ASSERT_TRUE(refusal) << huge;
        EXPECT_EQ(refusal->text(), "byte offset 4: Number too big to be stored in double.") << huge;
        EXPECT_TRUE(doc.IsNull());
    }
}

TEST(JsonGuard, FullPrecisionNumbersAreReadAsRapidJsonTypesThemAndStrtodRoundsThem) {
    // Integers within 64 bits: RapidJSON's own type flags and value (its integer reading has no
    // precision to choose). Every other number: strtod's correctly rounded double, bit for bit,
    // or the refusal of a number too large for a double.
    std::mt19937_64 rng(20261202);
    for (int i = 0; i < 20000; ++i) {
        const std::string number = generated_number(rng);
        const std::string text = "[" + number + "]";
        rapidjson::Document guarded;
        const auto refusal = json_guard::parse<rapidjson::kParseFullPrecisionFlag>(guarded, text);
        rapidjson::Document plain;  // default precision: never enters the full-precision reader
        plain.Parse(text.data(), text.size());
        const bool is_integer = number.find_first_of(".eE") == std::string::npos;
        if (is_integer && !plain.HasParseError() && !plain[0].IsDouble()) {
            ASSERT_FALSE(refusal) << text;
            const rapidjson::Value& a = guarded[0];
            const rapidjson::Value& b = plain[0];
            ASSERT_EQ(a.IsInt(), b.IsInt()) << text;
            ASSERT_EQ(a.IsUint(), b.IsUint()) << text;
            ASSERT_EQ(a.IsInt64(), b.IsInt64()) << text;
            ASSERT_EQ(a.IsUint64(), b.IsUint64()) << text;
            ASSERT_FALSE(a.IsDouble()) << text;
            if (b.IsInt64())
                ASSERT_EQ(a.GetInt64(), b.GetInt64()) << text;
            else
                ASSERT_EQ(a.GetUint64(), b.GetUint64()) << text;
            continue;
        }
        const double expected = std::strtod(number.c_str(), nullptr);
        if (std::isinf(expected)) {
            ASSERT_TRUE(refusal) << text;
            EXPECT_EQ(refusal->text(), "byte offset 1: Number too big to be stored in double.");
            continue;
        }
        ASSERT_FALSE(refusal) << text << ": " << refusal->text();
        ASSERT_TRUE(guarded[0].IsDouble()) << text;
        const double got = guarded[0].GetDouble();
        ASSERT_EQ(std::memcmp(&got, &expected, sizeof got), 0)
            << text << ": " << got << " vs " << expected;
    }
}

TEST(DocumentLimits, AZeroWithALargeExponentInAJsonBlockIsKeptAsZero) {
    const std::string document =
        R"({"schema_version":1,"messages":[{"id":"m1","direction":"outgoing","blocks":[)"
        R"({"type":"json","json":{"a":0e40,"b":-0.000000000000000000000000e-30,"c":[1.5e-7]}}]}]})";
    const std::string written = write_conversation_parts(read_conversation_parts(document));
    EXPECT_NE(written.find(R"("a": 0.0,)"), std::string::npos) << written;
    EXPECT_NE(written.find(R"("b": -0.0,)"), std::string::npos) << written;
    EXPECT_NE(written.find("1.5e-7\n"), std::string::npos) << written;
    EXPECT_EQ(write_conversation_parts(read_conversation_parts(written)), written);
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
         {"render" + in + " --model claude-sonnet-5-5" + shipped,
          "send" + in + " --model claude-sonnet-5-5" + shipped,
          "compact" + in + " --model claude-sonnet-5-5" + shipped,
          "tokens" + in + " --model claude-sonnet-5-5" + shipped, "transcript" + in,
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
