// Reading and writing described types as JSON (tools.32: the schema
// publishes enum constants in the form the reader reads back, so both live on one
// description).
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <string>

#include "nucleo/errors.hpp"
#include "nucleo/schema.hpp"
#include "common/json_text.hpp"

namespace nucleo::schema {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// The JSON path of the value being read or written, "$.items[2].kind", built as we descend.
class Path {
  public:
    void push_field(const std::string& name) {
        marks_.push_back(text_.size());
        text_ += '.';
        text_ += name;
    }
    void push_index(std::size_t i) {
        marks_.push_back(text_.size());
        // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict on "[" + to_string.
        text_ += '[';
        text_ += std::to_string(i);
        text_ += ']';
    }
    void pop() {
        text_.resize(marks_.back());
        marks_.pop_back();
    }
    [[nodiscard]] const std::string& str() const { return text_; }

  private:
    std::string text_ = "$";
    std::vector<std::size_t> marks_;
};

std::string type_label(const TypeNode& node) {
    return node.name.empty() ? std::string("value") : node.name;
}



std::string allowed_values(const TypeNode& node) {
    std::string out;
    for (std::size_t i = 0; i < node.constants.size(); ++i) {
        if (i > 0) out += ", ";
        out += "\"" + node.constants[i] + "\"";
    }
    return out;
}

class JsonWriter {
  public:
    explicit JsonWriter(const TypeNode& root) : root_(root), writer_(buffer_) {}

    std::string run(const void* object) {
        write(root_, object);
        return {buffer_.GetString(), buffer_.GetSize()};
    }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(ErrorKind::kInvalidArgument,
                    "writing " + type_label(root_) + " as JSON: at " + path_.str() + ": " + what);
    }

    void write(const TypeNode& node, const void* p) {
        switch (node.kind) {
            case Kind::kString:
                writer_.String(*static_cast<const std::string*>(p));
                break;
            case Kind::kBoolean:
                writer_.Bool(*static_cast<const bool*>(p));
                break;
            case Kind::kInteger:
                writer_.Int64(node.get_integer(p));
                break;
            case Kind::kNumber: {
                const double d = node.get_number(p);
                if (!std::isfinite(d)) fail("the number " + std::to_string(d) + " is not finite");
                writer_.Double(d);
                break;
            }
            case Kind::kEnum: {
                const auto index = node.enum_index(p);
                if (!index) {
                    fail("the value of enum " + type_label(node) +
                         " is none of its declared constants (" + allowed_values(node) + ")");
                }
                writer_.String(node.constants[*index]);
                break;
            }
            case Kind::kArray: {
                writer_.StartArray();
                const std::size_t n = node.size(p);
                const TypeNode& element = node.element();
                for (std::size_t i = 0; i < n; ++i) {
                    path_.push_index(i);
                    write(element, node.at(p, i));
                    path_.pop();
                }
                writer_.EndArray();
                break;
            }
            case Kind::kOptional:
                if (node.size(p) == 0) {
                    writer_.Null();
                } else {
                    write(node.element(), node.at(p, 0));
                }
                break;
            case Kind::kJson: {
                const std::string& text = static_cast<const JsonObject*>(p)->json;
                rapidjson::Document doc;
                // limits.120: Accept below recurses, so the text is read under the depth guard.
                if (json_guard::parse(doc, text, json_guard::kDocumentMaxDepth) || !doc.IsObject())
                    fail("holds no JSON object: " + text);
                doc.Accept(writer_);
                break;
            }
            case Kind::kObject: {
                writer_.StartObject();
                if (!node.artifact_alias.empty()) {
                    // The marker that lets one pass discover an artifact (nucleo/artifacts.hpp).
                    writer_.Key("@artifact");
                    writer_.String(node.artifact_alias.data(),
                                   static_cast<rapidjson::SizeType>(node.artifact_alias.size()));
                }
                void* object = const_cast<void*>(p);  // access() is shared by read and write
                for (const FieldNode& f : node.fields) {
                    const void* member = f.access(object);
                    const TypeNode& type = f.type();
                    // An empty optional is left out rather than written as null.
                    if (type.kind == Kind::kOptional && type.size(member) == 0) continue;
                    writer_.Key(f.name.data(), static_cast<rapidjson::SizeType>(f.name.size()));
                    path_.push_field(f.name);
                    write(type, member);
                    path_.pop();
                }
                writer_.EndObject();
                break;
            }
        }
    }

    const TypeNode& root_;
    rapidjson::StringBuffer buffer_;
    Writer writer_;
    Path path_;
};

class JsonReader {
  public:
    explicit JsonReader(const TypeNode& root) : root_(root) {}

    void run(std::string_view json, void* object) {
        rapidjson::Document doc;
        // limits.120 to limits.122: depth-bounded, no duplicate key, no raw NUL.
        if (auto refusal = json_guard::parse(doc, json, json_guard::kDocumentMaxDepth)) {
            throw Error(ErrorKind::kInvalidArgument, "reading " + type_label(root_) +
                                                         " from JSON: not valid JSON at " +
                                                         refusal->text());
        }
        read(root_, doc, object);
    }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(ErrorKind::kInvalidArgument,
                    "reading " + type_label(root_) + " from JSON: at " + path_.str() + ": " + what);
    }
    [[noreturn]] void expected(const char* what, const rapidjson::Value& v) const {
        fail(std::string("expected ") + what + ", got " + internal::json_type_word(v));
    }

    void read(const TypeNode& node, const rapidjson::Value& v, void* p) {
        switch (node.kind) {
            case Kind::kString:
                if (!v.IsString()) expected("a string", v);
                static_cast<std::string*>(p)->assign(v.GetString(), v.GetStringLength());
                break;
            case Kind::kBoolean:
                if (!v.IsBool()) expected("a boolean", v);
                *static_cast<bool*>(p) = v.GetBool();
                break;
            case Kind::kInteger:
                read_integer(node, v, p);
                break;
            case Kind::kNumber:
                if (!v.IsNumber()) expected("a number", v);
                node.set_number(p, v.GetDouble());
                break;
            case Kind::kEnum: {
                if (!v.IsString()) {
                    fail("expected one of " + allowed_values(node) + ", got " + internal::json_type_word(v));
                }
                const std::string_view s(v.GetString(), v.GetStringLength());
                for (std::size_t i = 0; i < node.constants.size(); ++i) {
                    if (node.constants[i] == s) {
                        node.enum_assign(p, i);
                        return;
                    }
                }
                fail("unknown constant \"" + std::string(s) + "\" of enum " + type_label(node) +
                     "; allowed: " + allowed_values(node));
            }
            case Kind::kArray: {
                if (!v.IsArray()) expected("an array", v);
                node.clear(p);
                const TypeNode& element = node.element();
                for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
                    path_.push_index(i);
                    read(element, v[i], node.emplace(p));
                    path_.pop();
                }
                break;
            }
            case Kind::kOptional:
                if (v.IsNull()) {
                    node.clear(p);
                } else {
                    read(node.element(), v, node.emplace(p));
                }
                break;
            case Kind::kJson:
                if (!v.IsObject()) expected("an object", v);
                static_cast<JsonObject*>(p)->json = internal::json_compact(v);
                break;
            case Kind::kObject:
                read_object(node, v, p);
                break;
        }
    }

    void read_integer(const TypeNode& node, const rapidjson::Value& v, void* p) {
        std::int64_t value = 0;
        if (v.IsInt64()) {
            value = v.GetInt64();
        } else if (v.IsDouble() && std::trunc(v.GetDouble()) == v.GetDouble() &&
                   std::fabs(v.GetDouble()) < 9.0e18) {
            value = static_cast<std::int64_t>(v.GetDouble());  // 3.0 is the integer 3
        } else {
            expected("an integer", v);
        }
        if (value < node.min_integer || value > node.max_integer) {
            fail("the integer " + std::to_string(value) + " is outside " +
                 std::to_string(node.min_integer) + ".." + std::to_string(node.max_integer));
        }
        node.set_integer(p, value);
    }

    void read_object(const TypeNode& node, const rapidjson::Value& v, void* p) {
        if (!v.IsObject()) expected("an object", v);
        for (const FieldNode& f : node.fields) {
            const auto it = v.FindMember(rapidjson::StringRef(f.name.data(), f.name.size()));
            const bool absent = it == v.MemberEnd() || it->value.IsNull();
            const TypeNode& type = f.type();
            path_.push_field(f.name);
            if (absent) {
                // A stripped reasoning field is legitimately missing (tools.22), so its `required`
                // is not enforced on read.
                if (f.required && f.role != FieldRole::kReasoning) {
                    fail("the required property is missing");
                }
                if (type.kind == Kind::kOptional) type.clear(f.access(p));
            } else {
                read(type, it->value, f.access(p));
            }
            path_.pop();
        }
    }

    const TypeNode& root_;
    Path path_;
};

}  // namespace

std::string write_json(const TypeNode& node, const void* object) {
    return JsonWriter(node).run(object);
}

void read_json(const TypeNode& node, std::string_view json, void* object) {
    JsonReader(node).run(json, object);
}

}  // namespace nucleo::schema
