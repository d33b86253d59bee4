// The provider dialects' shared JSON reading and writing (see provider_common.hpp).

#include "provider_common.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <vector>

#include <rapidjson/error/en.h>

namespace nucleo::providers {

using plugin::Failure;

const Value* string_member(const Value& object, std::string_view key) {
    const Value* v = member(object, key);
    return v != nullptr && v->IsString() ? v : nullptr;
}

bool is_blank(std::string_view text) {
    return std::all_of(text.begin(), text.end(), [](char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
    });
}

void refuse(std::string_view plugin, const std::string& what) {
    throw Failure(NUCLEO_ERR_INVALID_ARGUMENT, std::string(plugin) + ": " + what);
}

namespace {

/// limits.132: json_guard::parse for a text parsed in place (kParseInsituFlag): `text` holds
/// `length` bytes of JSON followed by NULs; strings of `doc` point into it. At most `max_depth`
/// levels, checked while parsing; no duplicate key (noted while parsing, named by the walk only
/// when there is one); no raw NUL among the `length` bytes. On a refusal `doc` is left null.
std::optional<json_guard::Refusal> parse_insitu_guarded(rapidjson::Document& doc, char* text,
                                                        std::size_t length, unsigned max_depth) {
    doc.SetNull();
    if (auto nul = json_guard::find_nul(std::string_view(text, length))) return nul;
    std::optional<json_guard::Refusal> refusal;
    bool duplicate_seen = false;
    auto generate = [&](rapidjson::Document& target) {
        rapidjson::InsituStringStream in(text);
        rapidjson::Reader reader;
        json_guard::KeyWatch<rapidjson::Document> watch(target);
        json_guard::DepthGuard<json_guard::KeyWatch<rapidjson::Document>> guard(watch, max_depth);
        // Recursive descent: the guard stops the parse at the first value past `max_depth`, so
        // the recursion is as deep as the DOM walks that follow it (limits.132).
        const rapidjson::ParseResult result = reader.Parse<rapidjson::kParseInsituFlag>(in, guard);
        duplicate_seen = watch.duplicate_seen();
        if (!result.IsError()) return true;
        refusal = json_guard::Refusal{
            "byte offset " + std::to_string(result.Offset()), {}, result.Offset()};
        refusal->reason = guard.exceeded()
                              ? json_guard::depth_reason(max_depth)
                              : std::string(rapidjson::GetParseError_En(result.Code()));
        if (guard.exceeded()) refusal->kind = json_guard::Refusal::Kind::kDepth;
        return false;
    };
    doc.Populate(generate);
    if (!refusal && duplicate_seen)
        refusal = json_guard::find_duplicate_key(static_cast<const rapidjson::Value&>(doc));
    if (refusal) doc.SetNull();
    return refusal;
}

}  // namespace

void parse_request(std::string_view json, std::string& buffer, rapidjson::Document& doc,
                   std::string_view plugin) {
    buffer.reserve(json.size() + 16);
    buffer.assign(json);
    buffer.append(15, '\0');  // trailing NULs end the parse like the terminator does
    // limits.132: the same guard as every other JSON text a plugin reads (limits.120 to
    // limits.122), at the depth of what the runtime keeps: the request holds the conversation.
    if (const auto refusal =
            parse_insitu_guarded(doc, buffer.data(), json.size(), json_guard::kDocumentMaxDepth)) {
        refuse(plugin, "the provider request is not JSON: " + refusal_words(*refusal));
    }
}

namespace {

/// One pool per buffer type for the whole plugin, under a mutex (limits.134). Not thread_local:
/// a plugin is unloaded with dlclose, and thread-local storage of an unloaded library is what
/// LeakSanitizer's exit scan (and any tool walking the threads' TLS) trips on.
template <class T>
struct ScratchPool {
    std::mutex mu;
    std::vector<std::unique_ptr<T>> resting;
    std::size_t keep_bytes = kScratchKeepBytes;
};

template <class T>
ScratchPool<T>& scratch_pool() {
    static ScratchPool<T> pool;
    return pool;
}

std::size_t capacity_of(const std::string& s) noexcept {
    return s.capacity();
}
std::size_t capacity_of(const rapidjson::StringBuffer& b) noexcept {
    return b.stack_.GetCapacity();
}
void clear(std::string& s) noexcept {
    s.clear();
}
void clear(rapidjson::StringBuffer& b) noexcept {
    b.Clear();
}

}  // namespace

template <class T>
Scratch<T>::Scratch() {
    ScratchPool<T>& pool = scratch_pool<T>();
    std::lock_guard<std::mutex> lock(pool.mu);
    if (pool.resting.empty()) {
        value_ = std::make_unique<T>();
    } else {
        value_ = std::move(pool.resting.back());
        pool.resting.pop_back();
    }
}

template <class T>
Scratch<T>::~Scratch() {
    if (!value_) return;  // moved from
    ScratchPool<T>& pool = scratch_pool<T>();
    std::lock_guard<std::mutex> lock(pool.mu);
    // limits.134: above the bound, or beyond the pool's size, the buffer is freed with the lease.
    if (capacity_of(*value_) > pool.keep_bytes || pool.resting.size() >= kScratchPoolSize) return;
    clear(*value_);
    try {
        pool.resting.push_back(std::move(value_));
    } catch (...) {
        // No room for the pool's slot: the buffer is freed with the lease, nothing is lost.
    }
}

template <class T>
ScratchKept scratch_kept() noexcept {
    ScratchKept kept;
    ScratchPool<T>& pool = scratch_pool<T>();
    std::lock_guard<std::mutex> lock(pool.mu);
    for (const auto& b : pool.resting) {
        ++kept.buffers;
        kept.bytes += capacity_of(*b);
    }
    return kept;
}

template <class T>
void set_scratch_keep_bytes(std::size_t bytes) noexcept {
    ScratchPool<T>& pool = scratch_pool<T>();
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.keep_bytes = bytes == 0 ? kScratchKeepBytes : bytes;
}

template class Scratch<std::string>;
template class Scratch<rapidjson::StringBuffer>;
template ScratchKept scratch_kept<std::string>() noexcept;
template ScratchKept scratch_kept<rapidjson::StringBuffer>() noexcept;
template void set_scratch_keep_bytes<std::string>(std::size_t) noexcept;
template void set_scratch_keep_bytes<rapidjson::StringBuffer>(std::size_t) noexcept;

void check_instance_config(std::string_view config_json, std::string_view plugin) {
    if (config_json.empty()) return;
    rapidjson::Document doc;
    if (json_guard::parse(doc, config_json) || !doc.IsObject()) {  // limits.132
        throw Failure(NUCLEO_ERR_CONFIG,
                      std::string(plugin) + ": the instance configuration is not a JSON object");
    }
}

bool WirePlan::anchored(std::size_t turn, std::size_t block) const {
    return std::find(anchors.begin(), anchors.end(), std::make_pair(turn, block)) != anchors.end();
}

namespace {

std::size_t plan_index(std::string_view plugin, const Value& v, const char* what) {
    if (!v.IsUint64())
        refuse(plugin,
               std::string("prepared.cache_plan.") + what + " is not a non-negative integer");
    return static_cast<std::size_t>(v.GetUint64());
}

}  // namespace

WirePlan read_cache_plan(const Value& prepared, std::string_view plugin, std::size_t max,
                         std::string_view api) {
    const auto refuse_plan = [plugin](const std::string& why) { refuse(plugin, why); };
    WirePlan plan;
    const Value* p = member(prepared, "cache_plan");
    if (p == nullptr || p->IsNull()) return plan;
    if (!p->IsObject()) refuse_plan("prepared.cache_plan is not an object");
    if (const Value* s = member(*p, "system_block"); s != nullptr && !s->IsNull()) {
        plan.system_block = plan_index(plugin, *s, "system_block");
    }
    if (const Value* a = member(*p, "turn_anchors"); a != nullptr && !a->IsNull()) {
        if (!a->IsArray()) refuse_plan("prepared.cache_plan.turn_anchors is not an array");
        for (const Value& anchor : a->GetArray()) {
            const Value* turn = anchor.IsObject() ? member(anchor, "turn") : nullptr;
            const Value* block = anchor.IsObject() ? member(anchor, "block") : nullptr;
            if (turn == nullptr || block == nullptr) {
                refuse_plan(
                    "prepared.cache_plan.turn_anchors holds an entry without \"turn\" and "
                    "\"block\"");
            }
            const auto pos = std::make_pair(plan_index(plugin, *turn, "turn_anchors.turn"),
                                            plan_index(plugin, *block, "turn_anchors.block"));
            if (plan.anchored(pos.first, pos.second)) {
                refuse_plan("prepared.cache_plan.turn_anchors names turn " +
                            std::to_string(pos.first) + " block " + std::to_string(pos.second) +
                            " twice");
            }
            plan.anchors.push_back(pos);
        }
    }
    if (const Value* a = member(*p, "automatic"); a != nullptr && !a->IsNull()) {
        if (!a->IsBool()) refuse_plan("prepared.cache_plan.automatic is not a boolean");
        plan.automatic = a->GetBool();
    }
    if (const Value* t = member(*p, "system_ttl"); t != nullptr && !t->IsNull()) {
        if (!t->IsString() || (view(*t) != "1h" && view(*t) != "5m"))
            refuse_plan("prepared.cache_plan.system_ttl is not \"5m\" or \"1h\"");
        plan.system_1h = view(*t) == "1h";
    }
    if (plan.total() > max) {
        refuse_plan("the cache plan asks for " + std::to_string(plan.total()) +
                    " breakpoints; the " + std::string(api) + " allows at most " +
                    std::to_string(max));
    }
    if (const Value* n = member(*p, "breakpoints"); n != nullptr && !n->IsNull()) {
        if (!n->IsUint64() || n->GetUint64() != plan.total()) {
            refuse_plan(
                "prepared.cache_plan.breakpoints does not match its system_block and "
                "turn_anchors (" +
                std::to_string(plan.total()) + " marks)");
        }
    }
    return plan;
}

RequestHead read_request_head(const Value& request, std::string_view plugin) {
    if (!request.IsObject()) refuse(plugin, "the provider request is not a JSON object");
    if (const Value* v = member(request, "schema_version");
        v != nullptr && !(v->IsInt() && v->GetInt() == 1)) {
        refuse(plugin, "schema_version: unsupported (this plugin reads version 1)");
    }
    RequestHead head;
    const Value* model = member(request, "model");
    if (model == nullptr || !model->IsObject()) {
        refuse(plugin, "model: missing (an object is required)");
    }
    for (const char* key : {"wire_model", "id"}) {  // id: a catalog entry whose wire name is its id
        if (const Value* v = string_member(*model, key); v != nullptr && v->GetStringLength() > 0) {
            head.wire_model = view(*v);
            break;
        }
    }
    if (head.wire_model.empty()) refuse(plugin, "model.wire_model: a non-empty string is required");
    if (const Value* c = member(*model, "caching"); c != nullptr && !c->IsNull()) {
        const std::string_view k = c->IsString() ? view(*c) : std::string_view();
        if (k != "explicit" && k != "automatic" && k != "none") {
            refuse(plugin, "model.caching: expected \"explicit\", \"automatic\" or \"none\"");
        }
        head.caching = k;
    }
    if (const Value* key = member(request, "cache_key"); key != nullptr && !key->IsNull()) {
        if (!key->IsString())
            refuse(plugin, "cache_key: expected a string (the conversation's id)");
        head.cache_key = view(*key);
    }

    const Value* max_tokens = member(request, "max_tokens");
    if (max_tokens == nullptr || !max_tokens->IsInt64()) {
        refuse(plugin,
               "max_tokens: missing (a positive integer is required: the resolved output reserve)");
    }
    head.max_tokens = max_tokens->GetInt64();
    if (head.max_tokens <= 0) {
        refuse(plugin, "max_tokens is " + std::to_string(head.max_tokens) +
                           "; a positive integer is required (the resolved output reserve)");
    }

    if (const Value* s = member(request, "stream"); s != nullptr && !s->IsNull()) {
        if (!s->IsBool()) refuse(plugin, "stream: expected a boolean");
        head.stream = s->GetBool();
    }
    if (const Value* ttl = member(request, "cache_ttl"); ttl != nullptr && !ttl->IsNull()) {
        if (!ttl->IsString()) refuse(plugin, "cache_ttl: not a string (\"5m\" or \"1h\")");
        if (view(*ttl) != "5m" && view(*ttl) != "1h") {
            refuse(plugin, "cache_ttl: \"" + std::string(view(*ttl)) +
                               "\" is not a cache TTL (\"5m\" or \"1h\")");
        }
        head.cache_ttl = view(*ttl);
    }
    if (const Value* thinking = member(request, "thinking");
        thinking != nullptr && !thinking->IsNull()) {
        if (!thinking->IsObject()) refuse(plugin, "thinking: expected an object");
        const Value* active = member(*thinking, "active");
        if (active != nullptr && active->IsTrue()) {
            const Value* budget = member(*thinking, "budget_tokens");
            if (budget == nullptr || !budget->IsInt64() || budget->GetInt64() < 0) {
                refuse(plugin,
                       "thinking.budget_tokens: a non-negative integer is required when "
                       "thinking is active");
            }
            head.thinking_active = true;
            head.thinking_budget = budget->GetInt64();
        }
        for (auto [key, slot] :
             {std::pair<const char*, std::string_view*>{"form", &head.thinking_form},
              std::pair<const char*, std::string_view*>{"effort", &head.thinking_effort}}) {
            const Value* v = member(*thinking, key);
            if (v == nullptr || v->IsNull()) continue;
            if (!v->IsString() || v->GetStringLength() == 0) {
                refuse(plugin, std::string("thinking.") + key + ": expected a non-empty string");
            }
            *slot = view(*v);
        }
        // A request of an older core names no form: an active call there is the enabled form. A
        // request with an effort and no form (OpenAI, Nova) keeps its empty form.
        if (head.thinking_form.empty() && head.thinking_effort.empty() && head.thinking_active)
            head.thinking_form = "enabled";
        const std::string_view f = head.thinking_form;
        if (!f.empty() && f != "enabled" && f != "adaptive" && f != "between_tools" &&
            f != "disabled") {
            refuse(plugin,
                   "thinking.form: \"" + std::string(f) +
                       "\" is not a thinking form (enabled, adaptive, between_tools, disabled)");
        }
        if (f == "enabled" && !head.thinking_active) {
            refuse(plugin,
                   "thinking.form: \"enabled\" needs thinking.active and its budget_tokens");
        }
    }
    if (const Value* options = member(request, "options");
        options != nullptr && !options->IsNull()) {
        if (!options->IsObject()) refuse(plugin, "options: expected an object");
        head.options = options;
    }
    const Value* prepared = member(request, "prepared");
    if (prepared == nullptr || !prepared->IsObject()) {
        refuse(plugin, "prepared: missing (an object is required)");
    }
    head.prepared = prepared;
    return head;
}

BlockKind block_kind(std::string_view t) {
    switch (t.size()) {  // by length first: each comparison is then one fixed-size compare
        case 4:
            if (t == "text") return BlockKind::kText;
            if (t == "json") return BlockKind::kJson;
            if (t == "file") return BlockKind::kFile;
            break;
        case 5:
            if (t == "skill") return BlockKind::kSkill;
            if (t == "image") return BlockKind::kImage;
            break;
        case 8:
            if (t == "tool_use") return BlockKind::kToolUse;
            if (t == "thinking") return BlockKind::kThinking;
            break;
        case 11:
            if (t == "tool_result") return BlockKind::kToolResult;
            break;
        case 17:
            if (t == "redacted_thinking") return BlockKind::kRedactedThinking;
            break;
        default:
            break;
    }
    return BlockKind::kOther;
}

BlockKind block_kind_of(const Value& block, std::string_view plugin,
                        const std::function<std::string()>& where) {
    if (!block.IsObject()) refuse(plugin, where() + ": a block must be a JSON object");
    const Value* type = string_member(block, "type");
    if (type == nullptr) refuse(plugin, where() + ".type: a string is required");
    const BlockKind kind = block_kind(view(*type));
    if (kind == BlockKind::kOther) {
        refuse(plugin, where() + ": block type \"" + std::string(view(*type)) +
                           "\" cannot be sent (text, json, skill, image, file, tool_use, "
                           "tool_result, thinking, redacted_thinking)");
    }
    return kind;
}

std::string refusal_words(const json_guard::Refusal& refusal) {
    if (refusal.offset == json_guard::Refusal::kNoOffset)
        return refusal.reason + " at " + refusal.where;
    return refusal.reason + " at byte " + std::to_string(refusal.offset);
}

std::string quote_first_bytes(std::string_view body, std::size_t limit) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::size_t n = std::min(body.size(), limit);
    while (n < body.size() && n > 0 && (static_cast<unsigned char>(body[n]) & 0xC0U) == 0x80U) --n;
    std::string out = "\"";
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(body[i]);
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else if (c < 0x20 || c == 0x7F) {
            out.append("\\x");
            out.push_back(kHex[c >> 4U]);
            out.push_back(kHex[c & 0xFU]);
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    out.push_back('"');
    if (n < body.size()) out.append("...");
    return out;
}

void off_format(std::string_view plugin, int32_t http_status, const std::string& what,
                std::string_view body) {
    throw Failure(NUCLEO_ERR_PROTOCOL,
                  std::string(plugin) + ": HTTP " + std::to_string(http_status) + " answer " +
                      what + "; first bytes: " + quote_first_bytes(body),
                  http_status);
}

int32_t status_for_http(int32_t http_status) {
    if (http_status == 429) return NUCLEO_ERR_RATE_LIMITED;
    if (http_status >= 500 || http_status == 408) return NUCLEO_ERR_OVERLOADED;
    if (http_status == 401 || http_status == 402 || http_status == 403) return NUCLEO_ERR_CONFIG;
    if (http_status == 404) return NUCLEO_ERR_NOT_FOUND;
    if (http_status >= 400) return NUCLEO_ERR_INVALID_ARGUMENT;
    return NUCLEO_ERR_PROTOCOL;
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

std::string header(std::string_view headers_json, std::string_view name) {
    if (headers_json.empty()) return {};
    rapidjson::Document doc;
    doc.Parse(headers_json.data(), headers_json.size());
    if (doc.HasParseError() || !doc.IsObject()) return {};
    for (const auto& m : doc.GetObject()) {
        if (m.value.IsString() && iequals(view(m.name), name)) return std::string(view(m.value));
    }
    return {};
}

void for_each_sse_data(std::string_view body,
                       const std::function<void(std::string_view)>& on_data) {
    std::string data;
    bool has_data = false;
    const auto dispatch = [&] {
        if (has_data) on_data(data);
        data.clear();
        has_data = false;
    };
    std::size_t pos = 0;
    while (pos < body.size()) {
        std::size_t end = body.find('\n', pos);
        if (end == std::string_view::npos) end = body.size();
        std::string_view line = body.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) {
            dispatch();
        } else if (line.starts_with("data:")) {
            line.remove_prefix(5);
            if (line.starts_with(' ')) line.remove_prefix(1);
            if (has_data) data += '\n';
            data += line;
            has_data = true;
        }
    }
    dispatch();
}

ResponseWriter::ResponseWriter(std::string_view model, bool with_model) : w_(out_) {
    w_.StartObject();
    w_.Key("schema_version");
    w_.Int(1);
    if (with_model) {
        w_.Key("model");
        string(model);
    }
    w_.Key("blocks");
    w_.StartArray();
}

void ResponseWriter::string(std::string_view s) {
    w_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void ResponseWriter::text(std::string_view text) {
    w_.StartObject();
    w_.Key("type");
    w_.String("text");
    w_.Key("text");
    string(text);
    w_.EndObject();
}

void ResponseWriter::thinking(std::string_view thinking, std::string_view signature) {
    w_.StartObject();
    w_.Key("type");
    w_.String("thinking");
    w_.Key("thinking");
    string(thinking);
    w_.Key("signature");
    string(signature);
    w_.EndObject();
}

void ResponseWriter::redacted_thinking(std::string_view data) {
    w_.StartObject();
    w_.Key("type");
    w_.String("redacted_thinking");
    w_.Key("data");
    string(data);
    w_.EndObject();
}

void ResponseWriter::open_tool_use(std::string_view id, std::string_view name) {
    w_.StartObject();
    w_.Key("type");
    w_.String("tool_use");
    w_.Key("id");
    string(id);
    w_.Key("name");
    string(name);
    w_.Key("input");
}

void ResponseWriter::tool_use(std::string_view id, std::string_view name, const Value* input) {
    open_tool_use(id, name);
    if (input != nullptr) {
        input->Accept(w_);
    } else {
        w_.StartObject();
        w_.EndObject();
    }
    w_.EndObject();
}

void ResponseWriter::tool_use_raw(std::string_view id, std::string_view name,
                                  std::string_view input_json) {
    open_tool_use(id, name);
    w_.RawValue(input_json.data(), input_json.size(), rapidjson::kObjectType);
    w_.EndObject();
}

void ResponseWriter::provider_block(std::string_view wire_family, std::string_view block_json) {
    w_.StartObject();
    w_.Key("type");
    w_.String("provider_block");
    w_.Key("wire_family");
    string(wire_family);
    w_.Key("block");
    w_.RawValue(block_json.data(), block_json.size(), rapidjson::kObjectType);
    w_.EndObject();
}

std::string ResponseWriter::finish(std::string_view stop_reason, const Usage& usage) {
    w_.EndArray();
    if (!response_id_.empty()) {
        w_.Key("response_id");
        string(response_id_);
    }
    if (!cache_miss_reason_.empty()) {
        w_.Key("cache_miss");
        w_.StartObject();
        w_.Key("reason");
        string(cache_miss_reason_);
        if (cache_missed_ >= 0) {
            w_.Key("missed_input_tokens");
            w_.Int64(cache_missed_);
        }
        w_.EndObject();
    }
    w_.Key("stop_reason");
    string(stop_reason);
    w_.Key("usage");
    w_.StartObject();
    w_.Key("input_tokens");
    w_.Int64(usage.input);
    w_.Key("output_tokens");
    w_.Int64(usage.output);
    w_.Key("cache_read_tokens");
    w_.Int64(usage.cache_read);
    w_.Key("cache_write_tokens");
    w_.Int64(usage.cache_write);
    if (usage.cache_write_1h > 0) {
        w_.Key("cache_write_1h_tokens");
        w_.Int64(usage.cache_write_1h);
    }
    w_.EndObject();
    w_.EndObject();
    return {out_.GetString(), out_.GetSize()};
}

StringSink::StringSink() noexcept
    : c_sink_{sizeof(nucleo_sink), &text_,
              [](void* ctx, const char* data, size_t size) noexcept -> int32_t {
                  try {
                      static_cast<std::string*>(ctx)->append(data, size);
                      return NUCLEO_OK;
                  } catch (...) {
                      return NUCLEO_ERR_INTERNAL;
                  }
              }},
      wrapped_(&c_sink_) {}

void encode_joined(
    std::string_view request, plugin::Sink& out,
    const std::function<void(std::string_view, plugin::Sink&, plugin::Sink&)>& parts) {
    StringSink head;
    StringSink body;
    parts(request, head.sink(), body.sink());
    const std::string& h = head.text();
    if (h.size() < 2 || h.front() != '{' || h.back() != '}')
        throw plugin::Failure(NUCLEO_ERR_INTERNAL, "encode: the request head is not a JSON object");
    out.write(std::string_view(h).substr(0, h.size() - 1));
    out.write(h.size() > 2 ? R"(,"body":)" : R"("body":)");
    out.write(body.text());
    out.write("}");
}

void write_split(std::string_view head_text, std::string_view body, TurnSpan span,
                 plugin::Sink& head, plugin::Sink& open, plugin::Sink& turns, plugin::Sink& close) {
    if (span.begin > span.end || span.end > body.size())
        throw plugin::Failure(NUCLEO_ERR_INTERNAL,
                              "encode_split: the turns' span lies outside the body");
    head.write(head_text);
    open.write(body.substr(0, span.begin));
    turns.write(body.substr(span.begin, span.end - span.begin));
    close.write(body.substr(span.end));
}

}  // namespace nucleo::providers
