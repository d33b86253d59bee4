#include "nucleo/provider_client.hpp"

#include <algorithm>
#include <cctype>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <typeinfo>
#include <utility>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "caching/call_options.hpp"
#include "common/json_text.hpp"
#include "common/log_internal.hpp"
#include "conversation/context_internal.hpp"
#include "llm/body_buffer.hpp"
#include "llm/call_records.hpp"
#include "llm/request_audit.hpp"
#include "llm/stream_framing.hpp"
#include "llm/threads.hpp"
#include "llm/turn_fragments.hpp"
#include "nucleo/thinking.hpp"
#include "nucleo/thinking_response.hpp"
#include "nucleo/tokens.hpp"
#include "persistence/document_json.hpp"
#include "plugins/sinks.hpp"
#include "render/prepared_json.hpp"

namespace nucleo {
namespace {

constexpr std::size_t kBodyQuoteBytes = 200;

std::string first_bytes(std::string_view body) {
    std::string out(body.substr(0, kBodyQuoteBytes));
    for (char& c : out)
        if (c == '\n' || c == '\r') c = ' ';
    return body.size() > kBodyQuoteBytes ? out + "..." : out;
}

/// caching.105, caching.107: the provider instance's cache choices in its `options`:
/// `cache_policy` (seed, sliding or automatic; sliding when absent: caching.130) and
/// `cache_head_ttl` ("5m" or "1h"; the head keeps the provider's default when absent). Anything
/// else is refused, naming the instance and the value.
std::pair<CachePolicy, bool> read_cache_choices(const ProviderConfig& config) {
    rapidjson::Document d;
    d.Parse(config.options_json.data(), config.options_json.size());
    std::pair<CachePolicy, bool> out{kDefaultCachePolicy, false};
    if (d.HasParseError() || !d.IsObject()) return out;
    const std::string who = "provider '" + config.name + "' options.";
    if (d.HasMember("cache_policy") && !d["cache_policy"].IsNull()) {
        const auto& v = d["cache_policy"];
        const auto policy = v.IsString() ? parse_cache_policy(v.GetString()) : std::nullopt;
        if (!policy) {
            throw Error(ErrorKind::kConfig,
                        who + "cache_policy: " +
                            (v.IsString() ? "\"" + std::string(v.GetString()) + "\""
                                          : std::string("not a string")) +
                            " is not one of seed, sliding, automatic");
        }
        out.first = *policy;
    }
    if (d.HasMember("cache_head_ttl") && !d["cache_head_ttl"].IsNull()) {
        const auto& v = d["cache_head_ttl"];
        const std::string ttl = v.IsString() ? v.GetString() : "";
        if (ttl != "5m" && ttl != "1h")
            throw Error(ErrorKind::kConfig, who + "cache_head_ttl: expected \"5m\" or \"1h\"");
        out.second = ttl == "1h";
    }
    return out;
}

/// wire.211: the provider instance's `options.threads` (true or false; off when absent). Anything
/// else is refused, naming the instance and the value.
bool read_threads_option(const ProviderConfig& config) {
    rapidjson::Document d;
    d.Parse(config.options_json.data(), config.options_json.size());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("threads") || d["threads"].IsNull())
        return false;
    const auto& v = d["threads"];
    if (!v.IsBool())
        throw Error(ErrorKind::kConfig, "provider '" + config.name + "' options.threads: " +
                                            internal::json_compact(v) + " is not true or false");
    return v.GetBool();
}

ProviderCapabilities read_capabilities(const std::string& json, const std::string& plugin) {
    rapidjson::Document d;
    d.Parse(json.data(), json.size());
    if (d.HasParseError() || !d.IsObject())
        throw Error(ErrorKind::kPlugin,
                    "plugin '" + plugin + "': capabilities are not a JSON object");
    ProviderCapabilities c;
    auto flag = [&](const char* k, bool absent = false) {
        return d.HasMember(k) && d[k].IsBool() ? d[k].GetBool() : absent;
    };
    c.native_tools = flag("native_tools");
    c.caching = flag("caching");
    c.streaming = flag("streaming");
    c.automatic_caching = flag("automatic_caching");
    if (d.HasMember("dialect") && d["dialect"].IsString()) c.dialect = d["dialect"].GetString();
    if (d.HasMember("auth") && d["auth"].IsString()) c.auth = d["auth"].GetString();
    // wire.149: the wire family whose rule book audits the plugin's requests.
    if (d.HasMember("wire_family") && d["wire_family"].IsString())
        c.wire_family = d["wire_family"].GetString();
    if (d.HasMember("stream_framing") && d["stream_framing"].IsString())
        c.stream_framing = d["stream_framing"].GetString();
    c.turn_fragments = flag("turn_fragments");    // abi.108
    c.provider_blocks = flag("provider_blocks");  // answers.110
    c.tool_changes = flag("tool_changes");        // tools.103
    c.threads = flag("threads");                  // wire.211
    // A dialect that cannot mark a tool call or assistant output says so; absent means it can.
    c.cache_anchor_tool_use = flag("cache_anchor_tool_use", true);    // caching.119
    c.cache_anchor_assistant = flag("cache_anchor_assistant", true);  // caching.133
    if (d.HasMember("max_cache_breakpoints") && d["max_cache_breakpoints"].IsUint64())
        c.max_cache_breakpoints = static_cast<std::size_t>(d["max_cache_breakpoints"].GetUint64());
    return c;
}

/// caching.118: the `model.caching` of a model that does not cache.
const std::string kNoCaching = "none";

/// What a request carries beyond the model, budget and prepared conversation.
struct RequestExtras {
    /// caching.131: the previous answer's provider id for the cache diagnosis ("" : null, the
    /// diagnosis starts here); nullopt: no diagnostics asked.
    std::optional<std::string> previous_message_id;
    /// answers.110: the provider blocks the request carries.
    internal::ProviderBlocksKept provider_blocks;
    /// wire.211: the request creates or continues the provider's thread (nullptr: neither).
    const internal::ThreadCall* thread = nullptr;
};

/// The provider request document (docs/provider-abi-documents.md).
/// abi.106: the prepared conversation is written once, straight into `buf`, which the plugin
/// then reads in place. abi.108: with `slice`, the document of that part of the conversation,
/// with "turn_offset" (the slice's first turn) before "prepared".
void write_provider_request(rapidjson::StringBuffer& buf, const ModelSpec& model,
                            std::int64_t max_tokens, bool thinking, std::int64_t thinking_budget,
                            const ThinkingRequest& form, bool stream, std::string_view cache_key,
                            const ProviderConfig& config, const PreparedConversation& prepared,
                            const RequestExtras& extras,
                            const internal::PreparedSlice* slice = nullptr) {
    json_escape::StringWriter w(buf);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    w.Key("model");
    w.StartObject();
    w.Key("id");
    w.String(model.id.c_str(), static_cast<rapidjson::SizeType>(model.id.size()));
    w.Key("wire_model");
    w.String(model.wire_model.c_str(), static_cast<rapidjson::SizeType>(model.wire_model.size()));
    // caching.118: how the model's provider caches (explicit, automatic or none), so a dialect
    // writes its breakpoints, or the request-level cache fields, only to a model that takes them.
    const std::string& caching = model.supports_caching ? model.cache_breakpoints : kNoCaching;
    w.Key("caching");
    w.String(caching.c_str(), static_cast<rapidjson::SizeType>(caching.size()));
    w.EndObject();
    // caching.118: the conversation's id keys the provider's cache routing (OpenAI's
    // prompt_cache_key), on a model that caches.
    if (model.supports_caching && !cache_key.empty()) {
        w.Key("cache_key");
        w.String(cache_key.data(), static_cast<rapidjson::SizeType>(cache_key.size()));
    }
    w.Key("max_tokens");
    w.Int64(max_tokens);
    w.Key("thinking");
    w.StartObject();
    w.Key("active");
    w.Bool(thinking);
    w.Key("budget_tokens");
    w.Int64(thinking ? thinking_budget : 0);
    // catalog.5: the form and effort the model's record maps this depth to (absent when none).
    if (!form.form.empty()) {
        w.Key("form");
        w.String(form.form.c_str(), static_cast<rapidjson::SizeType>(form.form.size()));
    }
    if (!form.effort.empty()) {
        w.Key("effort");
        w.String(form.effort.c_str(), static_cast<rapidjson::SizeType>(form.effort.size()));
    }
    w.EndObject();
    w.Key("stream");
    w.Bool(stream);
    std::string ttl = "5m";
    rapidjson::Document options;
    options.Parse(config.options_json.data(), config.options_json.size());
    if (options.HasParseError() || !options.IsObject()) options.SetObject();
    if (options.HasMember("cache_ttl") && options["cache_ttl"].IsString())
        ttl = options["cache_ttl"].GetString();
    w.Key("cache_ttl");
    w.String(ttl.c_str(), static_cast<rapidjson::SizeType>(ttl.size()));
    if (extras.previous_message_id) {  // caching.131
        w.Key("diagnostics");
        w.StartObject();
        w.Key("previous_message_id");
        if (extras.previous_message_id->empty()) {
            w.Null();
        } else {
            w.String(extras.previous_message_id->c_str(),
                     static_cast<rapidjson::SizeType>(extras.previous_message_id->size()));
        }
        w.EndObject();
    }
    // tools.103: the whole conversation holds a late tool the dialect writes as a tool change,
    // so every part of a split request asks for what it needs (the beta of Anthropic's).
    if (prepared.tool_changes) {
        w.Key("tool_changes");
        w.Bool(true);
    }
    // wire.211: a thread the dialect creates, or continues with the turns it is handed.
    if (extras.thread != nullptr && extras.thread->kind != internal::ThreadCall::Kind::kNone) {
        const bool continues = extras.thread->kind == internal::ThreadCall::Kind::kContinue;
        w.Key("thread");
        w.StartObject();
        w.Key("type");
        w.String(continues ? "continue" : "create");
        if (continues) {
            const std::string& id = extras.thread->previous_message_id;
            w.Key("previous_message_id");
            w.String(id.c_str(), static_cast<rapidjson::SizeType>(id.size()));
        }
        w.EndObject();
    }
    w.Key("options");
    options.Accept(w);
    if (slice != nullptr) {
        w.Key("turn_offset");
        w.Uint64(slice->first);
        w.Key("prepared");
        internal::write_prepared_json(w, prepared, *slice, extras.provider_blocks);
    } else {
        w.Key("prepared");
        internal::write_prepared_json(w, prepared, extras.provider_blocks);
    }
    w.EndObject();
}

/// The head of the plugin's HTTP request document (method, path, headers) → an HttpRequest
/// against the instance's base URL, without its body.
HttpRequest read_http_head(const rapidjson::Document& d, const std::string& who,
                           const ProviderConfig& config) {
    if (d.HasParseError() || !d.IsObject())
        throw Error(ErrorKind::kPlugin, who + ": the HTTP request is not a JSON object");
    HttpRequest req;
    if (d.HasMember("method") && d["method"].IsString()) req.method = d["method"].GetString();
    if (!d.HasMember("path") || !d["path"].IsString())
        throw Error(ErrorKind::kPlugin, who + ": the HTTP request has no string \"path\"");
    std::string base = config.base_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    req.url = base + d["path"].GetString();
    if (d.HasMember("headers") && d["headers"].IsObject()) {
        for (const auto& h : d["headers"].GetObject()) {
            if (h.value.IsString())
                req.headers.emplace_back(h.name.GetString(), h.value.GetString());
        }
    }
    return req;
}

/// abi.106: the plugin's request. A plugin with encode_parts (ABI 1.3) writes the head and the
/// body apart, and its body bytes are sent as written; an older plugin writes one document whose
/// "body" is taken out and written compactly (a string body as its characters).
HttpRequest encode_http_request(const ProviderInstance& dialect, std::string_view provider_request,
                                const ProviderConfig& config) {
    if (dialect.has_encode_parts()) {
        ProviderInstance::EncodedParts parts = dialect.encode_parts(provider_request);
        rapidjson::Document d;
        d.Parse(parts.head.data(), parts.head.size());
        HttpRequest req = read_http_head(d, "plugin '" + config.plugin + "' encode_parts", config);
        internal::reserve_body_padding(parts.body);  // limits.135 (the sink already left it)
        req.body = std::move(parts.body);
        return req;
    }
    const std::string json = dialect.encode(provider_request);
    rapidjson::Document d;
    d.Parse(json.data(), json.size());
    const std::string who = "plugin '" + config.plugin + "' encode";
    HttpRequest req = read_http_head(d, who, config);
    if (!d.HasMember("body"))
        throw Error(ErrorKind::kPlugin, who + ": the HTTP request has no \"body\"");
    std::string body = d["body"].IsString()
                           ? std::string(d["body"].GetString(), d["body"].GetStringLength())
                           : internal::json_compact(d["body"]);
    internal::reserve_body_padding(body);  // limits.135
    req.body = std::move(body);
    return req;
}

std::string headers_json(const HttpHeaders& headers) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    for (const auto& [k, v] : headers) {
        std::string name = k;
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        w.Key(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
        w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
    }
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

/// The length of the UTF-8 sequence that starts at `i` when it is well formed (no overlong form,
/// no surrogate, nothing above U+10FFFF), else 0.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
    const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = at(i);
    if (c < 0x80) return 1;
    std::size_t n = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k)
        if ((at(i + k) & 0xC0U) != 0x80U) return 0;
    return n;
}

/// answers.107: every byte that does not start a well-formed UTF-8 sequence becomes U+FFFD. JSON's
/// structure is ASCII, so the document stays the same document; only its strings change.
/// Returns how many bytes were replaced.
std::size_t replace_invalid_utf8(std::string& text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t n = utf8_sequence(text, i);
        if (n == 0) break;
        i += n;
    }
    if (i == text.size()) return 0;
    std::string out(text, 0, i);
    std::size_t replaced = 0;
    while (i < text.size()) {
        const std::size_t n = utf8_sequence(text, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++replaced;
            ++i;
        } else {
            out.append(text, i, n);
            i += n;
        }
    }
    text = std::move(out);
    return replaced;
}

/// answers.106: the usage of a plugin's normalized response, every count present and a
/// non-negative integer; anything else is a protocol error naming the field.
Usage checked_usage(const rapidjson::Value& d, const std::string& who) {
    if (!d.HasMember("usage") || !d["usage"].IsObject())
        throw Error(ErrorKind::kProtocol,
                    who + ": the normalized response lacks the object \"usage\"");
    const rapidjson::Value& u = d["usage"];
    Usage out;
    const std::pair<const char*, std::int64_t*> fields[] = {
        {"input_tokens", &out.input_tokens},
        {"output_tokens", &out.output_tokens},
        {"cache_read_tokens", &out.cache_read_tokens},
        {"cache_write_tokens", &out.cache_write_tokens}};
    for (const auto& [key, into] : fields) {
        if (!u.HasMember(key))
            throw Error(ErrorKind::kProtocol, who + ": the normalized response lacks usage." + key +
                                                  " (a non-negative integer)");
        const rapidjson::Value& v = u[key];
        if (!v.IsInt64() || v.GetInt64() < 0)
            throw Error(ErrorKind::kProtocol, who + ": the normalized response has usage." + key +
                                                  " " + internal::json_compact(v) +
                                                  ", not a non-negative integer");
        *into = v.GetInt64();
    }
    // caching.108: optional; when present a count no larger than the writes it is part of.
    if (u.HasMember("cache_write_1h_tokens")) {
        const rapidjson::Value& v = u["cache_write_1h_tokens"];
        if (!v.IsInt64() || v.GetInt64() < 0 || v.GetInt64() > out.cache_write_tokens)
            throw Error(ErrorKind::kProtocol,
                        who + ": the normalized response has usage.cache_write_1h_tokens " +
                            internal::json_compact(v) +
                            ", not a count within usage.cache_write_tokens");
        out.cache_write_1h_tokens = v.GetInt64();
    }
    return out;
}

/// answers.106: the stop reason of a plugin's normalized response, present and one of
/// kStopReasons.
std::string checked_stop_reason(const rapidjson::Value& d, const std::string& who) {
    if (!d.HasMember("stop_reason") || !d["stop_reason"].IsString())
        throw Error(ErrorKind::kProtocol,
                    who + ": the normalized response lacks the string \"stop_reason\"");
    std::string stop(d["stop_reason"].GetString(), d["stop_reason"].GetStringLength());
    if (!known_stop_reason(stop)) {
        std::string known;
        for (std::string_view k : kStopReasons)
            known += (known.empty() ? "" : ", ") + std::string(k);
        throw Error(ErrorKind::kProtocol, who + ": the normalized response has stop_reason \"" +
                                              stop + "\", which is not a normalized stop reason (" +
                                              known + ")");
    }
    return stop;
}

/// caching.131: the plugin's `cache_miss` ({"reason", "missed_input_tokens"}), read leniently: a
/// reason that is not a string gives none, a count that is not a non-negative integer gives -1.
/// A reason this release does not know is kept as it came.
CacheMiss read_cache_miss(const rapidjson::Value& d) {
    CacheMiss miss;
    const auto it = d.FindMember("cache_miss");
    if (it == d.MemberEnd() || !it->value.IsObject()) return miss;
    const rapidjson::Value& m = it->value;
    if (m.HasMember("reason") && m["reason"].IsString()) miss.reason = m["reason"].GetString();
    if (!miss.reason.empty() && m.HasMember("missed_input_tokens") &&
        m["missed_input_tokens"].IsInt64() && m["missed_input_tokens"].GetInt64() >= 0)
        miss.missed_input_tokens = m["missed_input_tokens"].GetInt64();
    return miss;
}

/// answers.102: an answer with content a next request can carry: a tool call, text that is not
/// blank, or a provider's own block (answers.110: a compaction block is the whole answer).
/// Thinking alone, blank text or nothing at all is an empty answer.
bool has_content(const Message& m) {
    return std::any_of(m.blocks.begin(), m.blocks.end(), [](const ContentBlock& b) {
        if (b.get_if<ToolUseBlock>() != nullptr || b.is<ProviderBlock>()) return true;
        const auto* t = b.get_if<TextBlock>();
        return t != nullptr && t->text.find_first_not_of(" \t\r\n\v\f") != std::string::npos;
    });
}

std::int64_t usage_field(const rapidjson::Value& usage, const char* key) {
    if (!usage.HasMember(key)) return 0;
    const auto& v = usage[key];
    return v.IsInt64() ? v.GetInt64() : 0;
}

Usage read_usage(const rapidjson::Value& u) {
    Usage out;
    out.input_tokens = usage_field(u, "input_tokens");
    out.output_tokens = usage_field(u, "output_tokens");
    out.cache_read_tokens = usage_field(u, "cache_read_tokens");
    out.cache_write_tokens = usage_field(u, "cache_write_tokens");
    out.cache_write_1h_tokens =
        std::min(usage_field(u, "cache_write_1h_tokens"), out.cache_write_tokens);
    return out;
}

std::string_view string_field(const rapidjson::Value& v, const char* key) {
    if (!v.HasMember(key) || !v[key].IsString()) return {};
    return {v[key].GetString(), v[key].GetStringLength()};
}

/// Hands the deltas document of one event (plugin.h decode_event) to the host's callbacks. A
/// document off its format carries nothing to show: the answer is decode()'s, which reports.
void deliver_deltas(std::string_view doc, const StreamCallbacks& cb) {
    if (doc.empty()) return;
    rapidjson::Document d;
    if (json_guard::parse(d, doc, json_guard::kDocumentMaxDepth) || !d.IsObject() ||
        !d.HasMember("deltas") || !d["deltas"].IsArray())
        return;
    for (const auto& delta : d["deltas"].GetArray()) {
        if (!delta.IsObject()) continue;
        const std::string_view type = string_field(delta, "type");
        const std::size_t index = delta.HasMember("index") && delta["index"].IsUint64()
                                      ? static_cast<std::size_t>(delta["index"].GetUint64())
                                      : 0;
        if (type == "text" && cb.on_text_delta) {
            cb.on_text_delta(index, string_field(delta, "text"));
        } else if (type == "thinking" && cb.on_thinking_delta) {
            cb.on_thinking_delta(index, string_field(delta, "thinking"));
        } else if (type == "tool_use" && cb.on_tool_call_start) {
            cb.on_tool_call_start(index, string_field(delta, "id"), string_field(delta, "name"));
        } else if (type == "tool_input" && cb.on_tool_input_delta) {
            cb.on_tool_input_delta(index, string_field(delta, "partial_json"));
        } else if (type == "usage" && cb.on_usage && delta.HasMember("usage") &&
                   delta["usage"].IsObject()) {
            cb.on_usage(read_usage(delta["usage"]));
        }
    }
}

/// A plugin without decode_event (ABI 1.0/1.1) still streams: its callbacks get the assembled
/// answer's pieces at the end, in block order, so a host's display code has one path.
void deliver_whole(const Message& m, const Usage& usage, const StreamCallbacks& cb) {
    for (std::size_t i = 0; i < m.blocks.size(); ++i) {
        const ContentBlock& b = m.blocks[i];
        if (const auto* t = b.get_if<TextBlock>(); t && cb.on_text_delta)
            cb.on_text_delta(i, t->text);
        if (const auto* t = b.get_if<ThinkingBlock>(); t && cb.on_thinking_delta)
            cb.on_thinking_delta(i, t->thinking);
        if (const auto* u = b.get_if<ToolUseBlock>()) {
            if (cb.on_tool_call_start) cb.on_tool_call_start(i, u->id, u->name);
            if (cb.on_tool_input_delta) cb.on_tool_input_delta(i, u->input_json);
        }
    }
    if (cb.on_usage) cb.on_usage(usage);
}

}  // namespace

bool known_stop_reason(std::string_view stop_reason) noexcept {
    return std::find(kStopReasons.begin(), kStopReasons.end(), stop_reason) != kStopReasons.end();
}

double LLMResponse::cache_hit_rate() const noexcept {
    const std::int64_t total = usage.total_input_tokens();
    return total <= 0 ? 0.0
                      : static_cast<double>(usage.cache_read_tokens) / static_cast<double>(total);
}

namespace {

std::vector<std::size_t> same_positions(std::size_t n) {
    std::vector<std::size_t> origins(n);
    for (std::size_t i = 0; i < n; ++i) origins[i] = i;
    return origins;
}

void restore_messages(ConversationContext& conversation, std::vector<Message> messages) {
    const std::vector<std::size_t> origins = same_positions(messages.size());
    conversation.replace_messages(std::move(messages), origins);
}

/// conversation.111: a model that binds its thinking blocks to what they followed (wire.192)
/// cannot check a block another platform wrote (the Claude API's block on Bedrock, or the
/// reverse): when the model that answered the conversation last was served by another provider
/// instance, the answers' thinking blocks are taken out before the call, once, so the call is not
/// refused. Returns the messages as they were, for a failed call to put back; nothing when
/// nothing was taken out.
std::optional<std::vector<Message>> leave_thinking_of_another_platform(
    ConversationContext& conversation, const ModelSpec& model,
    const std::map<std::string, std::string>& model_providers, const std::string& provider) {
    const std::optional<std::string>& prior = conversation.prior_spec_id();
    if (!model.thinking.bound_to_prefix || !prior || *prior == model.id) return std::nullopt;
    const auto it = model_providers.find(*prior);
    if (it == model_providers.end() || it->second == provider) return std::nullopt;
    std::vector<Message> before = conversation.messages();
    std::vector<Message> messages = before;
    const std::int64_t dropped = internal::drop_thinking_from(messages, 0);
    if (dropped == 0) return std::nullopt;
    restore_messages(conversation, std::move(messages));
    NUCLEO_LOG_WARN(
        "conversation '{}': conversation.111: {} thinking block(s) written through provider '{}' "
        "(model '{}') left out of the conversation for model '{}' on provider '{}', which binds "
        "thinking to the platform that wrote it",
        conversation.conversation_id(), dropped, it->second, *prior, model.id, provider);
    return before;
}

}  // namespace

struct ProviderClient::Limits {
    std::mutex mutex;
    std::map<std::string, RateLimits> by_model;
    RateLimiterRegistry registry;
    /// conversation.111: the provider instance of every catalog entry (from_config), so a call
    /// knows when the model that answered last was served by another platform. Empty for a
    /// client built directly: no switch is recognized.
    std::map<std::string, std::string> model_providers;
};

ProviderClient::ProviderClient(ProviderConfig config, ProviderInstance dialect,
                               TransportOptions transport)
    : config_(std::move(config)),
      dialect_(std::move(dialect)),
      caps_(read_capabilities(dialect_.capabilities(), config_.plugin)),
      // limits.101-104: the provider's configured limits bound every call of this client.
      transport_(std::make_shared<HttpTransport>([&] {
          transport.limits = config_.transport;
          return std::move(transport);
      }())),
      limits_(std::make_shared<Limits>()) {
    std::tie(cache_policy_, head_ttl_1h_) = read_cache_choices(config_);
    threads_ = read_threads_option(config_);
    if (caps_.auth == "sigv4") {
        AwsSigV4 sig;
        sig.region = config_.credentials.region;
        sig.access_key_id = config_.credentials.access_key_id;
        sig.secret_access_key = config_.credentials.secret_access_key;
        sig.session_token = config_.credentials.session_token;
        TransportOptions opts = transport_->options();
        opts.sigv4 = sig;
        transport_ = std::make_shared<HttpTransport>(std::move(opts));
    }
}

ProviderClient ProviderClient::from_config(const Config& config, const PluginLoader& loader,
                                           std::string_view provider_name) {
    const ProviderConfig& pc = config.provider(provider_name);
    // abi.112: a plugin name that resolves to nothing is named where the config wrote it, and
    // the options are checked against the plugin's schema with their file:line (abi.109).
    std::optional<Plugin> plugin;
    try {
        plugin.emplace(load_provider_plugin(loader, pc));
    } catch (const Error& e) {
        throw Error(e.kind(), (pc.where.empty() ? config.path().string() : pc.where) +
                                  ": providers." + pc.name + ".plugin: " + e.what());
    }
    ProviderClient client(pc, plugin->make_provider(pc.options_json, &pc.options_origin));
    client.set_declaration_defaults(config.defaults());  // budget.102
    for (const ModelSpec& m : config.catalog().all())
        client.limits_->model_providers.emplace(m.id, m.provider);
    return client;
}

BindingDeclarations ProviderClient::with_defaults(const BindingDeclarations& binding) const {
    BindingDeclarations out = binding;
    if (!out.output) out.output = defaults_.output;
    if (!out.depth) out.depth = defaults_.depth;
    return out;
}

void ProviderClient::set_rate_limits(const std::string& model_id, RateLimits limits) {
    std::lock_guard<std::mutex> lock(limits_->mutex);
    limits_->by_model[model_id] = limits;
}

void ProviderClient::check_model(const ModelSpec& model) const {
    if (model.provider.empty() || model.provider == config_.name) return;
    throw Error(ErrorKind::kConfig, "model '" + model.id + "' is served by provider '" +
                                        model.provider + "', but this client is provider '" +
                                        config_.name + "' (plugin '" + config_.plugin +
                                        "'): build the client for '" + model.provider +
                                        "' or pick a model of '" + config_.name + "'");
}

void ProviderClient::check_credentials() const {
    const std::string who = "provider '" + config_.name + "'";
    if (config_.base_url.empty())
        throw Error(ErrorKind::kConfig,
                    who +
                        " has no base_url: set it in nucleo.yaml or the provider's "
                        "base URL variable");
    if ((caps_.auth == "x-api-key" || caps_.auth == "bearer" || caps_.auth == "x-goog-api-key") &&
        config_.credentials.api_key.empty())
        throw Error(ErrorKind::kConfig, who +
                                            " has no api_key: set it in nucleo.yaml (for example "
                                            "through ${ANTHROPIC_API_KEY}, ${OPENAI_API_KEY} or "
                                            "${GEMINI_API_KEY})");
    if (caps_.auth == "sigv4" && (config_.credentials.access_key_id.empty() ||
                                  config_.credentials.secret_access_key.empty()))
        throw Error(ErrorKind::kConfig, who +
                                            " has no AWS credentials: set AWS_ACCESS_KEY_ID and "
                                            "AWS_SECRET_ACCESS_KEY (and AWS_REGION)");
    if (caps_.auth == "sigv4" && config_.credentials.region.empty())
        throw Error(ErrorKind::kConfig, who + " has no AWS region: set AWS_REGION");
}

HttpRequest ProviderClient::build_request(ConversationContext& conversation, const ModelSpec& model,
                                          const CallOptions& options, bool redact_secrets) {
    return build(conversation, model, options, redact_secrets, ThreadMode::kOff, nullptr);
}

HttpRequest ProviderClient::build(ConversationContext& conversation, const ModelSpec& model,
                                  const CallOptions& options, bool redact_secrets, ThreadMode mode,
                                  ThreadUse* thread) {
    check_model_status(model);  // catalog.2: a retired model is refused before anything else
    // A rendered request (secrets shown as ***) is for reading: it needs no key to exist.
    if (!redact_secrets) check_credentials();
    // caching.118: breakpoints are planned only for a model whose provider takes them.
    const FixedContentFormatter formatter(
        model.native_tools && caps_.native_tools,
        model.supports_caching && model.cache_breakpoints == "explicit" && caps_.caching,
        model.tool_changes && caps_.tool_changes);
    const BindingDeclarations binding = with_defaults(options.binding);  // budget.102
    const Depth depth = resolve_depth(conversation, binding);
    // wire.170, wire.171: the core's decisions before any plugin sees the request.
    internal::check_first_turn(config_, caps_, conversation);
    bool thinking =
        internal::thinking_for_call(config_, caps_, conversation, thinking_active(model, depth));
    const std::int64_t max_tokens = output_reserve(conversation, model, binding);
    // caching.105-107: what the plan may use beyond the prepared request.
    const CacheOptions cache = caching::call_cache_options(
        caps_, model, cache_policy_, head_ttl_1h_, formatter.supports_caching());
    // conversation.101: the conversation's kept prepared value, read in place.
    const PreparedConversation* prepared_now =
        &internal::PreparedAccess::prepare(conversation, formatter, thinking, cache);
    // catalog.6: function tools on a model that takes them only without reasoning: the effort
    // `none` (prepared again without thinking, so the answer contract asks for what comes back).
    const bool reasoning_off = internal::reasoning_off_for_tools(
        config_, model, depth, prepared_now->tool_definitions.size());
    if (reasoning_off && thinking) {
        thinking = false;
        prepared_now = &internal::PreparedAccess::prepare(conversation, formatter, thinking, cache);
    }
    const PreparedConversation& prepared = *prepared_now;
    // catalog.6: an assistant prefill (the conversation ends with the model's own turn) is refused
    // here, before anything is sent, where the provider would refuse it.
    if (!prepared.turns.empty() && prepared.turns.back().role == TurnRole::kAssistant) {
        const std::string& id = prepared.turns.back().message_id;
        const std::string which =
            "the conversation ends with an assistant turn (message \"" + id + "\"), a prefill";
        if (model.refuses_prefill)
            throw Error(ErrorKind::kInvalidArgument,
                        which + ", and model \"" + model.id +
                            "\" refuses prefill (its catalog record: refuses: [prefill]); end "
                            "the conversation with a user turn");
        if (thinking)
            throw Error(ErrorKind::kInvalidArgument,
                        which + ", and thinking is on for this call (depth " +
                            std::string(to_string(depth)) + " on model \"" + model.id +
                            "\"): a provider refuses a prefill with thinking; end the "
                            "conversation with a user turn or call at a depth without thinking");
    }
    const std::int64_t thinking_budget = reasoning_reserved(model, depth);
    ThinkingRequest thinking_form = thinking_request(model, depth);
    if (!thinking && thinking_active(model, depth)) {
        // wire.113: thinking_for_call turned this call's thinking off. The model's own lowest
        // switch says so (disabled, else between_tools, else the effort none); a model with none
        // of them (it always thinks) gets nothing, and thinks at its default.
        ThinkingRequest off;
        if (model.thinking.accepts(ThinkingForm::kDisabled)) {
            off.form = "disabled";
        } else if (model.thinking.accepts(ThinkingForm::kBetweenTools)) {
            off.form = "between_tools";
        } else if (model.thinking.accepts_effort("none")) {
            off.effort = "none";
        }
        thinking_form = off;
    }
    if (reasoning_off) thinking_form = ThinkingRequest{.form = {}, .effort = "none"};
    const bool stream = streams(options);
    RequestExtras extras;
    extras.previous_message_id = internal::diagnosed_previous_answer(model, conversation);
    extras.provider_blocks = internal::provider_blocks_kept(caps_);
    // wire.211: with threads on for the instance, the dialect and the model, the whole request
    // creates a thread; it is built and audited whole even when the call continues one, so the
    // rule book judges every call's conversation alike.
    internal::ThreadCall planned;
    internal::ThreadCall create;
    if (mode != ThreadMode::kOff && !redact_secrets && threads_ && caps_.threads && model.threads) {
        planned = internal::plan_thread(config_.name, model, thinking_form, conversation, prepared);
        if (mode == ThreadMode::kCreate) planned.kind = internal::ThreadCall::Kind::kCreate;
        create = planned;
        create.kind = internal::ThreadCall::Kind::kCreate;
        create.previous_message_id.clear();
        extras.thread = &create;
    }
    // limits.143: a body the plugin writes past the cap is refused while it is written.
    const plugins_detail::BodyLimit body_limit(request_body_limit_);
    // caching.110: the runs of turns encoded before are reused (abi.108); else one whole encode.
    std::optional<internal::SplitRequest> split;
    if (turn_fragment_cache_) {
        split = internal::encode_with_fragments(
            dialect_, caps_, config_.name + '\n' + config_.plugin, conversation, prepared,
            [&](rapidjson::StringBuffer& buf, const internal::PreparedSlice& slice) {
                write_provider_request(buf, model, max_tokens, thinking, thinking_budget,
                                       thinking_form, slice.with_head && stream,
                                       conversation.conversation_id(), config_, prepared, extras,
                                       &slice);
            });
    }
    HttpRequest http;
    if (split) {
        rapidjson::Document head;
        head.Parse(split->head.data(), split->head.size());
        http = read_http_head(head, "plugin '" + config_.plugin + "' encode_split", config_);
        http.body = std::move(split->body);
    } else {
        // limits.134: the request document is written into this thread's scratch.
        const internal::DocumentScratch scratch;
        rapidjson::StringBuffer& request = scratch.buffer();
        write_provider_request(request, model, max_tokens, thinking, thinking_budget, thinking_form,
                               stream, conversation.conversation_id(), config_, prepared, extras);
        http = encode_http_request(
            dialect_, std::string_view(request.GetString(), request.GetSize()), config_);
    }
    std::string_view base(config_.base_url);
    while (!base.empty() && base.back() == '/') base.remove_suffix(1);
    const auto finish = [&](HttpRequest& req, const internal::AuditedCall& audited,
                            const ProviderCapabilities& rules) {
        for (const auto& h : options.extra_headers) req.headers.push_back(h);
        // obs.105: every request names the runtime, unless the plugin or the caller named one.
        const bool has_agent =
            std::any_of(req.headers.begin(), req.headers.end(), [](const auto& h) {
                return h.first.size() == 10 &&
                       std::equal(h.first.begin(), h.first.end(), "user-agent", [](char a, char b) {
                           return std::tolower(static_cast<unsigned char>(a)) == b;
                       });
            });
        if (!has_agent) req.headers.emplace_back("user-agent", user_agent());
        std::string secret = config_.credentials.api_key;
        if (redact_secrets) secret = secret.empty() ? "<unset>" : "***";
        if (caps_.auth == "x-api-key") req.headers.emplace_back("x-api-key", secret);
        if (caps_.auth == "bearer") req.headers.emplace_back("authorization", "Bearer " + secret);
        // gemini.8: Gemini's API key header.
        if (caps_.auth == "x-goog-api-key") req.headers.emplace_back("x-goog-api-key", secret);
        // wire.150: the request as it would leave, audited before anything is sent (or shown).
        internal::audit_encoded_request(
            config_, rules, std::string_view(req.url).substr(base.size()), req, audited);
        if (caps_.auth == "sigv4" && redact_secrets)
            req.headers.emplace_back("authorization", "AWS4-HMAC-SHA256 *** (signed at send time)");
        if (redact_secrets) req.url = redact_url(req.url);  // limits.105
    };
    // caching.113: a body joined from kept chunks is audited over their kept records (wire.173).
    const contract::SplitBody pieces = split ? split->pieces() : contract::SplitBody{};
    finish(http, {&prepared, max_tokens, request_body_limit_, nullptr, split ? &pieces : nullptr},
           caps_);
    if (thread != nullptr) {
        thread->kind = extras.thread != nullptr ? "create" : "";
        thread->digest = extras.thread != nullptr ? planned.digest : "";
    }
    if (planned.kind != internal::ThreadCall::Kind::kContinue) return http;
    // wire.211: the continue sends the turns after the thread's last answer, without the head
    // (the provider holds the system and the tools). Its turns begin inside a tool round, so only
    // the generic checks apply; the whole request above passed the rule book.
    extras.thread = &planned;
    const internal::PreparedSlice slice{planned.first_new_turn, prepared.turns.size(), false};
    const internal::DocumentScratch scratch;
    rapidjson::StringBuffer& request = scratch.buffer();
    write_provider_request(request, model, max_tokens, thinking, thinking_budget, thinking_form,
                           stream, conversation.conversation_id(), config_, prepared, extras,
                           &slice);
    HttpRequest continued = encode_http_request(
        dialect_, std::string_view(request.GetString(), request.GetSize()), config_);
    ProviderCapabilities generic = caps_;
    generic.wire_family.clear();
    finish(continued, {nullptr, max_tokens, request_body_limit_, nullptr, nullptr}, generic);
    if (thread != nullptr) thread->kind = "continue";
    return continued;
}

bool ProviderClient::streams(const CallOptions& options) const noexcept {
    return caps_.streaming && options.stream != nullptr && options.stream->any();
}

LLMResponse ProviderClient::call(ConversationContext& conversation, const ModelSpec& model,
                                 const CallOptions& options) {
    check_model(model);  // answers.108: before any request
    std::optional<std::vector<Message>> before_switch = leave_thinking_of_another_platform(
        conversation, model, limits_->model_providers, config_.name);
    std::vector<CallAttempt> record;
    LLMResponse r;
    try {
        try {
            r = call_once(conversation, model, options, record);
        } catch (const OutputTruncationRetryException& e) {
            // budget.7: the retry loop re-enters for a one-shot retry at the escalated budget. A
            // second truncation at the ceiling surfaces as UncorrectableLLMException from there.
            NUCLEO_LOG_INFO("{}; model {}", e.what(), model.id);
            if (streams(options) && options.stream->on_discard)
                options.stream->on_discard(e.what());
            r = call_once(conversation, model, options, record);
            r.escalated = true;
        }
    } catch (Error& e) {
        // answers.109: the calls billed before the failure go out with the error, which is
        // rethrown as the same object (its type, ContextOverflowException for one, is kept).
        e.set_billed_calls(std::move(record));
        // conversation.111: a failed call leaves the conversation as it was, thinking included.
        if (before_switch) restore_messages(conversation, std::move(*before_switch));
        throw;
    } catch (...) {
        if (before_switch) restore_messages(conversation, std::move(*before_switch));
        throw;
    }
    // answers.105: the response's usage and cost are those of every billed call.
    r.calls = std::move(record);
    r.usage = {};
    r.cost = 0;
    for (const CallAttempt& a : r.calls) {
        r.usage += a.usage;
        r.cost += a.cost;
    }
    return r;
}

LLMResponse ProviderClient::call_once(ConversationContext& conversation, const ModelSpec& model,
                                      const CallOptions& options,
                                      std::vector<CallAttempt>& record) {
    // obs.101: one record for the call, and one per HTTP attempt from the transport.
    internal::CallObservation observed(config_.name, config_.plugin, model,
                                       conversation.conversation_id(),
                                       transport_->options().retry.max_attempts, record);
    try {
        LLMResponse r = call_once_unobserved(conversation, model, options, record);
        observed.succeeded(r.model, r.cache_miss, r.provider_blocks_dropped, r.thread);
        return r;
    } catch (const std::exception& e) {
        observed.failed(e);
        throw;
    }
}

std::string ProviderClient::not_found_hint(const std::string& url) const {
    std::string where = config_.base_url_where;
    if (!config_.base_url_variables.empty()) {
        std::string names;
        for (const std::string& v : config_.base_url_variables)
            names += (names.empty() ? "" : ", ") + ("${" + v + "}");
        where += (where.empty() ? "from " : ", from ") + names;
    }
    std::string_view base(config_.base_url);
    while (!base.empty() && base.back() == '/') base.remove_suffix(1);
    std::string note;
    if (caps_.wire_family == "openai-chat" && !base.ends_with("/v1"))
        note = "an OpenAI base URL usually ends in /v1";
    std::string inside = where;
    if (!note.empty()) inside += (inside.empty() ? "" : "; ") + note;
    return "; 404 at " + redact_url(url) + ": check providers." + config_.name + ".base_url" +
           (inside.empty() ? std::string() : " (" + inside + ")");
}

LLMResponse ProviderClient::call_once_unobserved(ConversationContext& conversation,
                                                 const ModelSpec& model, const CallOptions& options,
                                                 std::vector<CallAttempt>& record) {
    ThreadUse thread;
    HttpRequest request = build(conversation, model, options, false, ThreadMode::kPlan, &thread);
    const std::size_t provider_blocks_dropped =
        internal::provider_blocks_left_out(config_, caps_, conversation);
    const std::int64_t max_tokens =
        output_reserve(conversation, model, with_defaults(options.binding));

    // budget.6: the reservation is the conversation's input tokens plus the output reserve.
    RateLimiter* limiter = nullptr;
    {
        std::lock_guard<std::mutex> lock(limits_->mutex);
        // Limits set on this client win; else the catalog entry's (config `rate_limits`).
        auto it = limits_->by_model.find(model.id);
        if (it != limits_->by_model.end()) {
            limiter = &limits_->registry.for_model(model.id, it->second);
        } else if (model.requests_per_minute > 0 || model.tokens_per_minute > 0) {
            limiter = &limits_->registry.for_model(
                model.id, {model.requests_per_minute, model.tokens_per_minute});
        }
    }
    const std::int64_t input_estimate = options.input_token_estimate
                                            ? options.input_token_estimate(conversation)
                                            : static_cast<std::int64_t>(request.body.size() / 4);
    std::int64_t reserved = 0;
    if (limiter != nullptr)
        reserved = limiter->acquire(input_estimate + max_tokens, options.cancel);

    // Streamed: each event is framed and decoded as its bytes arrive (ABI 1.2 decode_event);
    // the answer is still the plugin's decode of the whole body, below.
    const bool streamed = streams(options);
    const bool event_deltas = streamed && dialect_.has_decode_event();
    const auto sent_at = std::chrono::steady_clock::now();
    HttpResponse http;
    const auto send_and_decode = [&](const HttpRequest& req) {
        internal::StreamFramer framer(internal::parse_stream_framing(caps_.stream_framing));
        BodyChunkCallback on_chunk;
        // The chunk callback runs inside libcurl's C frames, which an exception must never
        // cross: a throw (the host's callback, the plugin's decode_event) is kept, the deltas
        // stop, and it is rethrown once the transfer returned — the answer is then not appended.
        std::exception_ptr failed;
        if (event_deltas) {
            on_chunk = [&](std::string_view chunk) {
                if (failed) return;
                try {
                    framer.feed(chunk, [&](std::string_view name, std::string_view data) {
                        deliver_deltas(dialect_.decode_event(name, data), *options.stream);
                    });
                } catch (...) {
                    failed = std::current_exception();
                }
            };
        }
        http = transport_->send(req, options.cancel, on_chunk);
        if (failed) std::rethrow_exception(failed);
        try {
            return dialect_.decode(static_cast<std::int32_t>(http.status),
                                   headers_json(http.headers), http.body);
        } catch (const Error& e) {
            // answers.112: a 404 names the URL called and what sets the base URL, on the same
            // line; not a 404 the provider explained with its own error code (wire.211's
            // thread_not_found), which says nothing of the base URL.
            if (http.status != 404 || typeid(e) != typeid(Error) ||
                !internal::provider_error_code(e.what()).empty())
                throw;
            throw Error(e.kind(), e.what() + not_found_hint(req.url));
        }
    };
    std::string normalized;
    try {
        normalized = send_and_decode(request);
    } catch (const Error& e) {
        // wire.211: a continue the provider cannot serve (the thread expired, was lost, was
        // continued already or differs) is sent again whole with a new thread, once.
        const std::string code = internal::provider_error_code(e.what());
        if (thread.kind != "continue" || !internal::replays_thread(code)) throw;
        NUCLEO_LOG_INFO(
            "provider '{}': the thread continue was refused ({}); replaying the whole "
            "conversation with a new thread",
            config_.name, code);
        request = build(conversation, model, options, false, ThreadMode::kCreate, &thread);
        normalized = send_and_decode(request);
        thread.kind = "replay";
    }
    const std::string who = "provider '" + config_.name + "' (plugin '" + config_.plugin +
                            "', HTTP " + std::to_string(http.status) + ")";
    // answers.107: never a raw invalid byte into the conversation (a store such as PostgreSQL
    // refuses it, and the turn would be lost); one line in the log per answer.
    if (const std::size_t replaced = replace_invalid_utf8(normalized); replaced > 0)
        NUCLEO_LOG_WARN("{}: the answer held {} bytes of invalid UTF-8, each replaced with U+FFFD",
                        who, replaced);

    // answers.106: the core checks what a plugin returns before anything of it is kept.
    rapidjson::Document d;
    // limits.120: the plugin's output is read under the document depth limit, named when hit.
    if (auto refusal = json_guard::parse(d, normalized, json_guard::kDocumentMaxDepth))
        throw Error(ErrorKind::kProtocol,
                    who + ": the plugin's normalized response: " + refusal->text());
    if (!d.IsObject() || !d.HasMember("blocks") || !d["blocks"].IsArray())
        throw Error(ErrorKind::kProtocol,
                    who +
                        ": the plugin's normalized response lacks a \"blocks\" "
                        "array; answer began: " +
                        first_bytes(http.body));

    LLMResponse out;
    out.thread = thread.kind;
    out.provider_blocks_dropped = provider_blocks_dropped;
    out.cache_miss = read_cache_miss(d);
    // caching.132: the plan this request was built with is the conversation's kept one.
    if (const internal::KeptPrepare* kept = internal::PreparedAccess::peek(conversation))
        out.cache_miss.plan_moved = kept->plan_moved;
    out.model_id = model.id;
    out.max_tokens = max_tokens;
    out.attempts = http.attempts;
    out.stop_reason = checked_stop_reason(d, who);
    // answers.113: an answer that names no model (Bedrock's Converse never does) was given by the
    // wire model called.
    if (d.HasMember("model") && d["model"].IsString()) out.model = d["model"].GetString();
    if (out.model.empty()) out.model = model.wire_model.empty() ? model.id : model.wire_model;
    out.usage = checked_usage(d, who);
    if (limiter != nullptr)
        limiter->settle(reserved, out.usage.total_input_tokens() + out.usage.output_tokens);

    // From here the provider's usage is known: the call is billed, and on the record whatever
    // follows (answers.105, answers.109).
    CallAttempt attempt;
    attempt.stop_reason = out.stop_reason;
    attempt.usage = out.usage;
    attempt.cost =
        model.cost(out.usage.input_tokens, out.usage.output_tokens, out.usage.cache_write_tokens,
                   out.usage.cache_read_tokens, out.usage.cache_write_1h_tokens);
    attempt.max_tokens = max_tokens;
    attempt.http_attempts = http.attempts;
    attempt.latency = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - sent_at);

    // Every block must be a block of the conversation document.
    Message incoming;
    incoming.direction = Direction::kIncoming;
    const internal::JsonPath root("response");
    const internal::JsonPath blocks = root.key("blocks");
    std::size_t i = 0;
    try {
        for (const auto& b : d["blocks"].GetArray()) {
            incoming.blocks.push_back(internal::read_block(b, internal::JsonPath(&blocks, i++)));
        }
    } catch (const Error& e) {
        attempt.status = CallStatus::kRejected;
        record.push_back(attempt);
        throw Error(ErrorKind::kProtocol,
                    who + ": the normalized response has a block off its shape: " + e.what());
    }
    // answers.110: a provider block belongs to the wire family of the plugin that decoded it,
    // whatever the plugin wrote.
    for (ContentBlock& b : incoming.blocks)
        if (auto* p = b.get_if<ProviderBlock>()) p->wire_family = caps_.wire_family;
    // caching.131: the answer's own id, named by the next call's cache diagnosis.
    if (d.HasMember("response_id") && d["response_id"].IsString())
        incoming.provider_message_id = d["response_id"].GetString();
    // wire.211: the answer of a threaded call keeps what its thread holds, for the next continue.
    if (!thread.kind.empty() && !incoming.provider_message_id.empty())
        incoming.thread_digest = thread.digest;

    // answers.104: the input left the model no room to answer. A larger output budget cannot
    // help (the window is input plus output), so it is never escalated: the caller compacts
    // (ContextWindowManager) or gives up. The conversation is unchanged.
    if (out.stop_reason == "context_window_exceeded") {
        // answers.109: the provider billed the call; it is on the error's record.
        attempt.status = CallStatus::kContextWindowExceeded;
        record.push_back(attempt);
        throw ContextOverflowException(
            who + ": model '" + model.id + "' stopped at its context window (" +
            std::to_string(out.usage.total_input_tokens()) + " input tokens, " +
            std::to_string(max_tokens) +
            " output tokens reserved); compact the conversation before the next call");
    }

    // Truncation: the answer never joins the conversation (a cut-off tool call never reaches a
    // tool); the sent message's budget is raised and the caller retries once (budget.7).
    // budget.101: output that reached the requested ceiling is truncation whatever the stop reason
    // says (a provider that reports end_turn at the limit cut the answer all the same).
    if (out.stop_reason == "max_tokens" || out.usage.output_tokens >= max_tokens) {
        if (out.stop_reason != "max_tokens")
            NUCLEO_LOG_INFO(
                "{}: {} output tokens reached the requested ceiling of {} (stop reason {}): "
                "taken as truncation",
                who, out.usage.output_tokens, max_tokens, out.stop_reason);
        attempt.status = CallStatus::kTruncated;
        record.push_back(attempt);
        escalate_truncation(conversation, model, max_tokens);
    }

    // Text-based tool calling (tools.13): calls written in the answer's
    // envelope become ToolUseBlocks with ids the runtime mints from the name and the place.
    if (!(model.native_tools && caps_.native_tools) && !conversation.declared_tools().empty()) {
        std::string text;
        for (const auto& b : incoming.blocks)
            if (const auto* t = b.get_if<TextBlock>()) text += t->text;
        rapidjson::Document envelope;
        std::string json;
        try {
            json = extract_answer_json(text);
        } catch (const Error&) {
            json.clear();  // plain prose: no tool calls
        }
        const bool parsed = !json.empty() && !json_guard::parse(envelope, json);  // limits.120
        if (parsed && envelope.IsObject() && envelope.HasMember("tool_calls") &&
            envelope["tool_calls"].IsArray()) {
            // tools.13 and tools.101 mint from the name and the place in the turn; the turn's
            // position in the conversation is added so that ids stay unique across turns (a result
            // must name exactly one call).
            const std::size_t turn = conversation.messages().size();
            std::size_t place = 0;
            for (const auto& call : envelope["tool_calls"].GetArray()) {
                if (!call.IsObject() || !call.HasMember("name") || !call["name"].IsString())
                    continue;
                const std::string name = call["name"].GetString();
                const std::string input =
                    call.HasMember("input") ? internal::json_compact(call["input"]) : "{}";
                incoming.blocks.emplace_back(
                    ToolUseBlock{mint_tool_call_id(name, place++, turn), name, input});
            }
            if (place > 0 && out.stop_reason == "end_turn") out.stop_reason = "tool_use";
        }
    }

    out.cost = attempt.cost;
    attempt.stop_reason = out.stop_reason;
    record.push_back(attempt);
    if (streamed && !event_deltas) deliver_whole(incoming, out.usage, *options.stream);
    // A host that cancelled while the answer streamed (a user's interrupt during the display) has
    // stopped showing it: the answer is abandoned like a transfer cut short, never half-kept.
    if (streamed && options.cancel != nullptr && options.cancel->cancelled())
        throw Error(ErrorKind::kTransport,
                    "provider '" + config_.name +
                        "': cancelled while the answer streamed; it was not kept");
    // answers.102: an empty answer (after tool results, a refusal, a content filter) is an
    // answer, but it is not stored: an assistant turn with nothing a provider can carry would make
    // the next request invalid (providers refuse empty non-final assistant content). The caller
    // sees the stop reason and the usage; the conversation is unchanged.
    if (!has_content(incoming)) {
        out.appended = false;
        out.message = std::move(incoming);
        return out;
    }
    conversation.add_message(incoming);
    conversation.set_prior_spec_id(model.id);
    out.message = conversation.messages().back();
    return out;
}

}  // namespace nucleo
