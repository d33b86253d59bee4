// Private helpers of nucleo-openai shared by the encoder and the decoder: the provider dialects'
// common reading (provider_common.hpp) under the names this plugin uses, and its refusals.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "nucleo/plugin.hpp"
#include "provider_common.hpp"

namespace nucleo::openai {

using Value = rapidjson::Value;
using providers::member;

/// A provider request this dialect cannot express, or one off the documented shape.
[[noreturn]] inline void refuse(const std::string& message) {
    providers::refuse("openai", message);
}

inline std::string_view view_of(const Value& v) {
    return providers::view(v);
}

}  // namespace nucleo::openai
