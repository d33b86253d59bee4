#include "common/json_text.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/wire/json_escape.hpp"

namespace nucleo::internal {

const char* json_type_word(const rapidjson::Value& value) noexcept {
    switch (value.GetType()) {
        case rapidjson::kNullType: return "null";
        case rapidjson::kFalseType:
        case rapidjson::kTrueType: return "a boolean";
        case rapidjson::kObjectType: return "an object";
        case rapidjson::kArrayType: return "an array";
        case rapidjson::kStringType: return "a string";
        case rapidjson::kNumberType: return value.IsDouble() ? "a number" : "an integer";
    }
    return "a value";
}

std::string json_compact(const rapidjson::Value& value) {
    rapidjson::StringBuffer buffer;
    json_escape::StringWriter writer(buffer);
    value.Accept(writer);
    return {buffer.GetString(), buffer.GetSize()};
}

void parse_json_guarded(rapidjson::Document& doc, std::string_view json, std::string_view where,
                        unsigned max_depth, ErrorKind kind) {
    auto refusal = json_guard::parse<rapidjson::kParseFullPrecisionFlag>(doc, json, max_depth);
    if (!refusal) return;
    std::string message = refusal->text();
    if (!where.empty()) message = std::string(where) + ": " + message;
    throw Error(kind, message);
}

}  // namespace nucleo::internal
