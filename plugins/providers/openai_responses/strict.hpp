// responses.3: whether a tool's JSON Schema meets OpenAI's strict mode, so `strict: true` is sent
// only where the API would take it.
#pragma once

#include "json.hpp"

namespace nucleo::responses {

/// True when `schema` is an object schema every object node of which sets
/// `additionalProperties: false` and lists every property in `required`, uses no keyword strict
/// mode leaves out, and nests at most 10 levels.
bool strict_compatible(const json::Value& schema);

}  // namespace nucleo::responses
