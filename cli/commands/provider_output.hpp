// Shared by `nucleo render` and `nucleo send`: the provider client of a catalog entry and the
// printing of a wire request.
#pragma once

#include <ostream>

#include "nucleo/config.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo::cli {

/// The ProviderClient of `model`'s provider instance, its plugin found on the config's plugin
/// paths (then NUCLEO_PLUGIN_PATH, the build tree, the installed folder). Defined in send.cpp.
ProviderClient provider_client_for(const Config& config, const ModelSpec& model);

/// Prints {"method", "url", "headers", "body"} as pretty JSON (the body parsed when it is JSON).
void print_wire_request(std::ostream& out, const HttpRequest& request);

}  // namespace nucleo::cli
