// Every dialect's decode and decode_event read answers under the guarded JSON reader: a 10^5-deep
// tool input is refused naming the depth limit (limits.120), a duplicate key naming its path
// (limits.121), a raw NUL as such (limits.122) — a protocol error, never a crash. Their encode
// reads the prepared request under the same guard (limits.132).
#include <gtest/gtest.h>

#include <pthread.h>

#include <map>
#include <string>
#include <utility>

#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo {
namespace {

constexpr std::size_t kDeep = 100000;

const ProviderInstance& provider(const std::string& name) {
    static const PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
    static std::map<std::string, std::pair<Plugin, ProviderInstance>> loaded;
    auto it = loaded.find(name);
    if (it == loaded.end()) {
        Plugin plugin = loader.load(name);
        ProviderInstance instance = plugin.make_provider("{}");
        it = loaded.emplace(name, std::pair{std::move(plugin), std::move(instance)}).first;
    }
    return it->second.second;
}

/// `{"a":{"a":...{"a":1}...}}` nested `depth` objects deep.
std::string nested_object(std::size_t depth) {
    std::string out;
    out.reserve(depth * 6);
    for (std::size_t i = 0; i < depth; ++i) out += "{\"a\":";
    out += "1";
    out.append(depth, '}');
    return out;
}

/// An answer in `dialect`'s wire shape with one tool call whose input is `input`.
std::string tool_answer(const std::string& dialect, const std::string& input) {
    if (dialect == "anthropic") {
        return R"({"id":"msg_1","type":"message","role":"assistant","model":"m","content":[)"
               R"({"type":"tool_use","id":"toolu_1","name":"f","input":)" + input +
               R"(}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}})";
    }
    if (dialect == "openai") {
        std::string escaped;
        for (char c : input) {
            if (c == '"') escaped += '\\';
            escaped += c;
        }
        return R"({"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,)"
               R"("message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1",)"
               R"("type":"function","function":{"name":"f","arguments":")" + escaped +
               R"("}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":1}})";
    }
    return R"({"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1",)"
           R"("name":"f","input":)" + input +
           R"(}}]}},"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":1}})";
}

std::string refusal(const std::string& dialect, const std::string& body, ErrorKind* kind) {
    try {
        (void)provider(dialect).decode(200, R"({"content-type":"application/json"})", body);
    } catch (const Error& e) {
        *kind = e.kind();
        return e.what();
    }
    return "";
}

class DialectLimits : public ::testing::TestWithParam<std::string> {};

TEST_P(DialectLimits, ADeepToolInputIsRefusedNamingTheDepthLimit) {
    ErrorKind kind = ErrorKind::kInternal;
    const std::string message = refusal(GetParam(), tool_answer(GetParam(), nested_object(kDeep)), &kind);
    ASSERT_FALSE(message.empty()) << "decoded without an error";
    EXPECT_EQ(kind, ErrorKind::kProtocol) << message;
    EXPECT_NE(message.find("nesting deeper than 512 levels"), std::string::npos) << message;
}

TEST_P(DialectLimits, AToolInputAtTheLimitIsKept) {
    // The answer's own structure takes a few levels around the input; 500 fits all three.
    const std::string out =
        provider(GetParam()).decode(200, R"({"content-type":"application/json"})",
                                    tool_answer(GetParam(), nested_object(500)));
    EXPECT_NE(out.find("\"tool_use\""), std::string::npos) << out.substr(0, 300);
}

TEST_P(DialectLimits, ADuplicateKeyIsRefusedWithItsPath) {
    ErrorKind kind = ErrorKind::kInternal;
    const std::string message =
        refusal(GetParam(), tool_answer(GetParam(), R"({"path":"a","path":"b"})"), &kind);
    ASSERT_FALSE(message.empty()) << "decoded without an error";
    EXPECT_EQ(kind, ErrorKind::kProtocol) << message;
    EXPECT_NE(message.find("duplicate key \"path\""), std::string::npos) << message;
}

TEST_P(DialectLimits, ARawNulIsNamedAsSuch) {
    std::string body = tool_answer(GetParam(), R"({"q":"a)" + std::string(1, '\0') + R"(b"})");
    ErrorKind kind = ErrorKind::kInternal;
    const std::string message = refusal(GetParam(), body, &kind);
    ASSERT_FALSE(message.empty()) << "decoded without an error";
    EXPECT_EQ(kind, ErrorKind::kProtocol) << message;
    EXPECT_NE(message.find("raw NUL byte"), std::string::npos) << message;
    EXPECT_EQ(message.find("Missing a closing quotation mark"), std::string::npos) << message;
}

TEST_P(DialectLimits, ADeepStreamEventCarriesNoDeltaAndDoesNotCrash) {
    const ProviderInstance& p = provider(GetParam());
    ASSERT_TRUE(p.has_decode_event());
    const std::string event = GetParam() == "bedrock" ? "contentBlockDelta" : "content_block_delta";
    EXPECT_EQ(p.decode_event(event, nested_object(kDeep)), "");
}

/// The refusal of `encode` of `prepared`, which must be kInvalidArgument.
std::string encode_refusal(const std::string& dialect, const std::string& prepared) {
    try {
        (void)provider(dialect).encode(prepared);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "encoded without an error";
    return "";
}

TEST_P(DialectLimits, ADeepPreparedRequestIsRefusedByEncodeNamingTheDepthLimit) {
    // limits.132: the plugin's own parse of the request is guarded too: 10^5 levels are refused
    // at the 641st, never parsed recursively.
    const std::string message = encode_refusal(GetParam(), nested_object(kDeep));
    EXPECT_NE(message.find("the provider request is not JSON: nesting deeper than 640 levels (the "
                           "JSON depth limit) at byte "),
              std::string::npos)
        << message;
}

TEST_P(DialectLimits, APreparedRequestWithADuplicateKeyOrARawNulIsRefusedByEncode) {
    EXPECT_NE(encode_refusal(GetParam(), R"({"schema_version":1,"schema_version":2})")
                  .find("the provider request is not JSON: duplicate key \"schema_version\""),
              std::string::npos);
    EXPECT_NE(encode_refusal(GetParam(), std::string("{\"a\":\"x") + '\0' + "\"}")
                  .find("the provider request is not JSON: a raw NUL byte"),
              std::string::npos);
}

TEST_P(DialectLimits, ADuplicateKeyDeepInThePreparedRequestIsRefusedWithItsPath) {
    // limits.132: noted while parsing and named by its path, in a small object and in one of
    // many keys, after sibling objects that repeat each other's keys (which is no duplicate).
    const std::string head = R"({"schema_version":1,"messages":[{"id":"m1","role":"user"},)";
    EXPECT_NE(encode_refusal(GetParam(), head + R"({"id":"m2","role":"user","role":"user"}]})")
                  .find("the provider request is not JSON: duplicate key \"role\" (a key may "
                        "appear once in an "
                        "object) at messages[1].role"),
              std::string::npos);
    std::string many = head + R"({"k0":0)";
    for (int i = 1; i < 20; ++i) many += ",\"k" + std::to_string(i) + "\":0";
    many += R"(,"k13":1}]})";
    EXPECT_NE(encode_refusal(GetParam(), many)
                  .find("the provider request is not JSON: duplicate key \"k13\" (a key may appear "
                        "once in an "
                        "object) at messages[1].k13"),
              std::string::npos);
}

/// The refusal of `encode` of `prepared` on a thread of `stack_bytes` of stack.
std::string encode_refusal_on_small_stack(const std::string& dialect, const std::string& prepared,
                                          std::size_t stack_bytes) {
    struct Call {
        const std::string* dialect;
        const std::string* prepared;
        std::string message;
    } call{&dialect, &prepared, {}};
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, stack_bytes);
    pthread_t thread;
    const int started = pthread_create(
        &thread, &attributes,
        [](void* arg) -> void* {
            auto* c = static_cast<Call*>(arg);
            try {
                (void)provider(*c->dialect).encode(*c->prepared);
                c->message = "(encoded)";
            } catch (const Error& e) {
                c->message = e.what();
            }
            return nullptr;
        },
        &call);
    pthread_attr_destroy(&attributes);
    EXPECT_EQ(started, 0);
    if (started == 0) pthread_join(thread, nullptr);
    return call.message;
}

TEST_P(DialectLimits, APreparedRequestAtTheDepthLimitIsReadOnASmallStack) {
    // limits.132: the plugin's parse descends recursively, bounded by the depth guard, so a request
    // 640 levels deep (the most it reads) fits a thread of 256 KiB of stack (2 MiB under
    // AddressSanitizer, whose frames are larger), and one past it is refused there at the 641st.
    (void)provider(GetParam());  // loaded on this thread
#if defined(__SANITIZE_ADDRESS__)
    constexpr std::size_t kStack = std::size_t{2} << 20;
#else
    constexpr std::size_t kStack = std::size_t{256} << 10;
#endif
    const std::string at_limit =
        encode_refusal_on_small_stack(GetParam(), nested_object(640), kStack);
    EXPECT_EQ(at_limit.find("nesting deeper"), std::string::npos) << at_limit;
    EXPECT_FALSE(at_limit.empty());
    const std::string past = encode_refusal_on_small_stack(GetParam(), nested_object(641), kStack);
    EXPECT_NE(past.find("the provider request is not JSON: nesting deeper than 640 levels"),
              std::string::npos)
        << past;
}

INSTANTIATE_TEST_SUITE_P(All, DialectLimits, ::testing::Values("anthropic", "openai", "bedrock"));

TEST(AnthropicStreamLimits, ADeepStreamedToolInputIsRefusedNamingTheDepthLimit) {
    std::string partial;
    for (std::size_t i = 0; i < kDeep; ++i) partial += "{\\\"a\\\":";
    partial += "1";
    partial.append(kDeep, '}');
    const std::string body =
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":"
        "\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,"
        "\"output_tokens\":0}}}\n\n"
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
        "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
        "{\"type\":\"input_json_delta\",\"partial_json\":\"" + partial + "\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},"
        "\"usage\":{\"output_tokens\":5}}\n\n"
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    std::string message;
    try {
        (void)provider("anthropic").decode(200, R"({"content-type":"text/event-stream"})", body);
    } catch (const Error& e) {
        message = e.what();
    }
    EXPECT_NE(message.find("nesting deeper than 512 levels"), std::string::npos) << message;
}

}  // namespace
}  // namespace nucleo
