// conversation.105: a JSON value already in the escaping Writer's form is copied as it is, and the
// bytes (or the refusal) are exactly those of the event-by-event path, on generated values, on
// their non-canonical spellings and on broken texts.
#include <gtest/gtest.h>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "nucleo/wire/json_escape.hpp"
#include "nucleo/errors.hpp"
#include "persistence/document_json.hpp"

namespace nucleo {
namespace {

/// The text write_json_text writes for `json` inside an array, or the refusal's message.
struct Written {
    std::optional<std::string> text;
    std::string refusal;
    bool operator==(const Written&) const = default;
};

template <typename Writer>
Written written(std::string_view json) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartArray();
    w.Int(1);
    try {
        internal::write_json_text(w, json, internal::JsonPath("input"));
    } catch (const Error& e) {
        return {std::nullopt, e.what()};
    }
    w.EndArray();
    return {std::string(buffer.GetString(), buffer.GetSize()), {}};
}

Written by_events(std::string_view json) {
    return written<rapidjson::Writer<rapidjson::StringBuffer>>(json);
}
Written by_copy_or_events(std::string_view json) {
    return written<json_escape::StringWriter>(json);
}

std::string generated_string(std::mt19937& rng) {
    static const char kSpecial[] = {'"',    '\\',   '\n', '\t',   '\x01',
                                    '\x1f', '\x7f', '/',  '\xc3', '\xa9'};
    std::string s;
    const std::size_t n = rng() % 12;
    for (std::size_t i = 0; i < n; ++i) {
        s +=
            rng() % 4 == 0 ? kSpecial[rng() % sizeof kSpecial] : static_cast<char>('a' + rng() % 4);
    }
    return s;
}

/// A random value, written by RapidJSON's Writer: so in canonical form unless it holds a double,
/// a wide integer or a duplicate key (`dup`).
void generate(std::mt19937& rng, rapidjson::Writer<rapidjson::StringBuffer>& w, int depth,
              bool dup) {
    const unsigned kind = depth >= 6 ? rng() % 6 : rng() % 8;
    switch (kind) {
        case 0:
            w.Null();
            break;
        case 1:
            w.Bool(rng() % 2 == 0);
            break;
        case 2:
            w.Int64(static_cast<std::int64_t>(rng()) - (1 << 30));
            break;
        case 3: {
            const std::uint64_t wide = (std::uint64_t{rng()} << 32) | rng();
            rng() % 2 == 0 ? w.Uint64(wide) : w.Int64(-static_cast<std::int64_t>(wide >> 1));
            break;
        }
        case 4:
            w.Double(static_cast<double>(rng() % 100000) / 64.0 - 700.0);
            break;
        case 5: {
            const std::string s = generated_string(rng);
            w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
            break;
        }
        case 6: {
            w.StartArray();
            for (unsigned i = rng() % 4; i > 0; --i) generate(rng, w, depth + 1, dup);
            w.EndArray();
            break;
        }
        default: {
            w.StartObject();
            std::vector<std::string> keys;
            for (unsigned i = rng() % 12; i > 0; --i) {
                std::string key = dup && !keys.empty() && rng() % 3 == 0 ? keys[rng() % keys.size()]
                                                                         : generated_string(rng);
                w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
                keys.push_back(key);
                generate(rng, w, depth + 1, dup);
            }
            w.EndObject();
        }
    }
}

/// `json` spelled differently: a space, an escape written another way, an integer with a fraction,
/// a cut, a raw control byte.
std::string respelled(std::mt19937& rng, std::string json) {
    const std::size_t at = json.empty() ? 0 : rng() % json.size();
    switch (rng() % 7) {
        case 0:
            json.insert(at, " ");
            break;
        case 1:
            json.insert(at, "\\u0041");
            break;
        case 2:
            json.insert(at, "\\/");
            break;
        case 3:
            json.insert(at, ".0");
            break;
        case 4:
            json.resize(at);
            break;
        case 5:
            json.insert(at, 1, '\x02');
            break;
        default:
            json.insert(at, "\\u001f");
            break;
    }
    return json;
}

TEST(JsonCanonical, TheCopyWritesWhatTheEventsWrite) {
    std::size_t copied = 0;
    std::size_t texts = 0;
    for (std::uint32_t seed = 1; seed <= 3000; ++seed) {
        std::mt19937 rng(seed);
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
        generate(rng, w, 0, seed % 5 == 0);
        const std::string json(buffer.GetString(), buffer.GetSize());
        for (const std::string& text : {json, respelled(rng, json), respelled(rng, json)}) {
            ++texts;
            if (json_escape::is_canonical(text, json_guard::kDocumentMaxDepth)) ++copied;
            ASSERT_EQ(by_copy_or_events(text), by_events(text)) << "seed " << seed << ": " << text;
        }
    }
    // Both paths are exercised: most generated values are canonical, their respellings are not.
    EXPECT_GT(copied, texts / 5);
    EXPECT_LT(copied, texts * 3 / 4);
}

TEST(JsonCanonical, WhatIsLeftToTheReader) {
    for (const char* canonical :
         {R"({"a":[1,-2,true,false,null],"b":{"c":"d\"\\\n\u001F"}})", "0", "-1", "\"\"", "[]",
          "{}", R"({"a\u0001":1,"a":2})", "123456789012345678", "\"\xc3\xa9\x7f\""}) {
        EXPECT_TRUE(json_escape::is_canonical(canonical, 640)) << canonical;
        EXPECT_EQ(by_copy_or_events(canonical), by_events(canonical)) << canonical;
    }
    for (const char* other : {"",
                              " 1",
                              "1 ",
                              "-0",
                              "01",
                              "1.5",
                              "1e3",
                              "1234567890123456789",
                              "\"\\u0000\"",
                              "\"\\u0041\"",
                              "\"\\u001f\"",
                              "\"\\u0008\"",
                              "\"\\/\"",
                              "\"a",
                              "[1,]",
                              "{\"a\":1,}",
                              R"({"a":1,"a":2})",
                              "tru",
                              "nul",
                              "[1 ]",
                              "{\"a\" :1}",
                              "\"\x01\""}) {
        EXPECT_FALSE(json_escape::is_canonical(other, 640)) << other;
        EXPECT_EQ(by_copy_or_events(other), by_events(other)) << other;
    }
    // Deeper than the scan goes: left to the reader, which takes it.
    const std::string deep = std::string(40, '[') + std::string(40, ']');
    EXPECT_FALSE(json_escape::is_canonical(deep, 640));
    EXPECT_TRUE(json_escape::is_canonical(std::string(32, '[') + std::string(32, ']'), 640));
    EXPECT_FALSE(json_escape::is_canonical(std::string(3, '[') + std::string(3, ']'), 2));
    EXPECT_EQ(by_copy_or_events(deep), by_events(deep));
}

TEST(JsonCanonical, ARefusalNamesThePlaceOnBothPaths) {
    const Written w = by_copy_or_events(R"({"a":[1,2})");
    ASSERT_FALSE(w.text);
    EXPECT_NE(w.refusal.find("input: not valid JSON at"), std::string::npos) << w.refusal;
    EXPECT_EQ(w, by_events(R"({"a":[1,2})"));
}

}  // namespace
}  // namespace nucleo
