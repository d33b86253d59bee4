// wire.101-wire.142: for every rule of the three families a body that keeps it (no violation) and
// one that breaks it (that rule, the provider's exact text); the cases are in wire_cases.hpp.
#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <random>
#include <string>
#include <vector>

#include "nucleo/wire/contract.hpp"
#include "contract_internal.hpp"
#include "wire_cases.hpp"

namespace {

using nucleo::contract::check_request;
using nucleo::contract::Scope;
using nucleo::contract::WireFamily;

std::optional<nucleo::contract::Violation> check(WireFamily f, const char* json,
                                                 Scope scope = Scope::kCore) {
    rapidjson::Document d;
    d.Parse(json);
    EXPECT_FALSE(d.HasParseError()) << json;
    return check_request(f, d, scope);
}

/// Every record of a Shape, written out, to compare two reads of one body.
std::string digest(const nucleo::contract::internal::Shape& s) {
    std::string d;
    const auto num = [&](const nucleo::contract::internal::Num& n) {
        d += std::to_string(n.present) + std::to_string(n.is_int64) + std::to_string(n.value) + ';';
    };
    const auto block = [&](const nucleo::contract::internal::Block& b) {
        d.append(b.type).append("|").append(b.text).append("|").append(b.id).append("|").append(b.tool_use_id);
        d += '|' + std::to_string(b.inner_begin) + ',' + std::to_string(b.inner_end) + ',' +
             std::to_string(b.nested_marks) + std::to_string(b.type_is_string) + std::to_string(b.text_is_string) +
             std::to_string(b.tool_use) + std::to_string(b.tool_result) + std::to_string(b.reasoning) +
             std::to_string(b.mark_present) + std::to_string(b.mark_set) + std::to_string(b.ttl_1h) + '\n';
    };
    num(s.max_tokens);
    num(s.max_completion_tokens);
    num(s.inference_max_tokens);
    num(s.budget_tokens);
    d += std::to_string(s.thinking_present) + std::to_string(s.thinking_enabled) + std::to_string(s.tools_array) +
         std::to_string(static_cast<int>(s.system)) + std::to_string(s.messages_present) + std::to_string(s.messages_array);
    d.append(s.system_text).append("\n");
    block(s.request_mark);
    for (const auto& t : s.tools) {
        block(t);
        d.append(t.name).append("|").append(t.schema_type).append(std::to_string(t.schema)).append("\n");
    }
    for (const auto& b : s.system_blocks) block(b);
    for (const auto& m : s.messages) {
        d.append(m.role).append("|").append(m.content_text).append("|").append(m.tool_call_id);
        d += std::to_string(static_cast<int>(m.content)) + std::to_string(m.content_empty) + ',' +
             std::to_string(m.blocks_begin) + ',' + std::to_string(m.blocks_end) + '\n';
    }
    for (const auto& b : s.blocks) block(b);
    for (const auto v : s.inner_1h) d += std::to_string(v);
    for (const auto id : s.call_ids) d.append(id).append(",");
    return d;
}

using wire_cases::Case;
using wire_cases::kCases;
constexpr WireFamily A = WireFamily::kAnthropicMessages;
constexpr WireFamily O = WireFamily::kOpenAIChat;
constexpr WireFamily B = WireFamily::kBedrockConverse;

class RuleBook : public ::testing::TestWithParam<Case> {};

TEST_P(RuleBook, KeptBodyPassesAndBrokenBodyIsRefusedWithTheProvidersText) {
    const Case& c = GetParam();
    const auto kept = check(c.family, c.keeps);
    EXPECT_FALSE(kept.has_value()) << c.rule << " kept body refused: " << kept->line();
    const auto refused = check(c.family, c.breaks);
    ASSERT_TRUE(refused.has_value()) << c.rule << " broken body passed";
    EXPECT_EQ(refused->rule, c.rule);
    EXPECT_EQ(refused->message, c.text);
    EXPECT_EQ(refused->where, c.where);
    EXPECT_EQ(refused->line().find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Wire, RuleBook, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                             std::string name = info.param.rule;
                             for (char& ch : name)
                                 if (ch == '.') ch = '_';
                             return name;
                         });

TEST(RuleBook, CoreOnlyRuleIsLeftToTheProviderScope) {
    // wire.123: OpenAI itself accepts a later system message; only the core's scope refuses it.
    const char* body = R"({"messages":[{"role":"user","content":"hi"},{"role":"system","content":"s"}]})";
    EXPECT_FALSE(check(O, body, Scope::kProvider).has_value());
    EXPECT_TRUE(check(O, body, Scope::kCore).has_value());
}

TEST(RuleBook, UnknownFamilyHasNoFamilyRules) {
    EXPECT_FALSE(check(WireFamily::kUnknown, R"({"messages":[{"role":"system"}]})").has_value());
    EXPECT_EQ(nucleo::contract::wire_family_from_name("nope"), WireFamily::kUnknown);
    for (WireFamily f : {A, O, B})
        EXPECT_EQ(nucleo::contract::wire_family_from_name(nucleo::contract::wire_family_name(f)), f);
}

TEST(RuleBook, OpenAIToolNameOverSixtyFourCharactersIsRefusedWithTheLengthText) {
    const std::string name(65, 'a');
    const std::string body = R"({"tools":[{"type":"function","function":{"name":")" + name +
                             R"(","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"hi"}]})";
    const auto v = check(O, body.c_str());
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->message, "Invalid 'tools[0].function.name': string too long. Expected a string "
                          "with maximum length 64, but got a string with length 65 instead.");
}

TEST(RuleBook, AnthropicSizeLimitIsThePublishedOne) {
    EXPECT_FALSE(nucleo::contract::check_size(A, 32U * 1000U * 1000U).has_value());
    const auto v = nucleo::contract::check_size(A, 32U * 1000U * 1000U + 1U);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->rule, "wire.115");
    EXPECT_EQ(v->message, "Request exceeds the maximum allowed number of bytes.");
    EXPECT_FALSE(nucleo::contract::check_size(O, 64U * 1000U * 1000U).has_value());
}

TEST(RuleBook, RequestLevelCacheControlIsProcessedAfterEveryBlock) {
    // wire.165: automatic caching's mark lands on the last block, so a 1-hour one follows the
    // 5-minute marks of the blocks.
    const char* kept = R"({"cache_control":{"type":"ephemeral"},"system":[{"type":"text","text":"s",)"
                       R"("cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":"hi"}]})";
    EXPECT_FALSE(check(A, kept).has_value());
    const char* broken = R"({"cache_control":{"type":"ephemeral","ttl":"1h"},"system":[{"type":"text","text":"s",)"
                         R"("cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"}]})";
    const auto v = check(A, broken);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->rule, "wire.165");
    EXPECT_NE(v->message.find("a ttl='1h' cache_control block must not come after a ttl='5m'"), std::string::npos);
    // Five marks on the blocks alone stay wire.103's.
    const auto five = check(A, R"({"cache_control":{"type":"ephemeral"},"messages":[{"role":"user","content":[)"
                               R"({"type":"text","text":"a","cache_control":{"type":"ephemeral"}},)"
                               R"({"type":"text","text":"b","cache_control":{"type":"ephemeral"}},)"
                               R"({"type":"text","text":"c","cache_control":{"type":"ephemeral"}},)"
                               R"({"type":"text","text":"d","cache_control":{"type":"ephemeral"}},)"
                               R"({"type":"text","text":"e","cache_control":{"type":"ephemeral"}}]}]})");
    ASSERT_TRUE(five.has_value());
    EXPECT_EQ(five->rule, "wire.103");
    EXPECT_EQ(five->message, "A maximum of 4 blocks with cache_control may be provided. Found 6.");
}

// wire.164: the rule book over the body bytes (the audit's one pass) and over a parsed body (the
// emulator's) reach the same verdict, for every case of every rule.
TEST(RuleBookShape, BodyBytesAndParsedBodyGiveTheSameVerdict) {
    namespace in = nucleo::contract::internal;
    for (const Case& c : kCases) {
        for (const char* body : {c.keeps, c.breaks}) {
            in::Shape shape;
            ASSERT_EQ(in::shape_of_bytes(c.family, body, 0, shape), in::BytesRead::kOk) << body;
                rapidjson::Document parsed;
            parsed.Parse(body);
            in::Shape from_dom;
            in::shape_of(c.family, parsed, from_dom);
            EXPECT_EQ(digest(shape), digest(from_dom)) << body;
            const auto over_bytes = in::check_shape(shape, Scope::kCore);
            const auto over_dom = check(c.family, body);
            ASSERT_EQ(over_bytes.has_value(), over_dom.has_value()) << c.rule << ": " << body;
            if (over_bytes) {
                EXPECT_EQ(over_bytes->line(), over_dom->line()) << c.rule;
            }
        }
    }
}

// wire.152, wire.164: the one pass validates every byte of the body as JSON (grammar, escapes,
// numbers, literals, UTF-8, nothing after the root) exactly as RapidJSON's full parse does, over
// thousands of damaged variants of a body that uses each of them.
TEST(RuleBookShape, BodyBytesAreValidatedAsStrictlyAsAFullParse) {
    namespace in = nucleo::contract::internal;
    const std::string base =
        R"({"model":"m","max_tokens":5,"system":[{"type":"text","text":"a\"b\u00e9\n","cache_control":)"
        R"({"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi there"},)"
        R"({"type":"tool_result","tool_use_id":"x","content":[{"type":"text","text":"r"}]}]},{"role":"assistant",)"
        R"("content":"ok","x":[1,-2.5e3,true,false,null,{},[]]}]})";
    const std::string alphabet = std::string("{}[]:,\"\\ atrufnl0123-.eE+xu") + "\x01\xc3\xa9\xff";
    std::mt19937 rng(20261202);
    int valid = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string body = base;
        for (unsigned k = 1 + rng() % 3; k > 0; --k) {
            const std::size_t at = rng() % (body.size() + 1);
            const char ch = alphabet[rng() % alphabet.size()];
            switch (rng() % 3) {
                case 0: if (at < body.size()) body.erase(at, 1); break;
                case 1: body.insert(body.begin() + static_cast<std::ptrdiff_t>(at), ch); break;
                default: if (at < body.size()) body[at] = ch; break;
            }
        }
        rapidjson::Document d;
        d.Parse<rapidjson::kParseValidateEncodingFlag>(body.c_str(), body.size());
        const bool parsed = !d.HasParseError() && d.IsObject();
        in::Shape shape;
        const bool read = in::shape_of_bytes(WireFamily::kAnthropicMessages, body, 0, shape) == in::BytesRead::kOk;
        ASSERT_EQ(read, parsed) << body;
        valid += read ? 1 : 0;
        if (read) {
            // The walk over the tape gathers the records the walk over RapidJSON's value does.
            in::Shape from_dom;
            in::shape_of(WireFamily::kAnthropicMessages, d, from_dom);
            ASSERT_EQ(digest(shape), digest(from_dom)) << body;
        }
        // wire.172: read in place, with bytes past the end that would complete or extend the
        // body if they were read as part of it: the same verdict.
        const char fill = "}]\"1 "[i % 5];
        const std::string padded = body + std::string(nucleo::contract::kReadPadding, fill);
        const std::string_view in_place(padded.data(), body.size());
        ASSERT_EQ(in::shape_of_bytes(WireFamily::kAnthropicMessages, in_place, padded.size(), shape) == in::BytesRead::kOk,
                  parsed)
            << body << " followed by " << fill;
    }
    EXPECT_GT(valid, 1000);  // the variants exercise both answers
}

// wire.152: what the fast reader refuses but a full parse (and the providers) take is JSON too:
// integers beyond 64 bits, a lone low surrogate escape; what both refuse stays refused.
TEST(RuleBookShape, NumbersAndEscapesOnlyAFullParseTakesAreJsonToo) {
    namespace in = nucleo::contract::internal;
    const std::vector<std::pair<const char*, bool>> values = {
        {"12345678901234567890123456789", true}, {"18446744073709551616", true},
        {"-9223372036854775809", true},          {R"("\udc00x")", true},
        {"1e-400", true},                        {"1e400", false},
        {R"("\ud800")", false},                  {"01", false}};
    for (const auto& [value, json] : values) {
        const std::string body = std::string(R"({"max_tokens":)") + value + R"(,"messages":[{"role":"user","content":"hi"}]})";
        in::Shape shape;
        EXPECT_EQ(in::shape_of_bytes(A, body, 0, shape) == in::BytesRead::kOk, json) << body;
        if (json) {
            EXPECT_EQ(shape.messages.size(), 1U) << body;
        }
    }
}

}  // namespace
