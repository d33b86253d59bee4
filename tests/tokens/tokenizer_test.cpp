#include "nucleo/tokenizer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "nucleo/errors.hpp"
#include "tokens/registry.hpp"

namespace nucleo {
namespace {

using Ids = std::vector<std::uint32_t>;

// Ids as tiktoken 1.0.22 (npm, WASM) gives them for these strings.
TEST(Tokenizer, KnownIdsForBothEncodings) {
    const Tokenizer& o200k = Tokenizer::get("o200k_base");
    const Tokenizer& cl100k = Tokenizer::get("cl100k_base");
    EXPECT_EQ(o200k.encode("hello world"), (Ids{24912, 2375}));
    EXPECT_EQ(cl100k.encode("hello world"), (Ids{15339, 1917}));
    const std::string mixed = "Nucleo counts tokens: 12345 \U0001F600 \u4f60\u597d";
    EXPECT_EQ(o200k.encode(mixed),
              (Ids{45, 1734, 34514, 28991, 20290, 25, 220, 7633, 2548, 88038, 220, 177519}));
    EXPECT_EQ(cl100k.encode(mixed),
              (Ids{45, 22935, 78, 14921, 11460, 25, 220, 4513, 1774, 91416, 220, 57668, 53901}));
    EXPECT_TRUE(o200k.exact());
    EXPECT_EQ(o200k.name(), "o200k_base");
}

// Special-token text is ordinary text (tiktoken's encode_ordinary); decode renders special ids.
TEST(Tokenizer, SpecialTokenTextIsOrdinaryAndSpecialIdsDecode) {
    const Tokenizer& cl100k = Tokenizer::get("cl100k_base");
    EXPECT_EQ(cl100k.encode("<|endoftext|>"), (Ids{27, 91, 8862, 728, 428, 91, 29}));
    const Ids eot{100257};
    EXPECT_EQ(cl100k.decode(eot), "<|endoftext|>");
}

TEST(Tokenizer, DecodeOfEncodeIsIdentityEvenForInvalidUtf8) {
    const std::string samples[] = {
        "",
        "plain English, with don't and 3.14159 and   spaces\n\n",
        "\u4f60\u597d\u4e16\u754c \u3053\u3093\u306b\u3061\u306f \ud55c\uad6d\uc5b4",
        "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466 \U0001F44D\U0001F3FD \u2764\ufe0f",
        "{\"key\": [1, 2.5, null, true], \"s\": \"\\u00e9\\n\"}",
        std::string(20000, ' ') + "x" + std::string(3000, '\n'),
        "bad \xff\xfe bytes \xe2\x82 and \xc0\x80 overlong \xed\xa0\x80 surrogate \xf4\x90\x80\x80",
    };
    for (const char* name : {"o200k_base", "cl100k_base"}) {
        const Tokenizer& tok = Tokenizer::get(name);
        for (const std::string& s : samples) {
            const Ids ids = tok.encode(s);
            EXPECT_EQ(tok.decode(ids), s) << name;
            EXPECT_EQ(tok.count(s), ids.size()) << name;
        }
    }
}

TEST(Tokenizer, InvalidByteBecomesItsByteToken) {
    const Tokenizer& o200k = Tokenizer::get("o200k_base");
    const Ids ids = o200k.encode("\xff");
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_EQ(o200k.decode(ids), "\xff");
    // "a\xff" + "b": three pieces, none merged across the invalid byte.
    EXPECT_EQ(o200k.encode("a\xff" "b").size(), 3u);
}

TEST(Tokenizer, SplitShowsThePreSplit) {
    const Tokenizer& o200k = Tokenizer::get("o200k_base");
    const auto pieces = o200k.split("don't  stop");
    ASSERT_EQ(pieces.size(), 3u);
    EXPECT_EQ(pieces[0], "don't");
    EXPECT_EQ(pieces[1], " ");
    EXPECT_EQ(pieces[2], " stop");
}

TEST(Tokenizer, UnknownNameIsNotFoundAndNamesTheKnownOnes) {
    try {
        (void)Tokenizer::get("p50k_base");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
        const std::string what = e.what();
        EXPECT_NE(what.find("p50k_base"), std::string::npos) << what;
        for (const std::string& known : Tokenizer::names()) {
            EXPECT_NE(what.find(known), std::string::npos) << what;
        }
    }
}

TEST(Tokenizer, MissingRankFileNamesThePathAndTheFetchCommand) {
    const auto dir = std::filesystem::temp_directory_path() / "nucleo-tokens-empty-dir";
    std::filesystem::create_directories(dir);
    try {
        (void)tokens::load_tokenizer("cl100k_base", {dir});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
        const std::string what = e.what();
        EXPECT_NE(what.find((dir / "cl100k_base.tiktoken").string()), std::string::npos) << what;
        EXPECT_NE(what.find("scripts/fetch-tokenizer-ranks"), std::string::npos) << what;
    }
}

TEST(Tokenizer, EnvironmentVariableChoosesTheRankFolder) {
    ::setenv("NUCLEO_TOKENIZER_DIR", "/nonexistent/ranks", 1);
    const auto dirs = tokens::search_dirs();
    ::unsetenv("NUCLEO_TOKENIZER_DIR");
    ASSERT_EQ(dirs.size(), 1u);
    EXPECT_EQ(dirs[0], "/nonexistent/ranks");
    EXPECT_EQ(tokens::search_dirs().size(), 2u);  // cache folder, then installed data dir
}

TEST(Tokenizer, DecodeRefusesAnUnknownId) {
    const Tokenizer& cl100k = Tokenizer::get("cl100k_base");
    const Ids ids{15339, 4000000};
    try {
        (void)cl100k.decode(ids);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
        EXPECT_NE(std::string(e.what()).find("4000000"), std::string::npos);
    }
}

// tokenizer.hpp: anthropic_approx = ceil(cl100k_base count × 1.2), count only.
TEST(Tokenizer, AnthropicApproximationScalesCl100kAndHasNoIds) {
    const Tokenizer& approx = Tokenizer::get("anthropic_approx");
    const Tokenizer& cl100k = Tokenizer::get("cl100k_base");
    EXPECT_FALSE(approx.exact());
    for (const std::string s : {"", "hello world", "A longer text, with punctuation; and 1234."}) {
        const auto base = static_cast<double>(cl100k.count(s));
        EXPECT_EQ(approx.count(s), static_cast<std::size_t>(std::ceil(base * 1.2))) << s;
    }
    EXPECT_THROW((void)approx.encode("x"), NotImplementedException);
    EXPECT_THROW((void)approx.decode(Ids{1}), NotImplementedException);
}

TEST(Tokenizer, ConcurrentUseGivesTheSameIds) {
    std::string text;
    for (int i = 0; i < 200; ++i) text += "Thread " + std::to_string(i) + " says h\u00e9llo \u4e16\u754c! ";
    const Ids expected = Tokenizer::get("o200k_base").encode(text);
    std::vector<std::thread> threads;
    std::vector<int> ok(8, 0);
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            const Tokenizer& tok = Tokenizer::get(t % 2 ? "o200k_base" : "anthropic_approx");
            for (int k = 0; k < 20; ++k) {
                if (t % 2) {
                    ok[t] += tok.encode(text) == expected;
                } else {
                    ok[t] += tok.count(text) > expected.size() / 2;
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < 8; ++t) EXPECT_EQ(ok[t], 20) << "thread " << t;
}

}  // namespace
}  // namespace nucleo
