// tokens.1: ids compared with tiktoken on a corpus of at least 1 MB covering English, code,
// JSON, CJK, emoji, long whitespace runs and invalid UTF-8.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "nucleo/tokenizer.hpp"
#include "reference.hpp"
#include "tokens/pretokenize.hpp"

namespace nucleo {
namespace {

using testing::Reference;

std::string escape(std::string_view s) {
    std::string out;
    for (const unsigned char c : s) {
        if (c >= 0x20 && c < 0x7F && c != '\\') {
            out.push_back(static_cast<char>(c));
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    return out;
}

/// Where two id lists first differ, with the pieces around it, for a readable failure.
std::string describe(const Tokenizer& tok, const std::string& doc,
                     const std::vector<std::uint32_t>& ours,
                     const std::vector<std::uint32_t>& theirs) {
    std::size_t k = 0;
    while (k < ours.size() && k < theirs.size() && ours[k] == theirs[k]) ++k;
    std::string out = "first difference at id " + std::to_string(k) + " of " +
                      std::to_string(theirs.size()) + " (ours " + std::to_string(ours.size()) +
                      ")\n  ours:   ";
    for (std::size_t i = k; i < ours.size() && i < k + 6; ++i) {
        out += "[" + escape(tok.decode(std::span(&ours[i], 1))) + "]";
    }
    out += "\n  theirs: ";
    for (std::size_t i = k; i < theirs.size() && i < k + 6; ++i) {
        out += "[" + escape(tok.decode(std::span(&theirs[i], 1))) + "]";
    }
    out += "\n  text around: " +
           escape(tok.decode(std::span(ours).subspan(k > 4 ? k - 4 : 0,
                                                    std::min<std::size_t>(ours.size() - (k > 4 ? k - 4 : 0), 12))));
    (void)doc;
    return out;
}

/// The reference, or nullptr with the reason (a missing node or npm package fails the test).
const Reference* reference_or_reason(std::string& why) {
    try {
        return &testing::reference();
    } catch (const std::exception& e) {
        why = e.what();
        return nullptr;
    }
}

class Parity : public ::testing::TestWithParam<const char*> {};

TEST_P(Parity, EveryIdEqualsTiktokenOnTheMixedCorpus) {
    std::string why;
    const Reference* ref = reference_or_reason(why);
    ASSERT_NE(ref, nullptr) << "no npm reference (node must be installed; this test never skips): "
                            << why;
    std::size_t bytes = 0;
    std::size_t invalid_docs = 0;
    for (const std::string& d : ref->docs) {
        bytes += d.size();
        const auto* p = reinterpret_cast<const std::uint8_t*>(d.data());
        if (tokens::detail::valid_prefix(p, d.size()) != d.size()) ++invalid_docs;
    }
    ASSERT_GE(bytes, 1000000u) << "the corpus must hold at least 1 MB";
    ASSERT_GT(invalid_docs, 10u) << "the corpus must hold invalid UTF-8";

    const Tokenizer& tok = Tokenizer::get(GetParam());
    const testing::IdTable expected = ref->ids(GetParam(), "tiktoken");
    std::size_t mismatches = 0;
    std::size_t ids = 0;
    for (std::size_t d = 0; d < ref->docs.size(); ++d) {
        const std::vector<std::uint32_t> ours = tok.encode(ref->docs[d]);
        ASSERT_TRUE(expected[d].has_value());
        ids += expected[d]->size();
        if (ours != *expected[d]) {
            if (++mismatches <= 5) {
                ADD_FAILURE() << GetParam() << " document " << d << ": "
                              << describe(tok, ref->docs[d], ours, *expected[d]);
            }
        }
        EXPECT_EQ(tok.count(ref->docs[d]), expected[d]->size()) << "count() of document " << d;
    }
    EXPECT_EQ(mismatches, 0u) << "documents whose ids differ from tiktoken (" << ref->versions
                              << ")";
    RecordProperty("bytes", static_cast<int>(bytes));
    RecordProperty("ids", static_cast<int>(ids));
}

// js-tiktoken runs the same patterns as JavaScript regexes, whose \s differs from Rust's
// White_Space (JS adds U+FEFF, lacks U+0085). On every document without those two characters
// its ids must equal ours too.
TEST_P(Parity, EveryIdEqualsJsTiktokenWhereJavaScriptWhitespaceAgrees) {
    std::string why;
    const Reference* ref = reference_or_reason(why);
    ASSERT_NE(ref, nullptr) << "no npm reference (node must be installed; this test never skips): "
                            << why;
    const Tokenizer& tok = Tokenizer::get(GetParam());
    const testing::IdTable js = ref->ids(GetParam(), "js-tiktoken");
    std::size_t compared = 0;
    std::size_t mismatches = 0;
    for (std::size_t d = 0; d < ref->docs.size(); ++d) {
        const std::string& doc = ref->docs[d];
        if (!js[d] || doc.find("\u0085") != std::string::npos ||
            doc.find("\ufeff") != std::string::npos) {
            continue;
        }
        ++compared;
        const std::vector<std::uint32_t> ours = tok.encode(doc);
        if (ours != *js[d] && ++mismatches <= 5) {
            ADD_FAILURE() << GetParam() << " document " << d << ": "
                          << describe(tok, doc, ours, *js[d]);
        }
    }
    EXPECT_GE(compared, 20u) << "too few documents compared with js-tiktoken";
    EXPECT_EQ(mismatches, 0u) << "documents whose ids differ from js-tiktoken";
}

// tokens.102: the Unicode tables are at tiktoken's version, so every code point assigned after
// Unicode 15.0 (CJK Ext-I, Egyptian Hieroglyphs Ext-A, Garay, ...) splits and encodes as tiktoken
// does, in each context the pre-split classes decide.
TEST_P(Parity, EveryCodePointAssignedAfterUnicode15EqualsTiktoken) {
    const Reference* ref = nullptr;
    try {
        ref = &testing::code_points_reference();
    } catch (const std::exception& e) {
        FAIL() << "no npm reference (node and scripts/fetch-unicode-data are needed; this test "
                  "never skips): "
               << e.what();
    }
    ASSERT_GE(ref->docs.size(), 5812u * 11u) << "every code point assigned after 15.0, in context";
    const Tokenizer& tok = Tokenizer::get(GetParam());
    const testing::IdTable expected = ref->ids(GetParam(), "tiktoken");
    std::size_t mismatches = 0;
    for (std::size_t d = 0; d < ref->docs.size(); ++d) {
        const std::vector<std::uint32_t> ours = tok.encode(ref->docs[d]);
        ASSERT_TRUE(expected[d].has_value());
        if (ours != *expected[d] && ++mismatches <= 5) {
            ADD_FAILURE() << GetParam() << " document " << d << " (" << escape(ref->docs[d])
                          << "): " << describe(tok, ref->docs[d], ours, *expected[d]);
        }
    }
    EXPECT_EQ(mismatches, 0u) << "documents whose ids differ from tiktoken (" << ref->versions
                              << ")";
    // The example of the defect: U+10D50 (Garay) followed by 's.
    const std::string garay = "\xF0\x90\xB5\x90's";
    const auto at = std::find(ref->docs.begin(), ref->docs.end(), garay);
    ASSERT_NE(at, ref->docs.end());
    EXPECT_EQ(tok.count(garay), expected[static_cast<std::size_t>(at - ref->docs.begin())]->size());
}

INSTANTIATE_TEST_SUITE_P(Encodings, Parity, ::testing::Values("o200k_base", "cl100k_base"));

}  // namespace
}  // namespace nucleo
