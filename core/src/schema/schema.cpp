// JSON Schema and the @-notation from type descriptions (tools.30-33).
#include "nucleo/schema.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cctype>

namespace nucleo::schema {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// Optional is transparent to both renderings: the value's shape, simply not required.
const TypeNode& unwrap(const TypeNode& node) {
    const TypeNode* n = &node;
    while (n->kind == Kind::kOptional) n = &n->element();
    return *n;
}

/// A rendering in progress: the options, and the object types being rendered, so a type that
/// contains itself (through a vector or an optional) renders its inner occurrence as a plain
/// object instead of recursing forever. Decision: JSON Schema $ref/$defs would be exact, but the
/// models reading these schemas follow inline shapes better, and recursive answers are rare.
struct Walk {
    RenderOptions options;
    std::vector<const TypeNode*> open;

    [[nodiscard]] bool enter(const TypeNode& n) {
        if (std::find(open.begin(), open.end(), &n) != open.end()) return false;
        open.push_back(&n);
        return true;
    }
    void leave() { open.pop_back(); }
};

bool dropped(const FieldNode& field, const Walk& walk) {
    const RenderOptions& options = walk.options;
    return (options.drop_reasoning && field.role == FieldRole::kReasoning) ||
           (options.drop_tool_calls && field.role == FieldRole::kToolCalls);
}

const char* json_type(Kind kind) {
    switch (kind) {
        case Kind::kString:
        case Kind::kEnum:
            return "string";
        case Kind::kInteger:
            return "integer";
        case Kind::kNumber:
            return "number";
        case Kind::kBoolean:
            return "boolean";
        case Kind::kArray:
            return "array";
        case Kind::kObject:
        case Kind::kJson:
        case Kind::kOptional:
            return "object";
    }
    return "object";
}

/// The notation's type word: the JSON type, except `enum` for a closed set of strings.
const char* notation_type(Kind kind) {
    return kind == Kind::kEnum ? "enum" : json_type(kind);
}

void write_key(Writer& w, const char* key) {
    w.Key(key);
}

void write_schema(Writer& w, const TypeNode& node, Walk& walk, const FieldNode* field) {
    const TypeNode& n = unwrap(node);
    w.StartObject();
    write_key(w, "type");
    w.String(json_type(n.kind));
    if (field != nullptr && !field->description.empty()) {
        write_key(w, "description");
        w.String(field->description);
    }
    switch (n.kind) {
        case Kind::kEnum:
            // tools.32: an enum array of the constants in the form the reader reads back.
            write_key(w, "enum");
            w.StartArray();
            for (const std::string& c : n.constants) w.String(c);
            w.EndArray();
            break;
        case Kind::kArray:
            write_key(w, "items");
            write_schema(w, n.element(), walk, nullptr);
            break;
        case Kind::kObject: {
            if (!walk.enter(n)) break;
            write_key(w, "properties");
            w.StartObject();
            std::vector<const std::string*> required;
            for (const FieldNode& f : n.fields) {
                if (dropped(f, walk)) continue;
                w.Key(f.name.data(), static_cast<rapidjson::SizeType>(f.name.size()));
                write_schema(w, f.type(), walk, &f);
                if (f.required) required.push_back(&f.name);
            }
            w.EndObject();
            if (!required.empty()) {
                write_key(w, "required");
                w.StartArray();
                for (const std::string* name : required) w.String(*name);
                w.EndArray();
            }
            walk.leave();
            break;
        }
        default:
            break;
    }
    if (field != nullptr && !field->examples_json.empty()) {
        write_key(w, "examples");
        w.StartArray();
        for (const std::string& example : field->examples_json) {
            w.RawValue(example.data(), example.size(), rapidjson::kObjectType);
        }
        w.EndArray();
    }
    w.EndObject();
}

std::string one_line(const std::string& text) {
    std::string out = text;
    for (char& c : out) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return out;
}

std::string quoted(const std::string& text) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.String(text);
    return buffer.GetString();
}

void line(std::string& out, int indent, const std::string& text) {
    out.append(static_cast<std::size_t>(indent), ' ');
    out += text;
    out += '\n';
}

void notation_fields(std::string& out, const TypeNode& object, Walk& walk, int indent);

/// What follows a `@type T` line: the enum's @values, the array's @items, the object's fields.
void notation_body(std::string& out, const TypeNode& node, Walk& walk, int indent) {
    const TypeNode& n = unwrap(node);
    if (n.kind == Kind::kEnum) {
        std::string values = "@values ";
        for (std::size_t i = 0; i < n.constants.size(); ++i) {
            if (i > 0) values += ", ";
            values += quoted(n.constants[i]);
        }
        line(out, indent, values);
    } else if (n.kind == Kind::kArray) {
        const TypeNode& element = unwrap(n.element());
        line(out, indent, std::string("@items @type ") + notation_type(element.kind));
        notation_body(out, element, walk, indent + 2);
    } else if (n.kind == Kind::kObject && walk.enter(n)) {
        notation_fields(out, n, walk, indent);
        walk.leave();
    }
}

void notation_fields(std::string& out, const TypeNode& object, Walk& walk, int indent) {
    for (const FieldNode& f : object.fields) {
        if (dropped(f, walk)) continue;
        const TypeNode& type = unwrap(f.type());
        std::string head = f.name + ": @type " + notation_type(type.kind);
        if (f.required) head += " @required";
        line(out, indent, head);
        if (!f.description.empty())
            line(out, indent + 2, "@description " + one_line(f.description));
        if (!f.examples_json.empty()) {
            std::string examples = "@examples ";
            for (std::size_t i = 0; i < f.examples_json.size(); ++i) {
                if (i > 0) examples += ", ";
                examples += f.examples_json[i];
            }
            line(out, indent + 2, examples);
        }
        notation_body(out, type, walk, indent + 2);
    }
}

}  // namespace

std::string notation_legend() {
    return "Schema notation. An answer shape written in the @-notation describes the JSON you "
           "write. Each line `name: @type T` is a property named `name` whose value has type T; "
           "the lines indented under it say more about that value.\n"
           "- @type: the value's type: string, integer, number, boolean, object, array, or enum "
           "(a string that must be exactly one of the @values).\n"
           "- @required: the property must be present; a property without it may be left out.\n"
           "- @description: what the value means.\n"
           "- @examples: example values, written as JSON.\n"
           "- @values: the only strings an enum accepts, written as JSON strings; use one "
           "verbatim.\n"
           "- @items: the type of every element of an array, with its own lines indented under "
           "it.\n"
           "Properties indented under an `@type object` line (or its @items line) are that "
           "object's properties; an object with none listed may hold any properties.";
}

std::string snake_case(std::string_view name) {
    while (!name.empty() && name.back() == '_') name.remove_suffix(1);
    std::string out;
    out.reserve(name.size() + 4);
    const auto upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
    const auto lower_or_digit = [](char c) {
        return std::islower(static_cast<unsigned char>(c)) != 0 ||
               std::isdigit(static_cast<unsigned char>(c)) != 0;
    };
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (upper(c)) {
            // A word starts at an upper-case letter after a lower-case one or a digit
            // ("maxResults"), or at the last capital of an acronym ("HTTPServer" -> http_server).
            const bool after_word = i > 0 && lower_or_digit(name[i - 1]);
            const bool acronym_end = i > 0 && upper(name[i - 1]) && i + 1 < name.size() &&
                                     std::islower(static_cast<unsigned char>(name[i + 1])) != 0;
            if ((after_word || acronym_end) && !out.empty() && out.back() != '_') out += '_';
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else {
            out += c;
        }
    }
    return out;
}

std::string json_schema(const TypeNode& node, const RenderOptions& options) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    Walk walk{options, {}};
    write_schema(w, node, walk, nullptr);
    return {buffer.GetString(), buffer.GetSize()};
}

std::string notation(const TypeNode& node, const RenderOptions& options) {
    std::string out;
    Walk walk{options, {}};
    const TypeNode& n = unwrap(node);
    if (n.kind == Kind::kObject) {
        notation_body(out, n, walk, 0);
    } else {
        line(out, 0, std::string("@type ") + notation_type(n.kind));
        notation_body(out, n, walk, 2);
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

}  // namespace nucleo::schema
