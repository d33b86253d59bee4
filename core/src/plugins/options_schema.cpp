// abi.109, abi.110: the JSON Schema subset a plugin's options are checked against.
#include "plugins/options_schema.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace nucleo::plugins_detail {
namespace {

using rapidjson::Value;

/// A value as it reads in a message: compact JSON, cut past 80 characters.
std::string shown(const Value& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    v.Accept(writer);
    std::string s(buffer.GetString(), buffer.GetSize());
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    return s;
}

std::string child(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
}

const Value* member(const Value& obj, const char* key) {
    const auto it = obj.FindMember(key);
    return it == obj.MemberEnd() ? nullptr : &it->value;
}

bool is_type(const Value& v, std::string_view type) {
    if (type == "object") return v.IsObject();
    if (type == "array") return v.IsArray();
    if (type == "string") return v.IsString();
    if (type == "integer") {
        if (v.IsInt64() || v.IsUint64()) return true;
        return v.IsDouble() && std::isfinite(v.GetDouble()) && std::floor(v.GetDouble()) == v.GetDouble();
    }
    if (type == "number") return v.IsNumber();
    if (type == "boolean") return v.IsBool();
    if (type == "null") return v.IsNull();
    throw SchemaError{"unknown type \"" + std::string(type) + "\""};
}

std::string article(std::string_view type) {
    if (type == "object") return "a mapping";
    if (type == "array") return "a sequence";
    if (type == "integer") return "an integer";
    if (type == "null") return "null";
    if (type == "boolean") return "true or false";
    return "a " + std::string(type);
}

/// "a string" / "a string or a sequence", from the schema's `type`.
std::string expected_type(const Value& type) {
    if (type.IsString()) return article(type.GetString());
    std::string out;
    for (const auto& t : type.GetArray()) {
        out += (out.empty() ? "" : " or ") + article(t.GetString());
    }
    return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

class Validator {
  public:
    std::optional<OptionsIssue> check(const Value& schema, const Value& v, const std::string& path,
                                      int depth) const {
        if (depth > kMaxSchemaDepth) {
            // The options are data of the operator: too deep is their mistake, named where.
            return OptionsIssue{path, "nested deeper than " + std::to_string(kMaxSchemaDepth) +
                                          " levels (the options nesting limit)"};
        }
        if (schema.IsBool()) {
            if (schema.GetBool()) return std::nullopt;
            return OptionsIssue{path, "no value is allowed here"};
        }
        if (!schema.IsObject()) throw SchemaError{at(path) + "a schema is not an object"};
        if (const Value* type = member(schema, "type")) {
            if (!type->IsString() && !type->IsArray())
                throw SchemaError{at(path) + "\"type\" is neither a name nor a list of names"};
            bool ok = false;
            if (type->IsString()) {
                ok = is_type(v, type->GetString());
            } else {
                for (const auto& t : type->GetArray()) {
                    if (!t.IsString()) throw SchemaError{at(path) + "\"type\" lists a non-string"};
                    ok = ok || is_type(v, t.GetString());
                }
            }
            if (!ok)
                return OptionsIssue{path, "expected " + expected_type(*type) + described(schema) +
                                              ", got " + shown(v)};
        }
        if (const Value* values = member(schema, "enum")) {
            if (!values->IsArray()) throw SchemaError{at(path) + "\"enum\" is not a list"};
            const auto& list = values->GetArray();
            if (std::none_of(list.begin(), list.end(), [&](const Value& e) { return e == v; })) {
                std::string names;
                for (const auto& e : list) names += (names.empty() ? "" : ", ") + shown(e);
                return OptionsIssue{path, "expected one of " + names + ", got " + shown(v)};
            }
        }
        if (v.IsNumber()) {
            if (auto issue = range(schema, v, path)) return issue;
        }
        if (v.IsString()) {
            if (const Value* min = member(schema, "minLength")) {
                if (!min->IsUint64()) throw SchemaError{at(path) + "\"minLength\" is not a count"};
                if (v.GetStringLength() < min->GetUint64())
                    return OptionsIssue{path, "expected a string of at least " +
                                                  std::to_string(min->GetUint64()) + " character" +
                                                  (min->GetUint64() == 1 ? "" : "s") +
                                                  described(schema) + ", got " + shown(v)};
            }
        }
        if (v.IsObject()) return object(schema, v, path, depth);
        if (v.IsArray()) {
            if (const Value* items = member(schema, "items")) {
                std::size_t i = 0;
                for (const auto& item : v.GetArray()) {
                    if (auto issue =
                            check(*items, item, path + "[" + std::to_string(i++) + "]", depth + 1))
                        return issue;
                }
            }
        }
        return std::nullopt;
    }

  private:
    static std::string at(const std::string& path) {
        return path.empty() ? std::string() : "at " + path + ": ";
    }

    /// " (the database file)" from a schema's description, cut to keep the message one line.
    static std::string described(const Value& schema) {
        const Value* d = member(schema, "description");
        if (d == nullptr || !d->IsString() || d->GetStringLength() == 0) return "";
        std::string s(d->GetString(), d->GetStringLength());
        if (s.size() > 80) s = s.substr(0, 77) + "...";
        for (char& c : s)
            if (static_cast<unsigned char>(c) < 0x20) c = ' ';
        return " (" + s + ")";
    }

    static std::optional<OptionsIssue> range(const Value& schema, const Value& v,
                                             const std::string& path) {
        const Value* min = member(schema, "minimum");
        const Value* max = member(schema, "maximum");
        if ((min != nullptr && !min->IsNumber()) || (max != nullptr && !max->IsNumber()))
            throw SchemaError{at(path) + "\"minimum\" or \"maximum\" is not a number"};
        const double x = v.GetDouble();
        const bool low = min != nullptr && x < min->GetDouble();
        const bool high = max != nullptr && x > max->GetDouble();
        if (!low && !high) return std::nullopt;
        std::string bounds;
        if (min != nullptr) bounds += ">= " + shown(*min);
        if (max != nullptr) bounds += (bounds.empty() ? "<= " : " and <= ") + shown(*max);
        const Value* type = member(schema, "type");
        const std::string what = type != nullptr ? expected_type(*type) : std::string("a number");
        return OptionsIssue{path, "expected " + what + " " + bounds + described(schema) + ", got " +
                                      shown(v)};
    }

    std::optional<OptionsIssue> object(const Value& schema, const Value& v, const std::string& path,
                                       int depth) const {
        const Value* properties = member(schema, "properties");
        if (properties != nullptr && !properties->IsObject())
            throw SchemaError{at(path) + "\"properties\" is not an object"};
        const Value* additional = member(schema, "additionalProperties");
        if (additional != nullptr && !additional->IsBool() && !additional->IsObject())
            throw SchemaError{at(path) + "\"additionalProperties\" is neither a boolean nor a schema"};
        for (const auto& m : v.GetObject()) {
            const std::string key(m.name.GetString(), m.name.GetStringLength());
            const Value* sub = properties != nullptr ? member(*properties, key.c_str()) : nullptr;
            if (sub == nullptr && additional != nullptr && additional->IsBool() &&
                !additional->GetBool()) {
                static const Value kNone(rapidjson::kObjectType);
                const Value& known = properties != nullptr ? *properties : kNone;
                std::string message = "unknown option \"" + key + "\"";
                if (auto near = did_you_mean(key, known)) message += " (did you mean \"" + *near + "\"?)";
                std::string names;
                for (const auto& p : known.GetObject()) names += (names.empty() ? "" : ", ") + std::string(p.name.GetString());
                message += names.empty() ? "; this plugin takes no options" : "; expected one of: " + names;
                return OptionsIssue{child(path, key), message};
            }
            const Value* rule = sub != nullptr ? sub : (additional != nullptr && additional->IsObject() ? additional : nullptr);
            if (rule == nullptr) continue;
            if (auto issue = check(*rule, m.value, child(path, key), depth + 1)) return issue;
        }
        if (const Value* required = member(schema, "required")) {
            if (!required->IsArray()) throw SchemaError{at(path) + "\"required\" is not a list"};
            for (const auto& name : required->GetArray()) {
                if (!name.IsString()) throw SchemaError{at(path) + "\"required\" lists a non-string"};
                if (v.HasMember(name)) continue;
                const Value* sub = properties != nullptr ? member(*properties, name.GetString()) : nullptr;
                std::string expected;
                if (sub != nullptr && sub->IsObject()) {
                    if (const Value* type = member(*sub, "type"); type != nullptr && (type->IsString() || type->IsArray()))
                        expected = ": expected " + expected_type(*type) + described(*sub);
                    else
                        expected = described(*sub);
                }
                return OptionsIssue{child(path, name.GetString()),
                                    "required option \"" + std::string(name.GetString()) +
                                        "\" is missing" + expected,
                                    true};
            }
        }
        return std::nullopt;
    }
};

}  // namespace

std::optional<std::string> did_you_mean(std::string_view word, const rapidjson::Value& properties) {
    std::optional<std::string> best;
    std::size_t best_distance = 0;
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    for (const auto& p : properties.GetObject()) {
        const std::string_view name(p.name.GetString(), p.name.GetStringLength());
        const std::size_t d = edit_distance(word, name);
        if (d <= limit && (!best || d < best_distance)) {
            best = std::string(name);
            best_distance = d;
        }
    }
    return best;
}

std::optional<OptionsIssue> validate_options(const rapidjson::Value& schema,
                                             const rapidjson::Value& options) {
    return Validator().check(schema, options, "", 0);
}

}  // namespace nucleo::plugins_detail
