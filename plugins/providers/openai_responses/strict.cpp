// responses.3: strict mode's rules for a function's parameters (OpenAI's structured-outputs
// guide, "Supported schemas"): every object sets additionalProperties false and requires all of
// its properties; the root is an object; some keywords are not taken; nesting is bounded.
#include <string_view>

#include "strict.hpp"

namespace nucleo::responses {
namespace {

/// The deepest object nesting strict mode takes.
constexpr int kMaxNesting = 10;

/// Keywords strict mode does not take: a schema using one is sent with strict false.
bool unsupported_keyword(std::string_view k) {
    for (const std::string_view u :
         {"patternProperties", "unevaluatedProperties", "propertyNames", "minProperties",
          "maxProperties", "unevaluatedItems", "contains", "minContains", "maxContains",
          "uniqueItems", "allOf", "not", "if", "then", "else", "dependentRequired",
          "dependentSchemas", "oneOf"})
        if (k == u) return true;
    return false;
}

bool is_object_node(const json::Value& s) {
    const std::string_view type = json::text(json::member(s, "type"));
    return type == "object" || json::member(s, "properties") != nullptr;
}

bool node_ok(const json::Value& s, int depth);

/// Every schema held by `v` under a keyword that holds schemas.
bool children_ok(const json::Value& s, int depth) {
    for (const auto& m : s.GetObject()) {
        const std::string_view k = json::view(m.name);
        if (unsupported_keyword(k)) return false;
        const json::Value& v = m.value;
        if (k == "properties" || k == "$defs" || k == "definitions") {
            if (!v.IsObject()) return false;
            for (const auto& p : v.GetObject())
                if (!node_ok(p.value, depth + 1)) return false;
        } else if (k == "items") {
            if (!node_ok(v, depth + 1)) return false;
        } else if (k == "anyOf" || k == "prefixItems") {
            if (!v.IsArray()) return false;
            for (const auto& e : v.GetArray())
                if (!node_ok(e, depth + 1)) return false;
        }
    }
    return true;
}

bool node_ok(const json::Value& s, int depth) {
    if (depth > kMaxNesting) return false;
    if (s.IsBool()) return false;  // true/false schemas are not taken
    if (!s.IsObject()) return false;
    if (is_object_node(s)) {
        const json::Value* extra = json::member(s, "additionalProperties");
        if (extra == nullptr || !extra->IsFalse()) return false;
        const json::Value* props = json::member(s, "properties");
        const json::Value* required = json::member(s, "required");
        if (props != nullptr) {
            if (!props->IsObject()) return false;
            if (!props->ObjectEmpty() && (required == nullptr || !required->IsArray()))
                return false;
            for (const auto& p : props->GetObject()) {
                bool listed = false;
                for (const auto& r : required->GetArray())
                    if (r.IsString() && json::view(r) == json::view(p.name)) listed = true;
                if (!listed) return false;
            }
        }
    }
    return children_ok(s, depth);
}

}  // namespace

bool strict_compatible(const json::Value& schema) {
    if (!schema.IsObject() || json::text(json::member(schema, "type")) != "object") return false;
    return node_ok(schema, 1);
}

}  // namespace nucleo::responses
