// The per-model request rules (wire.176-wire.185): what a model's catalog record
// (config/models.yaml, catalog.2, catalog.4, catalog.6) says its provider refuses for that model,
// checked over a request body with the provider's own status and text. nucleo-emulator reads the
// records (emulator/catalog.cpp) and refuses with these texts; the core decides from the same
// records before encode (catalog.5, catalog.6), so these checks are not on the audit's path.
// RapidJSON and the standard library only.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nucleo/wire/contract.hpp"

namespace nucleo::contract {

/// The fields of one catalog record the per-model rules read. An empty list is "the record names
/// none": `forms` and `display` are then not checked, while an empty `efforts` means the model
/// takes no effort at all (wire.178, wire.182, wire.183).
struct ModelRules {
    std::string wire_model;          ///< the model name the provider's API takes
    std::string status = "active";   ///< active | deprecated | retired (catalog.2)
    std::vector<std::string> forms;  ///< thinking.forms: enabled, adaptive, between_tools, disabled
    std::vector<std::string> efforts;  ///< thinking.efforts, lowest first
    std::vector<std::string> display;  ///< thinking.display values
    /// thinking.always (no check reads it: a model that always thinks lists no `disabled` form)
    bool always_thinks = false;
    bool refuses_sampling = false;         ///< refuses: sampling (temperature, top_p, top_k)
    bool refuses_prefill = false;          ///< refuses: prefill (a final assistant message)
    bool refuses_forced_tool_use = false;  ///< refuses: forced_tool_use (tool_choice any / tool)
    /// refuses: tools_with_reasoning (OpenAI Chat: function tools only with reasoning_effort none)
    bool refuses_tools_with_reasoning = false;
    std::int64_t min_cache_tokens = 0;     ///< caching.min_tokens; 0: the record names none
};

/// A per-model refusal: a Violation with the provider's HTTP status and error classification.
struct ModelViolation : Violation {
    int status = 400;
    /// Anthropic `error.type`, OpenAI `error.type`, Bedrock `x-amzn-ErrorType`.
    std::string error_type;
    std::string param;  ///< OpenAI `error.param` ("" renders as null)
    std::string code;   ///< OpenAI `error.code` ("" renders as null)
};

/// wire.185: a request naming a retired model gets the provider's not-found answer (404); nullopt
/// for an active or deprecated one. The id named is `rules.wire_model`.
std::optional<ModelViolation> check_model_available(WireFamily family, const ModelRules& rules);

/// The per-model rules of `family` over a parsed body (wire.176-wire.185), in this order: the
/// model's availability (wire.185), then thinking form, display, effort, sampling, prefill and
/// forced tool use. The first one broken, or nullopt. A kUnknown family has none.
std::optional<ModelViolation> check_model_request(WireFamily family, const rapidjson::Value& body,
                                                  const ModelRules& rules);

}  // namespace nucleo::contract
