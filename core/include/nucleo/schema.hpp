// Schemas from C++ types (tools.30-34) and the @-notation of the answer contracts.
//
// A struct is described once, by a specialization of nucleo::Describe, and that one description
// yields (a) standard JSON Schema (tool input schemas), (b) the compact @-notation the response
// contracts use (explained to the model by notation_legend(), the legend slot: conversation.13)
// and (c) reading and writing the struct as JSON.
//
//     struct SearchInput {
//         std::string query;
//         std::optional<int> maxResults;
//     };
//     template <>
//     struct nucleo::Describe<SearchInput> {
//         static constexpr std::string_view name = "SearchInput";   // optional, for messages
//         static auto fields() {
//             using nucleo::schema::field;
//             return std::tuple(
//                 field("query", &SearchInput::query).required().description("The search query"),
//                 field("maxResults", &SearchInput::maxResults)
//                     .description("Maximum results to return (1-100)"));
//         }
//     };
//     enum class Speed { kFast, kSlow };
//     template <>
//     struct nucleo::Describe<Speed> {
//         static auto constants() {
//             return std::array{nucleo::schema::constant(Speed::kFast, "FAST"),
//                               nucleo::schema::constant(Speed::kSlow, "SLOW")};
//         }
//     };
//
// The templates here only build a type-erased description (TypeNode); all JSON work happens inside
// libnucleo, so no JSON library type reaches this header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "nucleo/content.hpp"

namespace nucleo {

/// Specialize to describe a type (tools.30: what Java annotations such as required,
/// description, example, JSON-property rename and ignore express there).
/// A struct provides `static auto fields()` returning a std::tuple of schema::field(...) specs in
/// the order the properties should appear; an enum provides `static auto constants()` returning a
/// range of schema::constant(value, "NAME") pairs. Either may add
/// `static constexpr std::string_view name` used in error messages.
template <typename T>
struct Describe;

namespace schema {

/// A JSON object kept as text: a free-form payload (a tool call's input). Publishes as
/// `{"type":"object"}` with no properties; reading accepts any JSON object.
struct JsonObject {
    std::string json = "{}";
    bool operator==(const JsonObject&) const = default;
};

/// The JSON shape of a described type.
enum class Kind { kString, kInteger, kNumber, kBoolean, kEnum, kObject, kArray, kOptional, kJson };

/// What a field is to the schema strip (tools.20). kReasoning marks a field
/// that holds the model's prose reasoning — the envelope's own `reasoning` and any field of the
/// typed answer marked with `.reasoning()` — dropped, at every depth, when thinking is active.
/// kToolCalls marks the envelope's `tool_calls`, dropped when tools are native.
enum class FieldRole { kPlain, kReasoning, kToolCalls };

struct TypeNode;
/// A lazily resolved type description (lazy so a type may name itself through a vector).
using NodeFn = const TypeNode& (*)();

/// One property of an object: what the schema says of it and how to reach it in the C++ object.
struct FieldNode {
    std::string name;  ///< JSON property name (snake_case unless renamed)
    std::string description;
    std::vector<std::string> examples_json;  ///< each example value, as JSON text
    bool required = false;
    FieldRole role = FieldRole::kPlain;
    /// artifacts.6: a long string value of this field reaches the model as
    /// "[SUMMARY: N chars] ..." (nucleo/artifacts.hpp write_summarized_with_refs).
    bool summarizable = false;
    NodeFn type = nullptr;
    std::function<void*(void*)> access;  ///< object address -> member address
};

/// The type-erased description of a C++ type. Built once per type by node_of<T>(); the accessors
/// work on untyped addresses of that type.
struct TypeNode {
    Kind kind = Kind::kObject;
    std::string name;  ///< Describe<T>::name when given, else empty
    /// Describe<T>::artifact_alias when given: the type is an artifact (artifacts.1) and its JSON
    /// carries "@artifact": alias, so one pass can discover it.
    std::string artifact_alias;

    std::vector<FieldNode> fields;  ///< kObject

    std::vector<std::string> constants;  ///< kEnum: serialized names, in declaration order
    std::function<std::optional<std::size_t>(const void*)> enum_index;  ///< value -> constant
    std::function<void(void*, std::size_t)> enum_assign;                ///< constant -> value

    std::int64_t min_integer = 0;  ///< kInteger: the C++ type's range (clamped to int64)
    std::int64_t max_integer = 0;
    std::function<std::int64_t(const void*)> get_integer;
    std::function<void(void*, std::int64_t)> set_integer;
    std::function<double(const void*)> get_number;  ///< kNumber
    std::function<void(void*, double)> set_number;

    NodeFn element = nullptr;                      ///< kArray, kOptional: the element type
    std::function<std::size_t(const void*)> size;  ///< array length; optional: 0 or 1
    std::function<const void*(const void*, std::size_t)> at;
    std::function<void*(void*)> emplace;  ///< array: append a default element; optional: engage
    std::function<void(void*)> clear;     ///< array: empty; optional: reset
};

/// Which fields a rendering leaves out (tools.20).
struct RenderOptions {
    bool drop_reasoning = false;   ///< thinking is active: no kReasoning field, at any depth
    bool drop_tool_calls = false;  ///< native tool calling: no kToolCalls field
};

/// The legend of the @-notation (conversation.13, tools.33). The
/// conversation places it under the objective's `legend` slot when an outgoing message carries a
/// handler with uses_schema_notation(). It explains every @-keyword notation() writes.
std::string notation_legend();

/// A C++ member name as a JSON property name: camelCase and PascalCase become snake_case
/// ("maxResults" -> "max_results", "HTTPServer" -> "http_server"); trailing underscores (the
/// `member_` convention) are dropped; a name already in snake_case is unchanged.
std::string snake_case(std::string_view name);

/// Standard JSON Schema of a type, compact JSON text: objects as
/// {"type":"object","properties":{...},"required":[...]} ("required" only when some field is),
/// enums as {"type":"string","enum":[...]}, arrays with "items", descriptions and "examples" on
/// the property. An optional field publishes its value's schema and is simply not required.
std::string json_schema(const TypeNode& node, const RenderOptions& options = {});

/// The @-notation of a type: one line per property, `name: @type T` (plus `@required`), with
/// `@description`, `@examples`, `@values` (enum constants) and `@items` (array elements) on the
/// lines indented under it, and an object's own properties indented under it likewise.
std::string notation(const TypeNode& node, const RenderOptions& options = {});

/// Writes the object at `object` (of the type `node` describes) as compact JSON. An empty
/// optional property is left out. Throws Error(kInvalidArgument) naming the path of a value JSON
/// cannot hold (an enum value with no declared constant, a non-finite number).
std::string write_json(const TypeNode& node, const void* object);

/// Reads JSON text into the object at `object`. Unknown properties are ignored (models add them;
/// the conversation document is read the same way); an absent or null property leaves a plain
/// member at its default and resets an optional one; a missing `.required()` property is refused,
/// except a kReasoning one (the strip may have hidden it from the model). Throws
/// Error(kInvalidArgument) naming the JSON path of the bad value ("$.items[2].kind") and what was
/// expected; an unknown enum constant lists the allowed ones.
void read_json(const TypeNode& node, std::string_view json, void* object);

template <typename T>
const TypeNode& node_of();

/// One enum constant with its serialized name (what write_json writes and read_json reads back).
template <typename E>
constexpr std::pair<E, std::string_view> constant(E value, std::string_view name) {
    static_assert(std::is_enum_v<E>, "schema::constant takes an enum value");
    return {value, name};
}

namespace detail {
template <typename T>
struct VectorTraits : std::false_type {};
template <typename U, typename A>
struct VectorTraits<std::vector<U, A>> : std::true_type {
    using element = U;
};
template <typename T>
struct OptionalTraits : std::false_type {
    using element = T;
};
template <typename U>
struct OptionalTraits<std::optional<U>> : std::true_type {
    using element = U;
};
template <typename T>
concept DescribedStruct = requires {
    Describe<T>::fields();
};
template <typename T>
concept DescribedEnum = std::is_enum_v<T> && requires {
    Describe<T>::constants();
};

template <typename T>
std::string described_name() {
    if constexpr (requires { Describe<T>::name; }) {
        return std::string(Describe<T>::name);
    } else {
        return {};
    }
}

template <typename T>
TypeNode make_node();
}  // namespace detail

/// A field of a described struct: `field("cppName", &T::cppName)` plus chained markers. Each
/// marker returns a modified copy, so a declaration reads as one expression.
template <typename T, typename M>
class FieldSpec {
  public:
    /// The value type an example is written in: the member's type, or U for std::optional<U>.
    using Value = typename detail::OptionalTraits<M>::element;

    FieldSpec(std::string_view cpp_name, M T::*member) : cpp_name_(cpp_name), member_(member) {}

    /// @LLMRequired: the property must be present (in the schema's `required` and on read).
    [[nodiscard]] FieldSpec required() const {
        return with([](FieldSpec& f) { f.required_ = true; });
    }
    /// @LLMDescription.
    [[nodiscard]] FieldSpec description(std::string_view text) const {
        return with([text](FieldSpec& f) { f.description_ = text; });
    }
    /// @LLMExample: one example value (repeat for more); published under `examples`.
    [[nodiscard]] FieldSpec example(Value value) const {
        return with([&value](FieldSpec& f) { f.examples_.push_back(std::move(value)); });
    }
    /// @JsonProperty: the JSON property name, used as given instead of the snake_case default.
    [[nodiscard]] FieldSpec json_name(std::string_view name) const {
        return with([name](FieldSpec& f) { f.json_name_ = name; });
    }
    /// @JsonIgnore: left out of the schema, the notation and the JSON. Listing it (rather than
    /// leaving the member out of fields()) keeps the description an inventory of every member.
    [[nodiscard]] FieldSpec ignored() const {
        return with([](FieldSpec& f) { f.ignored_ = true; });
    }
    /// Marks this field as the answer's own reasoning: dropped from the instructions when
    /// thinking is active (tools.20: the typed answer's own nested reasoning is dropped
    /// with it). A field merely named `reasoning` is NOT marked: the marker is explicit.
    [[nodiscard]] FieldSpec reasoning() const { return role(FieldRole::kReasoning); }
    /// artifacts.6: a long value is summarized on its way to the model, with its
    /// original length ("[SUMMARY: 2847 chars] ..."); the full value stays in the registry.
    [[nodiscard]] FieldSpec summarizable() const {
        return with([](FieldSpec& f) { f.summarizable_ = true; });
    }
    [[nodiscard]] FieldSpec role(FieldRole r) const {
        return with([r](FieldSpec& f) { f.role_ = r; });
    }

    /// Appends this field's FieldNode (nothing when ignored).
    void append_to(std::vector<FieldNode>& out) const {
        if (ignored_) return;
        FieldNode node;
        node.name = json_name_.empty() ? snake_case(cpp_name_) : json_name_;
        node.description = description_;
        node.required = required_;
        node.role = role_;
        node.summarizable = summarizable_;
        node.type = &node_of<M>;
        node.access = [member = member_](void* object) -> void* {
            return &(static_cast<T*>(object)->*member);
        };
        for (const Value& example : examples_) {
            node.examples_json.push_back(write_json(node_of<Value>(), &example));
        }
        out.push_back(std::move(node));
    }

  private:
    template <typename Change>
    FieldSpec with(Change change) const {
        FieldSpec copy = *this;
        change(copy);
        return copy;
    }

    std::string cpp_name_;
    M T::*member_;
    std::string json_name_;
    std::string description_;
    std::vector<Value> examples_;
    bool required_ = false;
    bool ignored_ = false;
    bool summarizable_ = false;
    FieldRole role_ = FieldRole::kPlain;
};

/// Starts a field description: `field("maxResults", &SearchInput::maxResults)`. The name is the
/// C++ member's name; its JSON property is its snake_case unless `.json_name()` says otherwise.
template <typename T, typename M>
FieldSpec<T, M> field(std::string_view cpp_name, M T::*member) {
    return FieldSpec<T, M>(cpp_name, member);
}

/// The description of T, built on first use and kept for the program's life.
template <typename T>
const TypeNode& node_of() {
    static const TypeNode node = detail::make_node<T>();
    return node;
}

template <typename T>
TypeNode detail::make_node() {
    TypeNode n;
    n.name = described_name<T>();
    if constexpr (std::is_same_v<T, std::string>) {
        n.kind = Kind::kString;
    } else if constexpr (std::is_same_v<T, bool>) {
        n.kind = Kind::kBoolean;
    } else if constexpr (std::is_integral_v<T>) {
        n.kind = Kind::kInteger;
        using Limits = std::numeric_limits<T>;
        n.min_integer = static_cast<std::int64_t>(Limits::min());
        n.max_integer = (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t))
                            ? std::numeric_limits<std::int64_t>::max()
                            : static_cast<std::int64_t>(Limits::max());
        n.get_integer = [](const void* p) {
            return static_cast<std::int64_t>(*static_cast<const T*>(p));
        };
        n.set_integer = [](void* p, std::int64_t v) { *static_cast<T*>(p) = static_cast<T>(v); };
    } else if constexpr (std::is_floating_point_v<T>) {
        n.kind = Kind::kNumber;
        n.get_number = [](const void* p) { return static_cast<double>(*static_cast<const T*>(p)); };
        n.set_number = [](void* p, double v) { *static_cast<T*>(p) = static_cast<T>(v); };
    } else if constexpr (std::is_enum_v<T>) {
        static_assert(DescribedEnum<T>,
                      "describe the enum: template <> struct nucleo::Describe<E> { static auto "
                      "constants() { return std::array{schema::constant(E::kA, \"A\"), ...}; } };");
        n.kind = Kind::kEnum;
        for (const auto& [value, name] : Describe<T>::constants()) {
            (void)value;
            n.constants.emplace_back(name);
        }
        n.enum_index = [](const void* p) -> std::optional<std::size_t> {
            const T value = *static_cast<const T*>(p);
            std::size_t i = 0;
            for (const auto& entry : Describe<T>::constants()) {
                if (entry.first == value) return i;
                ++i;
            }
            return std::nullopt;
        };
        n.enum_assign = [](void* p, std::size_t index) {
            std::size_t i = 0;
            for (const auto& entry : Describe<T>::constants()) {
                if (i++ == index) *static_cast<T*>(p) = entry.first;
            }
        };
    } else if constexpr (VectorTraits<T>::value) {
        using U = typename VectorTraits<T>::element;
        n.kind = Kind::kArray;
        n.element = &node_of<U>;
        n.size = [](const void* p) { return static_cast<const T*>(p)->size(); };
        n.at = [](const void* p, std::size_t i) -> const void* {
            return &(*static_cast<const T*>(p))[i];
        };
        n.emplace = [](void* p) -> void* { return &static_cast<T*>(p)->emplace_back(); };
        n.clear = [](void* p) { static_cast<T*>(p)->clear(); };
    } else if constexpr (OptionalTraits<T>::value) {
        using U = typename OptionalTraits<T>::element;
        n.kind = Kind::kOptional;
        n.element = &node_of<U>;
        n.size = [](const void* p) -> std::size_t {
            return static_cast<const T*>(p)->has_value() ? 1 : 0;
        };
        n.at = [](const void* p, std::size_t) -> const void* {
            return &**static_cast<const T*>(p);
        };
        n.emplace = [](void* p) -> void* { return &static_cast<T*>(p)->emplace(); };
        n.clear = [](void* p) { static_cast<T*>(p)->reset(); };
    } else if constexpr (std::is_same_v<T, JsonObject>) {
        n.kind = Kind::kJson;
    } else {
        static_assert(DescribedStruct<T>,
                      "describe the type: template <> struct nucleo::Describe<T> { static auto "
                      "fields() { return std::tuple(schema::field(\"name\", &T::name), ...); } };");
        n.kind = Kind::kObject;
        if constexpr (requires { Describe<T>::artifact_alias; }) {
            n.artifact_alias = std::string(Describe<T>::artifact_alias);
        }
        std::apply([&n](const auto&... specs) { (specs.append_to(n.fields), ...); },
                   Describe<T>::fields());
    }
    return n;
}

/// JSON Schema of T (compact JSON text), as tool input schemas publish it.
template <typename T>
std::string json_schema(const RenderOptions& options = {}) {
    return json_schema(node_of<T>(), options);
}

/// The @-notation of T.
template <typename T>
std::string notation(const RenderOptions& options = {}) {
    return notation(node_of<T>(), options);
}

/// T as compact JSON text.
template <typename T>
std::string to_json(const T& value) {
    return write_json(node_of<T>(), &value);
}

/// T read from JSON text; see read_json(node, ...) for the rules and the errors.
template <typename T>
T from_json(std::string_view json) {
    T value{};
    read_json(node_of<T>(), json, &value);
    return value;
}

}  // namespace schema

/// A tool's wire definition from its input struct (tools.30: the input schema from the described
/// struct): `tool_definition<SearchInput>("search_documents", "Search...")`.
template <typename Input>
ToolDefinitionBlock tool_definition(std::string name, std::string description) {
    return ToolDefinitionBlock{std::move(name), std::move(description),
                               schema::json_schema<Input>()};
}

}  // namespace nucleo
