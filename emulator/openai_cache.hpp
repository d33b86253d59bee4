// OpenAI Chat Completions prompt caching at explicit breakpoints (caching.120-caching.124): the
// `prompt_cache_options` and `prompt_cache_breakpoint` parameters of the models whose catalog
// record says `caching.breakpoints: explicit` (GPT-5.6 and later), their refusal on the models
// that cache automatically, and the cache itself: a prefix is read only where it ends exactly at
// one of the request's breakpoints, and written only there.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "json.hpp"
#include "prefix_cache.hpp"

namespace nucleo::emulator {

/// The OpenAI API a request came to: Chat Completions (`messages` of content parts) or Responses
/// (`input` items whose `content` or `output` holds the parts, responses.31).
enum class OpenAiApi { kChat, kResponses };

/// How an OpenAI model caches, from its record's `caching.breakpoints`.
enum class OpenAiCaching {
    kNoRecord,   ///< no record, or it names no breakpoints: today's automatic caching, no checks
    kAutomatic,  ///< `automatic` (or `none`): automatic caching; the breakpoint parameters refused
    kExplicit,   ///< `explicit`: the parameters taken, caching at breakpoints only
};

OpenAiCaching openai_caching(std::string_view record_breakpoints);

/// An OpenAI 400 invalid_request_error: error.message, error.param and error.code.
struct OpenAiParamError {
    std::string message;
    std::string param;
    std::string code;
};

/// caching.120, caching.124: `prompt_cache_key` (a string or null, on every model), and on a
/// model with a record `prompt_cache_options` and each content part's `prompt_cache_breakpoint`:
/// checked on an explicit model, refused naming the field and the model on an automatic one.
/// The first problem, or nullopt.
std::optional<OpenAiParamError> check_prompt_cache_params(const json::Value& doc,
                                                          OpenAiCaching caching,
                                                          std::string_view model,
                                                          OpenAiApi api = OpenAiApi::kChat);

/// The documented limits (caching.122, caching.123).
inline constexpr std::size_t kOpenAiConsideredBreakpoints = 80;
inline constexpr std::size_t kOpenAiWrittenBreakpoints = 4;
inline constexpr std::chrono::seconds kOpenAiBreakpointTtl{30 * 60};

/// What caching at breakpoints answers for a request: the usage (`creation` is the
/// cache_write_tokens) and the digest of its prompt (the source of its ids).
struct BreakpointCacheResult {
    CacheUsage usage;
    std::string digest;
};

/// caching.121-caching.123 over a request already checked by check_prompt_cache_params.
BreakpointCacheResult breakpoint_cache(PrefixCache& cache, const json::Value& doc,
                                       std::string_view model, std::int64_t min_tokens,
                                       OpenAiApi api = OpenAiApi::kChat);

}  // namespace nucleo::emulator
