// Anthropic Messages API (POST /v1/messages, /v1/messages/count_tokens): the request rules and
// error texts the API documents and answers with, explicit cache_control prefix caching, thinking
// blocks bound to their prefix (wire.193, wire.194), cache diagnostics, message threads
// (wire.199-wire.204), and replies as JSON or as server-sent events.
#include <algorithm>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cache_diagnostics.hpp"
#include "emulator.hpp"
#include "json.hpp"
#include "mid_conversation.hpp"
#include "nucleo/wire/contract.hpp"
#include "nucleo/wire/model_rules.hpp"
#include "reply.hpp"
#include "rule_book_view.hpp"
#include "thinking.hpp"
#include "thinking_binding.hpp"
#include "threads.hpp"
#include "tool_changes.hpp"

namespace nucleo::emulator {
namespace {

using json::quote;

/// The request checks: the fields the API requires, the mid-conversation system messages and tool
/// changes of a model the catalog names (mid_conversation.hpp), then the rule book of the
/// Anthropic Messages wire family (wire.101-wire.114, the same code the core audits with) over the
/// body with its system messages read as part of the turn before them (rule_book_view.hpp).
/// Returns the API's refusal.
class Validator {
  public:
    Validator(const json::Value& doc, bool count_tokens, const ModelCatalog::MidConversation& mid,
              const Betas& betas)
        : doc_(doc), count_tokens_(count_tokens), mid_(mid), betas_(betas) {}

    std::optional<Refusal> run() const {
        if (auto e = fields()) return Refusal{*e, ""};
        if (auto r = check_mid_conversation(doc_, mid_, betas_)) return r;
        const RuleBookView view(doc_, mid_.named && mid_.system_messages);
        if (auto v = contract::check_request(contract::WireFamily::kAnthropicMessages, view.body(),
                                             contract::Scope::kProvider)) {
            return Refusal{view.in_request(v->message), ""};
        }
        return std::nullopt;
    }

  private:
    std::optional<std::string> fields() const {
        if (!doc_.IsObject()) return "Request body must be a JSON object";
        const json::Value* model = json::member(doc_, "model");
        if (model == nullptr || !model->IsString()) return "model: Field required";
        const json::Value* messages = json::member(doc_, "messages");
        if (messages == nullptr || !messages->IsArray()) return "messages: Field required";
        if (!count_tokens_) {
            const json::Value* max = json::member(doc_, "max_tokens");
            if (max == nullptr) return "max_tokens: Field required";
            if (!max->IsInt64() || max->GetInt64() < 1) {
                return "max_tokens: Input should be greater than or equal to 1";
            }
            // count_tokens takes no `diagnostics` (MessageCountTokensParams has none).
            if (auto e = check_diagnostics_param(doc_)) return e;
        }
        if (auto e = tools()) return e;
        for (rapidjson::SizeType i = 0; i < messages->Size(); ++i) {
            const std::string at = "messages." + std::to_string(i);
            const json::Value& m = (*messages)[i];
            const json::Value* content = json::member(m, "content");
            // A system message may leave its content out (BetaSystemMessageParam): whether it may
            // is check_mid_conversation's, on a model the catalog names.
            const bool optional = mid_.named && is_system_message(m);
            if (content == nullptr || (optional && content->IsNull())) {
                if (optional) continue;
                return at + ".content: Field required";
            }
            if (!content->IsString() && !content->IsArray())
                return at + ".content: Input should be a valid list";
        }
        return std::nullopt;
    }

    std::optional<std::string> tools() const {
        const json::Value* tools = json::member(doc_, "tools");
        if (tools == nullptr) return std::nullopt;
        if (!tools->IsArray()) return "tools: Input should be a valid list";
        for (rapidjson::SizeType i = 0; i < tools->Size(); ++i) {
            const json::Value& t = (*tools)[i];
            const std::string type = json::string_member(t, "type", "custom");
            if (type != "custom") continue;  // server tools (web_search_...) carry no schema
            const std::string at = "tools." + std::to_string(i) + ".custom.";
            if (json::member(t, "name") == nullptr) return at + "name: Field required";
            if (json::member(t, "input_schema") == nullptr)
                return at + "input_schema: Field required";
        }
        return std::nullopt;
    }

    const json::Value& doc_;
    bool count_tokens_;
    const ModelCatalog::MidConversation& mid_;
    const Betas& betas_;
};

std::string text_of(const json::Value& content) {
    if (content.IsString()) return content.GetString();
    std::string out;
    if (!content.IsArray()) return out;
    for (const auto& b : content.GetArray()) {
        if (json::string_member(b, "type") != "text") continue;
        if (!out.empty()) out += "\n";
        out += json::string_member(b, "text");
    }
    return out;
}

/// Canonical bytes and breakpoints: tools, then system, then messages (the API's prefix order).
/// A message that renders nothing (a directive-only or a cleared turn-scoped system message) adds
/// no bytes: it is never part of a cache key nor of a token count.
struct Prefix {
    PrefixHasher hasher;
    std::vector<Breakpoint> breakpoints;
};

Prefix build_prefix(const json::Value& doc, std::chrono::seconds default_ttl) {
    Prefix p{PrefixHasher("anthropic\x1f" + json::string_member(doc, "model")), {}};
    // The block a request-level mark lands on: the last one outside a turn-scoped system message
    // (the page: automatic caching "skips turn-scoped messages when it picks a breakpoint").
    std::optional<std::size_t> auto_mark;
    bool in_turn_scoped = false;
    const auto marked = [&](std::size_t m) {
        if (!in_turn_scoped) auto_mark = m;
    };
    const auto block = [&](const json::Value& b, bool nested_mark) {
        // A tool_addition's mark may stand in its definition: out of the bytes too.
        p.hasher.append(without_change_marks(b));
        const std::size_t m = p.hasher.mark();
        marked(m);
        const json::Value* cc = json::member(b, "cache_control");
        if (cc == nullptr || cc->IsNull()) cc = definition_mark(b);
        if ((cc != nullptr && !cc->IsNull()) || nested_mark) {
            const bool hour = cc != nullptr && json::string_member(*cc, "ttl") == "1h";
            p.breakpoints.push_back({m, hour ? std::chrono::seconds(3600) : default_ttl, hour});
        }
    };
    const auto text_block = [&](const json::Value& s) {
        p.hasher.append(R"({"type":"text","text":)" + json::write(s) + "}");
        marked(p.hasher.mark());
    };
    if (const json::Value* tools = json::member(doc, "tools");
        tools != nullptr && tools->IsArray()) {
        for (const auto& t : tools->GetArray()) block(t, false);
    }
    if (const json::Value* system = json::member(doc, "system")) {
        if (system->IsString()) text_block(*system);
        if (system->IsArray()) {
            for (const auto& b : system->GetArray()) block(b, false);
        }
    }
    const json::Value& messages = *json::member(doc, "messages");
    const std::vector<bool> rendered = rendered_messages(messages);
    for (rapidjson::SizeType i = 0; i < messages.Size(); ++i) {
        const json::Value& m = messages[i];
        const json::Value* content = json::member(m, "content");
        if (!rendered[i] || content == nullptr) continue;
        in_turn_scoped = turn_scoped(m);
        p.hasher.append(R"({"role":)" + quote(json::string_member(m, "role")) + "}");
        if (content->IsString()) {
            text_block(*content);
            continue;
        }
        if (!content->IsArray()) continue;
        for (const auto& b : content->GetArray()) {
            bool nested = false;
            if (const json::Value* inner = json::member(b, "content");
                inner != nullptr && inner->IsArray()) {
                for (const auto& c : inner->GetArray()) {
                    const json::Value* cc = json::member(c, "cache_control");
                    nested = nested || (cc != nullptr && !cc->IsNull());
                }
            }
            block(b, nested);
        }
    }
    // caching.104: a request-level cache_control is one breakpoint on the last block.
    if (const json::Value* cc = json::member(doc, "cache_control");
        cc != nullptr && cc->IsObject() && auto_mark) {
        const bool hour = json::string_member(*cc, "ttl") == "1h";
        p.breakpoints.push_back(
            {*auto_mark, hour ? std::chrono::seconds(3600) : default_ttl, hour});
    }
    return p;
}

ReplyInput reply_input(const json::Value& doc, const std::string& digest,
                       const contract::ModelRules* rules, const ModelCatalog::Thinking& traits) {
    ReplyInput in;
    in.id_prefix = "toolu_emu_";
    in.conversation_digest = digest;
    in.max_tokens = json::int_member(doc, "max_tokens", 4096);
    in.stop_sequences = stop_sequences_from(json::member(doc, "stop_sequences"));
    // wire.190, wire.198: the thinking form and the effort (`output_config.effort`).
    ThinkingAsk ask{json::member(doc, "thinking"), ""};
    if (const json::Value* oc = json::member(doc, "output_config"))
        ask.effort = json::string_member(*oc, "effort");
    apply_thinking(ask, rules, traits, in);
    // The tools offered at the end of the conversation: `tools`, then the tool changes of its
    // system messages (tool_changes.hpp).
    for (const OfferedTool& t : offered_tools(doc)) {
        const json::Value* schema = json::member(*t.definition, "input_schema");
        if (schema != nullptr) in.tools.push_back({t.name, schema});
    }
    if (const json::Value* choice = json::member(doc, "tool_choice")) {
        const std::string type = json::string_member(*choice, "type");
        in.tool_choice_none = type == "none";
        if (type == "tool") in.forced_tool = json::string_member(*choice, "name");
    }
    const auto& messages = json::member(doc, "messages")->GetArray();
    for (const auto& m : messages)
        in.assistant_turns += json::string_member(m, "role") == "assistant";
    // The last user turn decides: a question (call a tool) or a tool result (answer in text).
    // System messages after it are instructions, not a turn: it is still the last one.
    std::size_t end = messages.Size();
    while (end > 0 && is_system_message(messages[static_cast<rapidjson::SizeType>(end - 1)])) --end;
    for (rapidjson::SizeType i = messages.Size(); i-- > 0;) {
        if (json::string_member(messages[i], "role") != "user") continue;
        const json::Value& content = *json::member(messages[i], "content");
        in.question = text_of(content);
        if (content.IsArray()) {
            for (const auto& b : content.GetArray()) {
                if (json::string_member(b, "type") != "tool_result") continue;
                in.has_tool_result = true;
                const std::string id = json::string_member(b, "tool_use_id");
                const json::Value* inner = json::member(b, "content");
                in.tool_result_text = inner != nullptr ? text_of(*inner) : "";
                const json::Value* err = json::member(b, "is_error");
                in.tool_result_error = err != nullptr && err->IsBool() && err->GetBool();
                // The assistant turn it answers: the last one before it (a directive-only
                // system message may stand between).
                rapidjson::SizeType a = i;
                while (a > 0 && is_system_message(messages[a - 1])) --a;
                if (a > 0) {
                    const json::Value* prev = json::member(messages[a - 1], "content");
                    if (prev != nullptr && prev->IsArray()) {
                        for (const auto& u : prev->GetArray()) {
                            if (json::string_member(u, "id") == id)
                                in.tool_result_name = json::string_member(u, "name");
                        }
                    }
                }
            }
        }
        in.last_is_question = i + 1 == end && !in.has_tool_result;
        break;
    }
    return in;
}

std::string stop_reason(const Reply& r) {
    if (r.truncated) return "max_tokens";
    if (r.tool_call) return "tool_use";
    return r.stop_sequence.empty() ? "end_turn" : "stop_sequence";
}

/// The matched stop sequence, or null.
std::string stop_sequence_json(const Reply& r) {
    return r.stop_sequence.empty() ? std::string("null") : quote(r.stop_sequence);
}

/// The input-token counts: the same in `message_start`, in the cumulative `message_delta` usage
/// and in a non-streamed answer.
std::string input_usage(const CacheUsage& u) {
    return R"("input_tokens":)" + std::to_string(u.input) + R"(,"cache_creation_input_tokens":)" +
           std::to_string(u.creation) + R"(,"cache_read_input_tokens":)" + std::to_string(u.read);
}

/// wire.187: the thinking block's tokens, a part of output_tokens (0 without a thinking block).
long long thinking_tokens(const Reply& r) {
    if (!r.has_thinking) return 0;
    return std::min<long long>(r.output_tokens,
                               r.hidden_thinking_tokens + tokens_for_bytes(r.thinking.size()));
}

/// `output_tokens_details`: the thinking tokens of an answer with a thinking block, else null.
std::string output_details(long long thinking) {
    return thinking > 0 ? R"({"thinking_tokens":)" + std::to_string(thinking) + "}"
                        : std::string("null");
}

/// The Message usage object with every member the API returns (caching.101: the creation tokens
/// split by TTL in `cache_creation`; wire.187: the thinking tokens among the output tokens).
std::string usage_json(const CacheUsage& u, long long output_tokens, long long thinking) {
    return "{" + input_usage(u) + R"(,"cache_creation":{"ephemeral_5m_input_tokens":)" +
           std::to_string(u.creation - u.creation_1h) + R"(,"ephemeral_1h_input_tokens":)" +
           std::to_string(u.creation_1h) + R"(},"output_tokens":)" + std::to_string(output_tokens) +
           R"(,"output_tokens_details":)" + output_details(thinking) +
           R"(,"server_tool_use":null,"service_tier":"standard","inference_geo":null})";
}

/// The content blocks, in order; the text block is left out when a tool call replaces it.
std::vector<std::string> content_blocks(const Reply& r) {
    std::vector<std::string> blocks;
    if (r.has_thinking) {
        blocks.push_back(R"({"type":"thinking","thinking":)" + quote(r.thinking) +
                         R"(,"signature":)" + quote(r.thinking_signature) + "}");
    }
    if (!r.tool_call && (!r.text.empty() || !r.has_thinking)) {
        blocks.push_back(R"({"type":"text","text":)" + quote(r.text) + R"(,"citations":null})");
    }
    if (r.tool_call) {
        // A tool call cut off by max_tokens has no parseable input: it comes back empty.
        blocks.push_back(R"({"type":"tool_use","id":)" + quote(r.tool_id) + R"(,"name":)" +
                         quote(r.tool_name) + R"(,"input":)" + (r.truncated ? "{}" : r.tool_input) +
                         R"(,"caller":{"type":"direct"}})");
    }
    return blocks;
}

/// The Message's `content`, a JSON array: what a thread stores as the answer (wire.200).
std::string content_json(const Reply& r) {
    std::string content;
    for (const auto& b : content_blocks(r)) content += (content.empty() ? "" : ",") + b;
    return "[" + content + "]";
}

std::string sse(const std::string& event, const std::string& data) {
    return "event: " + event + "\ndata: " + data + "\n\n";
}

/// The answer's id: deterministic, a digest of the prompt it answers (docs/emulator.md "Replies").
std::string message_id(const std::string& digest) {
    return "msg_emu_" + digest;
}

/// `diagnostics` is the Message's member of that name as JSON (cache_diagnostics.hpp).
Response render(const json::Value& doc, const Reply& r, const CacheUsage& u,
                const std::string& digest, const std::string& diagnostics) {
    const std::string id = message_id(digest);
    const std::string model = quote(json::string_member(doc, "model"));
    const json::Value* stream = json::member(doc, "stream");
    if (stream == nullptr || !stream->IsBool() || !stream->GetBool()) {
        return json_response(
            200, R"({"id":)" + quote(id) + R"(,"type":"message","role":"assistant","model":)" +
                     model + R"(,"content":)" + content_json(r) + R"(,"stop_reason":)" +
                     quote(stop_reason(r)) + R"(,"stop_sequence":)" + stop_sequence_json(r) +
                     R"(,"stop_details":null,"container":null,"usage":)" +
                     usage_json(u, r.output_tokens, thinking_tokens(r)) + R"(,"diagnostics":)" +
                     diagnostics + "}");
    }
    Response out;
    out.streamed = true;
    out.content_type = "text/event-stream";
    auto& ev = out.chunks;
    ev.push_back(
        sse("message_start", R"({"type":"message_start","message":{"id":)" + quote(id) +
                                 R"(,"type":"message","role":"assistant","model":)" + model +
                                 R"(,"content":[],"stop_reason":null,"stop_sequence":null,)"
                                 R"("stop_details":null,"container":null,"usage":)" +
                                 usage_json(u, 1, 0) + R"(,"diagnostics":)" + diagnostics + "}}"));
    ev.push_back(sse("ping", R"({"type":"ping"})"));
    int index = 0;
    const auto block = [&](const std::string& start, const std::string& delta_type,
                           const std::string& field, const std::string& body,
                           const std::string& extra_delta) {
        const std::string at = std::to_string(index);
        ev.push_back(sse("content_block_start", R"({"type":"content_block_start","index":)" + at +
                                                    R"(,"content_block":)" + start + "}"));
        for (const auto& piece : split_for_stream(body)) {
            ev.push_back(sse("content_block_delta", R"({"type":"content_block_delta","index":)" +
                                                        at + R"(,"delta":{"type":")" + delta_type +
                                                        R"(",")" + field + R"(":)" + quote(piece) +
                                                        "}}"));
        }
        if (!extra_delta.empty()) {
            ev.push_back(sse("content_block_delta", R"({"type":"content_block_delta","index":)" +
                                                        at + R"(,"delta":)" + extra_delta + "}"));
        }
        ev.push_back(
            sse("content_block_stop", R"({"type":"content_block_stop","index":)" + at + "}"));
        ++index;
    };
    if (r.has_thinking) {
        block(R"({"type":"thinking","thinking":"","signature":""})", "thinking_delta", "thinking",
              r.thinking,
              R"({"type":"signature_delta","signature":)" + quote(r.thinking_signature) + "}");
    }
    if (!r.tool_call && (!r.text.empty() || !r.has_thinking)) {
        block(R"({"type":"text","text":"","citations":null})", "text_delta", "text", r.text, "");
    }
    if (r.tool_call) {
        // Truncated: the partial JSON is streamed as the API streams it, cut where output stopped.
        block(R"({"type":"tool_use","id":)" + quote(r.tool_id) + R"(,"name":)" +
                  quote(r.tool_name) + R"(,"input":{},"caller":{"type":"direct"}})",
              "input_json_delta", "partial_json", r.tool_input, "");
    }
    // The usage of message_delta is cumulative, as the API sends it: the input counts of
    // message_start again and the final output count.
    ev.push_back(sse("message_delta",
                     R"({"type":"message_delta","delta":{"stop_reason":)" + quote(stop_reason(r)) +
                         R"(,"stop_sequence":)" + stop_sequence_json(r) +
                         R"(,"stop_details":null,"container":null},"usage":{)" + input_usage(u) +
                         R"(,"output_tokens":)" + std::to_string(r.output_tokens) +
                         R"(,"output_tokens_details":)" + output_details(thinking_tokens(r)) +
                         R"(,"server_tool_use":null}})"));
    ev.push_back(sse("message_stop", R"({"type":"message_stop"})"));
    return out;
}

/// YYYY-MM-DD, the form of every anthropic-version value.
bool dated_version(const std::string& v) {
    if (v.size() != 10 || v[4] != '-' || v[7] != '-') return false;
    for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
        if (v[i] < '0' || v[i] > '9') return false;
    }
    return true;
}

class Anthropic final : public Dialect {
  public:
    std::optional<Response> check_auth(const Request& req) const override {
        // channel.102: an API key in `x-api-key`, or a key or token as `Authorization: Bearer`
        // (how the official SDKs from 1.0 on send `apiKey` and `authToken`).
        const std::string bearer = req.header("authorization");
        if (req.header("x-api-key").empty() &&
            !(bearer.starts_with("Bearer ") && json::has_non_whitespace(bearer.substr(7)))) {
            return error(ErrorClass::kAuthentication, "x-api-key header is required");
        }
        // Any dated version is accepted (2023-06-01 as Nucleo sends it, or the newer dates the
        // SDKs send); the emulator speaks one dialect for all of them.
        const std::string version = req.header("anthropic-version");
        if (version.empty()) {
            return error(ErrorClass::kInvalidRequest, "anthropic-version: header is required");
        }
        if (!dated_version(version)) {
            return error(ErrorClass::kInvalidRequest, "anthropic-version: invalid version '" +
                                                          version +
                                                          "'; expected a date such as 2023-06-01");
        }
        return std::nullopt;
    }

    Response error(ErrorClass cls, const std::string& message) const override {
        struct Shape {
            int status;
            const char* type;
            const char* text;
        };
        Shape s{400, "invalid_request_error", "Invalid request"};
        switch (cls) {
            case ErrorClass::kInvalidRequest:
                break;
            case ErrorClass::kAuthentication:
                s = {401, "authentication_error", "invalid x-api-key"};
                break;
            case ErrorClass::kRateLimited:
                s = {429, "rate_limit_error",
                     "Number of request tokens has exceeded your per-minute rate limit "
                     "(https://docs.claude.com/en/api/rate-limits); see the response headers for "
                     "current usage. Please reduce the prompt length or the maximum tokens "
                     "requested, or try again later."};
                break;
            case ErrorClass::kServer:
                s = {500, "api_error", "Internal server error"};
                break;
            case ErrorClass::kOverloaded:
                s = {529, "overloaded_error", "Overloaded"};
                break;
        }
        return error_response(cls, s.status,
                              R"({"type":"error","error":{"type":")" + std::string(s.type) +
                                  R"(","message":)" + quote(message.empty() ? s.text : message) +
                                  R"(},"request_id":"req_emu"})");
    }

    ErrorClass transient_error() const override { return ErrorClass::kOverloaded; }

    /// A 400 invalid_request_error; with an error code, `error.details.error_code` as the API
    /// sets it (the SDK raises ToolReferenceUnresolvedError, ToolNameConflictError from it).
    Response refuse(const Refusal& r) const {
        if (r.error_code.empty()) return error(ErrorClass::kInvalidRequest, r.message);
        return error_response(
            ErrorClass::kInvalidRequest, 400,
            R"({"type":"error","error":{"type":"invalid_request_error","message":)" +
                quote(r.message) + R"(,"details":{"error_code":)" + quote(r.error_code) +
                R"(}},"request_id":"req_emu"})");
    }

    /// A per-model refusal (wire.176-wire.181, wire.185) in the API's envelope and status.
    static Response refuse(const contract::ModelViolation& v) {
        return error_response(ErrorClass::kInvalidRequest, v.status,
                              R"({"type":"error","error":{"type":)" + quote(v.error_type) +
                                  R"(,"message":)" + quote(v.message) +
                                  R"(},"request_id":"req_emu"})");
    }

    std::pair<std::string, std::string> request_id(std::uint64_t n) const override {
        return {"request-id", "req_emu_" + hex_id(n, 16)};
    }

    Response serve(const Request& req, const Faults& faults, Context& ctx) const override {
        rapidjson::Document doc;
        std::string parse_error;
        if (!json::parse(req.body, doc, parse_error)) {
            return error(ErrorClass::kInvalidRequest,
                         "The request body is not valid JSON: " + parse_error);
        }
        // wire.115: the request size Anthropic publishes.
        if (auto v =
                contract::check_size(contract::WireFamily::kAnthropicMessages, req.body.size())) {
            return error_response(
                ErrorClass::kInvalidRequest, 413,
                R"({"type":"error","error":{"type":"request_too_large","message":)" +
                    quote(v->message) + R"(},"request_id":"req_emu"})");
        }
        const bool count_tokens = req.path.ends_with("/count_tokens");
        // wire.186: the model's catalog record, when the catalog has it, says whether it takes
        // mid-conversation system messages and tool changes (count_tokens takes the same
        // messages); count_tokens answers for any model that exists (wire.185), the messages
        // route checks its rules too.
        const std::string model = json::string_member(doc, "model");
        const ModelCatalog::MidConversation mid =
            ctx.catalog.mid_conversation(contract::WireFamily::kAnthropicMessages, model);
        const Betas betas(req.header("anthropic-beta"));
        // wire.199-wire.204: a thread continue is served as the conversation it continues
        // followed by its own turns, so every check below reads the whole conversation.
        // count_tokens takes no `thread` (MessageCountTokensParams has none).
        std::optional<ThreadTurn> thread;
        if (!count_tokens) {
            if (auto r = check_thread_param(doc, betas)) return refuse(*r);
            auto begun = begin_thread_turn(
                ctx.threads, doc,
                ctx.catalog.threads(contract::WireFamily::kAnthropicMessages, model),
                ThreadFaults{faults.thread_lost, faults.thread_busy}, ctx.cache.clock());
            if (const auto* e = std::get_if<ThreadError>(&begun)) {
                return error_response(ErrorClass::kInvalidRequest, e->status,
                                      thread_error_body(*e));
            }
            if (auto* t = std::get_if<ThreadTurn>(&begun)) thread.emplace(std::move(*t));
        }
        if (auto r = Validator(doc, count_tokens, mid, betas).run()) return refuse(*r);
        const contract::ModelRules* rules =
            ctx.catalog.find(contract::WireFamily::kAnthropicMessages, model);
        if (rules != nullptr) {
            const auto v = count_tokens
                               ? contract::check_model_available(
                                     contract::WireFamily::kAnthropicMessages, *rules)
                               : contract::check_model_request(
                                     contract::WireFamily::kAnthropicMessages, doc, *rules);
            if (v) return refuse(*v);
        }
        const auto ttl = std::chrono::seconds(ctx.options.cache_ttl_seconds);
        if (count_tokens) {
            return json_response(
                200, R"({"input_tokens":)" +
                         std::to_string(tokens_for_bytes(build_prefix(doc, ttl).hasher.bytes())) +
                         "}");
        }
        // wire.193, wire.194: thinking blocks sent back are checked against their prefix, on
        // the request as sent; with drop_block the failing ones leave the prompt.
        const ModelCatalog::Thinking traits =
            ctx.catalog.thinking(contract::WireFamily::kAnthropicMessages, model);
        const PrefixBinding binding(BindingDialect::kAnthropic, doc);
        // Cache diagnostics fingerprint the request as sent, before any block is dropped.
        const DiagnosticsAsk ask = diagnostics_ask(doc);
        std::optional<Fingerprint> fp;
        if (ask.requested) fp = fingerprint(doc);
        if (traits.bound_to_prefix) {
            const BindingVerdict verdict =
                check_binding(BindingDialect::kAnthropic, doc, binding,
                              wants_drop_block(BindingDialect::kAnthropic, req, doc));
            if (verdict.refusal) return error(ErrorClass::kInvalidRequest, *verdict.refusal);
            drop_blocks(doc, verdict.dropped);
        }
        Prefix prefix = build_prefix(doc, ttl);
        const CacheUsage usage = explicit_cache(ctx.cache, prefix.hasher, prefix.breakpoints,
                                                min_cacheable(ctx.options, rules, model));
        record_cache(ctx.stats, usage);
        const std::string digest = prefix.hasher.digest();
        ReplyInput in = reply_input(doc, digest, rules, traits);
        in.thinking_binding = binding.whole();
        apply_reply_faults(faults, in);
        // The Message type requires the member: null unless the request asked and its prompt
        // diverged from the one it names.
        std::string diagnostics = "null";
        if (fp) {
            diagnostics = diagnostics_json(ctx.fingerprints.diagnose_and_store(
                ask.previous, message_id(digest), std::move(*fp)));
        }
        const Reply reply = make_reply(in);
        // wire.200: the conversation and its answer, as answered, under the answer's id.
        if (thread) thread->finish(message_id(digest), content_json(reply), ctx.cache.clock());
        return render(doc, reply, usage, digest, diagnostics);
    }
};

}  // namespace

std::unique_ptr<Dialect> make_anthropic() {
    return std::make_unique<Anthropic>();
}

}  // namespace nucleo::emulator
