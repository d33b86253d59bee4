// What one call's cache plan may use beyond the prepared request (caching.105-107): the
// policy, the dialect's marks (caching.106, caching.119, caching.133) and the model's minimum.
#pragma once

#include "nucleo/catalog.hpp"
#include "nucleo/prepared.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo::caching {

/// The CacheOptions of a call of `model` through a plugin with capabilities `caps` under
/// `policy`: a request-level marker where the dialect offers one (caching.106), no anchor on a
/// tool call or an assistant turn where the dialect says it cannot mark one (caching.119,
/// caching.133), the 1-hour head only on a model that offers the hour (caching.109), and the
/// model's token counter for the minimum when the call caches (caching.105). The counters refer
/// to the model's TokenCounter, which lives as long as the process.
CacheOptions call_cache_options(const ProviderCapabilities& caps, const ModelSpec& model,
                                CachePolicy policy, bool head_ttl_1h, bool caching);

}  // namespace nucleo::caching
