#include "caching/call_options.hpp"

#include "nucleo/tokens.hpp"

namespace nucleo::caching {

CacheOptions call_cache_options(const ProviderCapabilities& caps, const ModelSpec& model,
                                CachePolicy policy, bool head_ttl_1h, bool caching) {
    CacheOptions cache;
    cache.policy = policy;
    cache.automatic_offered = caps.automatic_caching;
    cache.anchor_tool_use = caps.cache_anchor_tool_use;
    cache.anchor_assistant = caps.cache_anchor_assistant;
    cache.min_cacheable_tokens = model.min_cacheable_tokens;
    cache.head_ttl_1h = head_ttl_1h && model.cache_ttl_1h;  // caching.109
    if (model.min_cacheable_tokens > 0 && caching) {
        const TokenCounter& counter = TokenCounter::for_model(model);
        cache.count_block = [&counter](const ContentBlock& b) { return counter.count_block(b); };
        cache.count_tool = [&counter](const ToolDefinitionBlock& d) {
            return counter.count_tool_definition(d);
        };
    }
    return cache;
}

}  // namespace nucleo::caching
