// conversation.104: the core's JSON string writer writes, byte for byte, what RapidJSON's
// Writer::String writes, for strings of every byte value, at every length and alignment, as an
// object member, an array element and a lone value, through Writer and PrettyWriter alike.
#include <gtest/gtest.h>

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "persistence/document_json.hpp"

namespace nucleo {
namespace {

/// `values` written by `write_one` as a lone value, as array elements and as object members.
template <template <typename> class W, typename WriteOne>
std::string write_all(const std::vector<std::string>& values, WriteOne write_one) {
    rapidjson::StringBuffer buffer;
    W<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("list");
    w.StartArray();
    for (const std::string& v : values) write_one(w, v);
    w.EndArray();
    for (std::size_t i = 0; i < values.size(); ++i) {
        w.Key(("k" + std::to_string(i)).c_str());
        write_one(w, values[i]);
    }
    w.EndObject();
    return std::string(buffer.GetString(), buffer.GetSize());
}

template <typename Writer>
void rapidjson_string(Writer& w, const std::string& s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

template <typename Writer>
void our_string(Writer& w, const std::string& s) {
    internal::write_string(w, s);
}

template <typename Writer>
using Compact = rapidjson::Writer<Writer>;
template <typename Writer>
using Pretty = rapidjson::PrettyWriter<Writer>;
template <typename Writer>
using Escaping = json_escape::Writer<Writer>;

/// A string drawn to stress the run finder: long plain runs, escapes at every offset of an
/// 8-byte word, every byte value (UTF-8 and invalid bytes are written as they are).
std::string generated_string(std::mt19937& rng) {
    const std::size_t length = rng() % 4 == 0 ? rng() % 400 : rng() % 24;
    const int kind = static_cast<int>(rng() % 3);
    std::string s;
    for (std::size_t i = 0; i < length; ++i) {
        const unsigned r = rng();
        if (kind == 0) {
            s += static_cast<char>(r % 256);  // any byte
        } else if (kind == 1) {
            static const char kSpecial[] = {'"',  '\\',   '\n',   '\t',   '\r', '\b',
                                            '\f', '\x01', '\x1f', '\x7f', '/'};
            s += r % 16 == 0 ? kSpecial[(r / 16) % sizeof kSpecial]
                             : static_cast<char>('a' + r % 26);
        } else {
            s += static_cast<char>(0x20 + r % 96);  // printable ASCII, '"' and '\' among it
        }
    }
    return s;
}

TEST(JsonString, EveryByteIsEscapedAsRapidJsonEscapesIt) {
    std::vector<std::string> values;
    for (int c = 0; c < 256; ++c) values.emplace_back(1, static_cast<char>(c));
    values.emplace_back();
    values.emplace_back(std::string(8, 'x') + '"' + std::string(7, 'y') + '\\');
    EXPECT_EQ(write_all<Compact>(values, our_string<Compact<rapidjson::StringBuffer>>),
              write_all<Compact>(values, rapidjson_string<Compact<rapidjson::StringBuffer>>));
}

TEST(JsonString, GeneratedStringsAreWrittenAsRapidJsonWritesThem) {
    for (std::uint32_t seed = 1; seed <= 300; ++seed) {
        std::mt19937 rng(seed);
        std::vector<std::string> values;
        const std::size_t n = 1 + rng() % 12;
        for (std::size_t i = 0; i < n; ++i) values.push_back(generated_string(rng));
        // Unaligned starts: the same strings one to seven bytes into a larger buffer.
        const std::string carrier = "1234567" + values.front();
        values.push_back(carrier.substr(rng() % 8));
        ASSERT_EQ(write_all<Compact>(values, our_string<Compact<rapidjson::StringBuffer>>),
                  write_all<Compact>(values, rapidjson_string<Compact<rapidjson::StringBuffer>>))
            << "seed " << seed;
        // The Writer whose String and Key are the escaper's, keys included.
        ASSERT_EQ(write_all<Escaping>(values, rapidjson_string<Escaping<rapidjson::StringBuffer>>),
                  write_all<Compact>(values, rapidjson_string<Compact<rapidjson::StringBuffer>>))
            << "seed " << seed;
        ASSERT_EQ(write_all<Pretty>(values, our_string<Pretty<rapidjson::StringBuffer>>),
                  write_all<Pretty>(values, rapidjson_string<Pretty<rapidjson::StringBuffer>>))
            << "seed " << seed;
    }
}

TEST(JsonString, TheEscapingWriterWritesEveryByteAsRapidJson) {
    std::vector<std::string> values;
    for (int c = 0; c < 256; ++c) values.emplace_back(1, static_cast<char>(c));
    // An escape at every offset of a 16-byte and an 8-byte block, and none in a long run.
    for (std::size_t at = 0; at < 40; ++at) {
        std::string s(40, 'a');
        s[at] = at % 3 == 0 ? '"' : at % 3 == 1 ? '\\' : '\x1f';
        values.push_back(s);
    }
    values.emplace_back(1000, '\x7f');
    EXPECT_EQ(write_all<Escaping>(values, rapidjson_string<Escaping<rapidjson::StringBuffer>>),
              write_all<Compact>(values, rapidjson_string<Compact<rapidjson::StringBuffer>>));
}

TEST(JsonString, TheEscapingWriterCopiesADocumentAsRapidJson) {
    // Accept reaches String and Key with the value's own length, NUL bytes included.
    rapidjson::Document doc;
    doc.Parse(R"({"a\u0000b": ["x\"y", {"\t": "\u0001\u00ff"}, 1.5, -2, null, true]})");
    ASSERT_FALSE(doc.HasParseError());
    rapidjson::StringBuffer theirs;
    rapidjson::Writer<rapidjson::StringBuffer> t(theirs);
    doc.Accept(t);
    rapidjson::StringBuffer ours;
    json_escape::StringWriter o(ours);
    doc.Accept(o);
    EXPECT_EQ(std::string(ours.GetString(), ours.GetSize()),
              std::string(theirs.GetString(), theirs.GetSize()));
    EXPECT_TRUE(o.IsComplete());
}

TEST(JsonString, ALoneStringIsAWholeText) {
    rapidjson::StringBuffer ours;
    rapidjson::Writer<rapidjson::StringBuffer> a(ours);
    internal::write_string(a, std::string("a\"b\nc"));
    EXPECT_EQ(std::string(ours.GetString(), ours.GetSize()), R"("a\"b\nc")");
    EXPECT_TRUE(a.IsComplete());
}

}  // namespace
}  // namespace nucleo
