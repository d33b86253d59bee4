// nucleo-anthropic decode, through the loader and the C ABI (docs/spec/answers.md, including bad
// input). The cases are fixtures/decode/*.json: arrays of {name, status, headers, body |
// body_lines, expect | error}. Bodies are written in the shapes of the Messages API reference
// (Message, the server-sent event stream, the error object); `body` is sent compact when it is
// JSON and as is when it is a string, `body_lines` is joined with "\n".
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "support.hpp"

namespace nucleo::anthropic_test {
namespace {

struct Case {
    std::string file;
    std::string name;
    int status = 0;
    std::string headers;
    std::string body;
    std::string expect;  // compact normalized response, or "" when an error is expected
    std::string error_kind;
    int error_http = 0;
    std::vector<std::string> contains;
    std::vector<std::string> excludes;  ///< texts the error must not hold
};

std::vector<Case> cases() {
    std::vector<Case> out;
    for (const char* file : {"answers.json", "streams.json", "errors.json", "malformed.json"}) {
        const rapidjson::Document doc = parse(read_file(fixtures() / "decode" / file));
        if (!doc.IsArray()) continue;
        for (const auto& c : doc.GetArray()) {
            Case k;
            k.file = file;
            k.name = c["name"].GetString();
            k.status = c["status"].GetInt();
            k.headers = compact(c["headers"]);
            if (c.HasMember("body_lines")) {
                const auto& lines = c["body_lines"];
                for (rapidjson::SizeType i = 0; i < lines.Size(); ++i) {
                    if (i > 0) k.body += "\n";
                    k.body += lines[i].GetString();
                }
            } else if (c["body"].IsString()) {
                k.body = c["body"].GetString();
            } else {
                k.body = compact(c["body"]);
            }
            if (c.HasMember("expect")) k.expect = compact(c["expect"]);
            if (c.HasMember("error")) {
                const auto& e = c["error"];
                k.error_kind = e["kind"].GetString();
                k.error_http = e["http_status"].GetInt();
                for (const auto& s : e["contains"].GetArray()) k.contains.push_back(s.GetString());
                if (e.HasMember("excludes"))
                    for (const auto& s : e["excludes"].GetArray())
                        k.excludes.push_back(s.GetString());
            }
            out.push_back(std::move(k));
        }
    }
    return out;
}

void PrintTo(const Case& c, std::ostream* os) {
    *os << c.file << ":" << c.name;
}

ErrorKind kind_named(const std::string& name) {
    static const std::map<std::string, ErrorKind> kinds = {
        {"rate_limited", ErrorKind::kRateLimited},
        {"overloaded", ErrorKind::kOverloaded},
        {"invalid_argument", ErrorKind::kInvalidArgument},
        {"config", ErrorKind::kConfig},
        {"not_found", ErrorKind::kNotFound},
        {"protocol", ErrorKind::kProtocol},
        {"context_overflow", ErrorKind::kContextOverflow},
        {"plugin", ErrorKind::kPlugin}};
    const auto it = kinds.find(name);
    EXPECT_NE(it, kinds.end()) << "unknown kind in a fixture: " << name;
    return it == kinds.end() ? ErrorKind::kInternal : it->second;
}

class Decode : public ::testing::TestWithParam<Case> {};

TEST_P(Decode, MatchesTheFixture) {
    const Case& c = GetParam();
    if (!c.expect.empty()) {
        const std::string out = provider().decode(c.status, c.headers, c.body);
        EXPECT_EQ(compact(parse(out)), c.expect) << c.file << " " << c.name;
        return;
    }
    ErrorKind kind = ErrorKind::kInternal;
    const std::string message =
        error_of([&] { (void)provider().decode(c.status, c.headers, c.body); }, &kind);
    ASSERT_FALSE(message.empty()) << c.name << " decoded without an error";
    EXPECT_EQ(kind, kind_named(c.error_kind)) << message;
    // The loader appends the plugin's err->http_status as "(HTTP N)".
    EXPECT_NE(message.find("(HTTP " + std::to_string(c.error_http) + ")"), std::string::npos)
        << message;
    for (const std::string& part : c.contains) {
        EXPECT_NE(message.find(part), std::string::npos)
            << "\"" << part << "\" not in: " << message;
    }
    for (const std::string& part : c.excludes) {
        EXPECT_EQ(message.find(part), std::string::npos) << "\"" << part << "\" in: " << message;
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Decode, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// "never a crash": every prefix of a real answer and of a real stream is either decoded or
// refused with NUCLEO_ERR_PROTOCOL, never anything else.
TEST(AnthropicDecode, EveryCutOfARealAnswerIsAProtocolErrorOrAnAnswer) {
    for (const Case& c : cases()) {
        if (c.expect.empty()) continue;
        for (std::size_t n = 0; n < c.body.size(); ++n) {
            ErrorKind kind = ErrorKind::kInternal;
            std::string message;
            try {
                (void)provider().decode(c.status, c.headers, c.body.substr(0, n));
                continue;
            } catch (const Error& e) {
                kind = e.kind();
                message = e.what();
            }
            ASSERT_EQ(kind, ErrorKind::kProtocol) << c.name << " cut at " << n << ": " << message;
            EXPECT_NE(message.find("first bytes"), std::string::npos) << message;
        }
    }
}

TEST(AnthropicDecode, AQuoteOfTheBodyStopsAt200Bytes) {
    const std::string body = "x" + std::string(5000, 'y');
    const std::string message = error_of([&] { (void)provider().decode(200, "{}", body); });
    EXPECT_NE(message.find("\"x" + std::string(199, 'y') + "\"..."), std::string::npos)
        << message;
}

TEST(AnthropicDecode, UnreadableHeadersCountAsNone) {
    const std::string body =
        R"({"model":"m","content":[],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}})";
    const rapidjson::Document out = parse(provider().decode(200, "not json", body));
    EXPECT_EQ(out["usage"]["output_tokens"].GetInt(), 2);
}

}  // namespace
}  // namespace nucleo::anthropic_test
