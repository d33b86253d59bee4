// nucleo-openai-responses decode and decode_event through the loader
// (docs/spec/openai-responses.md responses.9-responses.13): output items to blocks, reasoning
// kept as provider blocks, stop reasons, usage, streamed answers, error bodies, and hostile bodies
// (cut at every byte, deep, invalid UTF-8, wrong types, negative counts) giving a normalized
// answer or a protocol error, never a crash.
#include <gtest/gtest.h>

#include <string>

#include "nucleo/errors.hpp"
#include "responses_support.hpp"

namespace nucleo::responses_test {
namespace {

constexpr const char* kJson = R"({"content-type":"application/json"})";
constexpr const char* kSse = R"({"content-type":"text/event-stream"})";

const std::string kUsage =
    R"({"input_tokens":100,"input_tokens_details":{"cached_tokens":60,"cache_write_tokens":10},)"
    R"("output_tokens":27,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":127})";

const std::string kReasoning =
    R"({"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Thinking."}],"encrypted_content":"ENC"})";

std::string response(const std::string& output, const std::string& status = "completed",
                     const std::string& incomplete = "null", const std::string& usage = kUsage) {
    return R"({"id":"resp_1","object":"response","status":")" + status +
           R"(","incomplete_details":)" + incomplete +
           R"(,"model":"gpt-6-sol-2026-10-01","output":)" + output + R"(,"usage":)" + usage + "}";
}

rapidjson::Document decode(const std::string& body, const char* headers = kJson) {
    return parse(provider().decode(200, headers, body));
}

ErrorKind decode_error(int status, const std::string& body, const char* headers = kJson) {
    try {
        (void)provider().decode(status, headers, body);
    } catch (const Error& e) {
        return e.kind();
    }
    ADD_FAILURE() << "decoded without an error";
    return ErrorKind::kInternal;
}

TEST(ResponsesDecode, OutputItemsBecomeBlocksWithTheReasoningKept) {
    const auto d = decode(response(
        "[" + kReasoning +
        R"(,{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hi","annotations":[]}]},)"
        R"({"id":"fc_1","type":"function_call","call_id":"call_1","name":"f","arguments":"{\"x\":1}"},)"
        R"({"id":"fc_2","type":"function_call","call_id":"call_2","name":"g","arguments":"{\"cut"},)"
        R"({"id":"ws_1","type":"web_search_call"}])"));
    EXPECT_STREQ(d["model"].GetString(), "gpt-6-sol-2026-10-01");
    EXPECT_STREQ(d["response_id"].GetString(), "resp_1");
    EXPECT_EQ(
        compact(d["blocks"]),
        R"([{"type":"provider_block","wire_family":"openai-responses","block":{"type":"reasoning_item",)"
        R"("model":"gpt-6-sol-2026-10-01","item":)" +
            kReasoning +
            R"(}},{"type":"thinking","thinking":"Thinking."},{"type":"text","text":"Hi"},)"
            R"({"type":"tool_use","id":"call_1","name":"f","input":{"x":1}},)"
            R"({"type":"tool_use","id":"call_2","name":"g","input":{"_raw":"{\"cut"}}])");
    EXPECT_STREQ(d["stop_reason"].GetString(), "tool_use");
    EXPECT_EQ(
        compact(d["usage"]),
        R"({"input_tokens":30,"output_tokens":27,"cache_read_tokens":60,"cache_write_tokens":10})");
}

TEST(ResponsesDecode, StatusAndIncompleteReasonMapToStopReasons) {
    const std::string text =
        R"([{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]}])";
    EXPECT_STREQ(decode(response(text))["stop_reason"].GetString(), "end_turn");
    EXPECT_STREQ(
        decode(response(text, "incomplete", R"({"reason":"max_output_tokens"})"))["stop_reason"]
            .GetString(),
        "max_tokens");
    EXPECT_STREQ(
        decode(response(text, "incomplete", R"({"reason":"content_filter"})"))["stop_reason"]
            .GetString(),
        "content_filter");
    EXPECT_STREQ(decode(response(text, "incomplete", "null"))["stop_reason"].GetString(), "other");
    const auto refusal = decode(response(
        R"([{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"No."}]}])"));
    EXPECT_STREQ(refusal["stop_reason"].GetString(), "refusal");
    EXPECT_EQ(compact(refusal["blocks"]), R"([{"type":"text","text":"No."}])");
    EXPECT_EQ(decode_error(
                  200, response(text, "failed")
                           .replace(1, 0, R"("error":{"code":"server_error","message":"boom"},)")),
              ErrorKind::kOverloaded);
    EXPECT_EQ(decode_error(200, response(text, "queued")), ErrorKind::kProtocol);
}

TEST(ResponsesDecode, AStreamedAnswerIsItsTerminalResponse) {
    const std::string done =
        R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello"}]})";
    const std::string stream =
        "event: response.created\ndata: "
        "{\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\"}}\n\n"
        "event: response.output_text.delta\ndata: "
        "{\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hel\"}\n\n"
        "event: response.output_item.done\ndata: "
        "{\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":" +
        done + "}\n\n";
    const std::string completed =
        "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":" +
        response("[" + done + "]") + "}\n\n";
    const auto d = decode(stream + completed, kSse);
    EXPECT_EQ(compact(d["blocks"]), R"([{"type":"text","text":"Hello"}])");
    // A terminal response without output: the items of the done events.
    const auto e = decode(
        stream + "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":" +
            response("[]") + "}\n\n",
        kSse);
    EXPECT_EQ(compact(e["blocks"]), R"([{"type":"text","text":"Hello"}])");
    // Cut short, or an error event.
    EXPECT_EQ(decode_error(200, stream, kSse), ErrorKind::kProtocol);
    EXPECT_EQ(
        decode_error(
            200,
            stream +
                "event: error\ndata: "
                "{\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"slow\"}\n\n",
            kSse),
        ErrorKind::kRateLimited);
    // Every cut of a whole stream is a protocol error, never a crash.
    const std::string whole = stream + completed;
    for (std::size_t k = 0; k + 2 < whole.size(); k += 7)
        EXPECT_EQ(decode_error(200, whole.substr(0, k), kSse), ErrorKind::kProtocol)
            << "cut at " << k;
}

TEST(ResponsesDecode, ErrorBodiesMapByStatusWithTheProvidersText) {
    const std::string body =
        R"({"error":{"message":"Bad thing.","type":"invalid_request_error","param":"input","code":"bad"}})";
    try {
        (void)provider().decode(400, kJson, body);
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
        EXPECT_NE(std::string(e.what()).find("invalid_request_error/bad: Bad thing. (param input)"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(decode_error(429, body), ErrorKind::kRateLimited);
    EXPECT_EQ(decode_error(503, body), ErrorKind::kOverloaded);
    EXPECT_EQ(decode_error(401, body), ErrorKind::kConfig);
    EXPECT_EQ(decode_error(404, "not json"), ErrorKind::kNotFound);
}

TEST(ResponsesDecode, HostileBodiesGiveAnAnswerOrAProtocolError) {
    const std::string whole =
        response("[" + kReasoning +
                 R"(,{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}])");
    for (std::size_t k = 0; k < whole.size(); ++k)
        EXPECT_EQ(decode_error(200, whole.substr(0, k)), ErrorKind::kProtocol) << "cut at " << k;
    std::string deep;
    for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
    EXPECT_EQ(decode_error(200, deep), ErrorKind::kProtocol);
    EXPECT_EQ(decode_error(200, std::string(100000, '[')), ErrorKind::kProtocol);
    EXPECT_EQ(
        decode_error(
            200,
            response(
                R"([{"type":"message","content":[{"type":"output_text","text":"\xff\xfe"}]}])")),
        ErrorKind::kProtocol);
    EXPECT_EQ(decode_error(200, R"({"status":"completed"})"), ErrorKind::kProtocol);
    // Wrong types and negative counts read as nothing and 0.
    const auto d = decode(response(
        R"([7,{"type":"message","content":[{"type":"output_text","text":5}]},{"type":"function_call","name":3}])",
        "completed", "null",
        R"({"input_tokens":-5,"input_tokens_details":{"cached_tokens":"3"},"output_tokens":-1})"));
    EXPECT_EQ(compact(d["blocks"]),
              R"([{"type":"tool_use","id":"","name":"","input":{"_raw":""}}])");
    EXPECT_EQ(
        compact(d["usage"]),
        R"({"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0})");
}

TEST(ResponsesDecodeEvent, EventsGiveTextThinkingCallAndUsageDeltas) {
    const auto event = [](const std::string& data) { return provider().decode_event("", data); };
    EXPECT_EQ(event(R"({"type":"response.output_text.delta","output_index":1,"delta":"Hi"})"),
              R"({"schema_version":1,"deltas":[{"type":"text","index":1,"text":"Hi"}]})");
    EXPECT_EQ(
        event(R"({"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"hm"})"),
        R"({"schema_version":1,"deltas":[{"type":"thinking","index":0,"thinking":"hm"}]})");
    EXPECT_EQ(
        event(
            R"({"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","call_id":"c","name":"f","arguments":""}})"),
        R"({"schema_version":1,"deltas":[{"type":"tool_use","index":2,"id":"c","name":"f"}]})");
    EXPECT_EQ(
        event(
            R"({"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"q"})"),
        R"({"schema_version":1,"deltas":[{"type":"tool_input","index":2,"partial_json":"{\"q"}]})");
    EXPECT_EQ(
        event(R"({"type":"response.completed","response":{"usage":)" + kUsage + "}}"),
        R"({"schema_version":1,"deltas":[{"type":"usage","usage":{"input_tokens":30,"output_tokens":27,"cache_read_tokens":60,"cache_write_tokens":10}}]})");
    EXPECT_EQ(
        event(
            R"({"type":"response.output_item.added","output_index":0,"item":{"type":"message"}})"),
        "");
    EXPECT_EQ(event("{\"type\":"), "");
    EXPECT_EQ(event(std::string(100000, '[')), "");
    // A delta of the wrong type, or empty, gives nothing.
    EXPECT_EQ(event(R"({"type":"response.output_text.delta","output_index":-3,"delta":5})"), "");
}

}  // namespace
}  // namespace nucleo::responses_test
