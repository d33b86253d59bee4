#include "openai_cache.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace nucleo::emulator {
namespace {

constexpr std::string_view kMarker = "prompt_cache_breakpoint";

/// The type of `v` as OpenAI's invalid_type messages name it.
std::string type_name(const json::Value& v) {
    if (v.IsNull()) return "null";
    if (v.IsBool()) return "a boolean";
    if (v.IsInt64() || v.IsUint64()) return "an integer";
    if (v.IsNumber()) return "a decimal";
    if (v.IsString()) return "a string";
    if (v.IsArray()) return "an array";
    return "an object";
}

OpenAiParamError invalid_type(const std::string& at, const char* expected, const json::Value& v) {
    return {"Invalid type for '" + at + "': expected " + expected + ", but got " + type_name(v) +
                " instead.",
            at, "invalid_type"};
}

OpenAiParamError unknown(const std::string& at) {
    return {"Unknown parameter: '" + at + "'.", at, "unknown_parameter"};
}

/// `v` (a string member at `at`) is one of `supported`, or the error naming the field.
template <std::size_t N>
std::optional<OpenAiParamError> one_of(const json::Value& v, const std::string& at,
                                       const std::array<std::string_view, N>& supported) {
    if (!v.IsString()) return invalid_type(at, "a string", v);
    const std::string_view value = v.GetString();
    if (std::find(supported.begin(), supported.end(), value) != supported.end())
        return std::nullopt;
    std::string list;
    for (std::size_t i = 0; i < N; ++i) {
        list += (i == 0 ? "" : (i + 1 == N ? " and " : ", ")) + std::string("'") +
                std::string(supported[i]) + "'";
    }
    return OpenAiParamError{"Invalid value for '" + at + "': '" + std::string(value) +
                                "'. Supported values are: " + list + ".",
                            at, "invalid_value"};
}

OpenAiParamError unsupported(const std::string& at, std::string_view model) {
    return {"Unsupported parameter: '" + at + "' is not supported for model " + std::string(model) +
                ".",
            at, "unsupported_parameter"};
}

/// caching.120: `prompt_cache_options` on an explicit model: an object of `mode` (implicit or
/// explicit) and `ttl` (30m). `prompt_cache_retention` beside it is accepted: the SDK calls the
/// two independent.
std::optional<OpenAiParamError> check_options(const json::Value& opts) {
    const std::string at = "prompt_cache_options";
    if (!opts.IsObject()) return invalid_type(at, "an object", opts);
    for (const auto& m : opts.GetObject()) {
        const std::string name = m.name.GetString();
        std::optional<OpenAiParamError> e;
        if (name == "mode") {
            e = one_of(m.value, at + ".mode",
                       std::array<std::string_view, 2>{"implicit", "explicit"});
        } else if (name == "ttl") {
            e = one_of(m.value, at + ".ttl", std::array<std::string_view, 1>{"30m"});
        } else {
            e = unknown(at + "." + name);
        }
        if (e) return e;
    }
    return std::nullopt;
}

/// caching.120: a content part's marker is `{"mode":"explicit"}` on a text, image_url,
/// input_audio or file part.
std::optional<OpenAiParamError> check_marker(const json::Value& part, const json::Value& marker,
                                             const std::string& at, OpenAiApi api) {
    const std::string type = json::string_member(part, "type");
    const bool takes =
        api == OpenAiApi::kChat
            ? type == "text" || type == "image_url" || type == "input_audio" || type == "file"
            : type == "input_text" || type == "input_image" || type == "input_file";
    if (!takes) return unknown(at);
    if (!marker.IsObject()) return invalid_type(at, "an object", marker);
    const json::Value* mode = json::member(marker, "mode");
    if (mode == nullptr) {
        return OpenAiParamError{"Missing required parameter: '" + at + ".mode'.", at + ".mode",
                                "missing_required_parameter"};
    }
    if (auto e = one_of(*mode, at + ".mode", std::array<std::string_view, 1>{"explicit"})) return e;
    for (const auto& m : marker.GetObject()) {
        if (std::string_view(m.name.GetString()) != "mode")
            return unknown(at + "." + m.name.GetString());
    }
    return std::nullopt;
}

/// The list of a request's messages or items, and the member of one that holds its parts.
const char* list_key(OpenAiApi api) {
    return api == OpenAiApi::kChat ? "messages" : "input";
}
const char* parts_key(const json::Value& entry, OpenAiApi api) {
    if (api == OpenAiApi::kResponses &&
        json::string_member(entry, "type") == "function_call_output")
        return "output";
    return "content";
}

/// Calls `f(at, part)` for every object part of an array content (`at`: the part's path).
template <typename F>
std::optional<OpenAiParamError> each_part(const json::Value& doc, OpenAiApi api, F&& f) {
    const json::Value* messages = json::member(doc, list_key(api));
    if (messages == nullptr || !messages->IsArray()) return std::nullopt;
    for (rapidjson::SizeType i = 0; i < messages->Size(); ++i) {
        const char* key = parts_key((*messages)[i], api);
        const json::Value* content = json::member((*messages)[i], key);
        if (content == nullptr || !content->IsArray()) continue;
        for (rapidjson::SizeType j = 0; j < content->Size(); ++j) {
            if (!(*content)[j].IsObject()) continue;
            const std::string at = std::string(list_key(api)) + "[" + std::to_string(i) + "]." +
                                   key + "[" + std::to_string(j) + "]";
            if (auto e = f(at, (*content)[j])) return e;
        }
    }
    return std::nullopt;
}

bool implicit_mode(const json::Value& doc) {
    const json::Value* opts = json::member(doc, "prompt_cache_options");
    return opts == nullptr || json::string_member(*opts, "mode", "implicit") == "implicit";
}

}  // namespace

OpenAiCaching openai_caching(std::string_view record_breakpoints) {
    if (record_breakpoints == "explicit") return OpenAiCaching::kExplicit;
    if (record_breakpoints == "automatic" || record_breakpoints == "none")
        return OpenAiCaching::kAutomatic;
    return OpenAiCaching::kNoRecord;
}

std::optional<OpenAiParamError> check_prompt_cache_params(const json::Value& doc,
                                                          OpenAiCaching caching,
                                                          std::string_view model, OpenAiApi api) {
    // caching.124: a routing hint every model takes.
    if (const json::Value* key = json::member(doc, "prompt_cache_key");
        key != nullptr && !key->IsNull() && !key->IsString()) {
        return invalid_type("prompt_cache_key", "a string", *key);
    }
    if (caching == OpenAiCaching::kNoRecord) return std::nullopt;
    if (const json::Value* opts = json::member(doc, "prompt_cache_options")) {
        if (caching == OpenAiCaching::kAutomatic) return unsupported("prompt_cache_options", model);
        if (auto e = check_options(*opts)) return e;
    }
    return each_part(doc, api,
                     [&](const std::string& part_at,
                         const json::Value& part) -> std::optional<OpenAiParamError> {
                         const json::Value* marker = json::member(part, kMarker.data());
                         if (marker == nullptr) return std::nullopt;
                         const std::string at = part_at + "." + std::string(kMarker);
                         if (caching == OpenAiCaching::kAutomatic) return unsupported(at, model);
                         return check_marker(part, *marker, at, api);
                     });
}

BreakpointCacheResult breakpoint_cache(PrefixCache& cache, const json::Value& doc,
                                       std::string_view model, std::int64_t min_tokens,
                                       OpenAiApi api) {
    // caching.121: the prompt is the tools, then each message (its members but the content)
    // and its content parts in order; a marker is not part of the bytes it marks, so moving
    // it changes no prefix.
    PrefixHasher hasher(
        (api == OpenAiApi::kChat ? "openai-breakpoints\x1f" : "responses-breakpoints\x1f") +
        std::string(model));
    if (const json::Value* tools = json::member(doc, "tools"); tools != nullptr && tools->IsArray())
        for (const auto& t : tools->GetArray()) hasher.append(json::write(t));
    // responses.31: the instructions come before the input.
    if (const json::Value* instructions = json::member(doc, "instructions"))
        hasher.append(json::write(*instructions));
    std::vector<std::size_t> marks;  // the hasher's mark index at each explicit breakpoint
    for (const auto& m : json::member(doc, list_key(api))->GetArray()) {
        const char* key = parts_key(m, api);
        hasher.append(json::canonical(m, key));
        const json::Value* content = json::member(m, key);
        if (content == nullptr) continue;
        if (!content->IsArray()) {
            hasher.append(json::write(*content));
            continue;
        }
        for (const auto& part : content->GetArray()) {
            hasher.append(json::canonical(part, kMarker));
            if (json::member(part, kMarker.data()) != nullptr) marks.push_back(hasher.mark());
        }
    }
    // In implicit mode (the default) the end of the last message is a breakpoint too, the
    // newest one.
    const bool implicit = implicit_mode(doc);
    std::vector<std::size_t> breakpoints = marks;
    if (implicit) breakpoints.push_back(hasher.mark());

    const auto& keys = hasher.marks();
    const auto cacheable = [&](std::size_t m) {
        return tokens_for_bytes(keys[m].bytes) >= min_tokens;
    };
    // caching.122: the longest cached prefix ending exactly at one of the latest 80 breakpoints.
    std::size_t read_bytes = 0;
    const std::size_t first_considered = breakpoints.size() > kOpenAiConsideredBreakpoints
                                             ? breakpoints.size() - kOpenAiConsideredBreakpoints
                                             : 0;
    for (std::size_t b = breakpoints.size(); b-- > first_considered;) {
        const std::size_t m = breakpoints[b];
        if (cacheable(m) && cache.lookup_refresh(keys[m])) {
            read_bytes = keys[m].bytes;
            break;
        }
    }
    // caching.123: the latest four explicit breakpoints, or the implicit one and the latest
    // three, are written where they end beyond the read and reach the minimum.
    const std::size_t explicit_writes =
        implicit ? kOpenAiWrittenBreakpoints - 1 : kOpenAiWrittenBreakpoints;
    std::vector<std::size_t> writes(
        marks.end() - static_cast<std::ptrdiff_t>(std::min(marks.size(), explicit_writes)),
        marks.end());
    if (implicit) writes.push_back(breakpoints.back());
    std::size_t written_bytes = read_bytes;
    for (const std::size_t m : writes) {
        if (keys[m].bytes <= read_bytes || !cacheable(m)) continue;
        cache.write(keys[m], kOpenAiBreakpointTtl);
        written_bytes = std::max(written_bytes, keys[m].bytes);
    }
    BreakpointCacheResult out;
    out.usage.read = read_bytes == 0 ? 0 : tokens_for_bytes(read_bytes);
    out.usage.creation =
        written_bytes == read_bytes ? 0 : tokens_for_bytes(written_bytes) - out.usage.read;
    out.usage.input = tokens_for_bytes(hasher.bytes()) - out.usage.read - out.usage.creation;
    out.digest = hasher.digest();
    return out;
}

}  // namespace nucleo::emulator
