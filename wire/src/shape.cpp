// The one walk that gathers a body's Shape (wire.164), over a parsed RapidJSON value (the
// emulator's) or over the body bytes as simdjson's parser validated them into its tape (the
// core's audit). The walk is written once, over an adapter, so both give the rules the same
// records.
#include "shape.hpp"

#include <simdjson.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

namespace nucleo::contract::internal {

void Shape::clear(WireFamily f) {
    family = f;
    max_tokens = {};
    max_completion_tokens = {};
    inference_config = false;
    inference_max_tokens = {};
    thinking_present = false;
    thinking_enabled = false;
    extra_thinking_enabled = false;
    budget_tokens = {};
    request_mark = {};
    tools_array = false;
    tool_config = false;
    tools.clear();
    system = Kind::kAbsent;
    system_text = {};
    system_blocks.clear();
    messages_present = false;
    messages_array = false;
    messages.clear();
    blocks.clear();
    inner_1h.clear();
    call_ids.clear();
}

namespace {

enum class J : std::uint8_t { kObject, kArray, kString, kNumber, kBool, kNull };

/// Deeper nesting is refused as not JSON the rule book reads (the walk recurses).
constexpr int kMaxDepth = 1024;

/// Blank records, copied to start a new one (cheaper than value-initialising it in place).
const Msg kBlankMsg{};
const Block kBlankBlock{};

/// The walk. `A` reads one node kind at a time: kind(n, j), fields(n, f(key, child)),
/// elements(n, f(child)), string(n, view), number(n, Num), skip(n) (validates and discards).
template <class A>
class Walker {
  public:
    using N = typename A::Node;

    Walker(Shape& s) : s_(s), anthropic_(s.family == WireFamily::kAnthropicMessages) {
        mark_ = s.family == WireFamily::kBedrockConverse ? "cachePoint" : "cache_control";
    }

    /// The members of the root object.
    bool root_member(std::string_view key, N& v) {
        if (key == "messages") {
            s_.messages_present = true;
            return messages(v);
        }
        if (key == "max_tokens") return num(v, s_.max_tokens);
        if (key == "cache_control" && anthropic_) {
            s_.request_mark = Block{};
            return mark(v, s_.request_mark, 1);
        }
        if (key == "max_completion_tokens") return num(v, s_.max_completion_tokens);
        if (key == "system") return system(v);
        if (key == "tools" && s_.family != WireFamily::kBedrockConverse) return tools(v, 1);
        if (key == "thinking") {
            s_.thinking_present = true;
            return object(v, 1, [&](std::string_view k, N& c) {
                if (k == "type") return enabled(c, s_.thinking_enabled);
                if (k == "budget_tokens") return num(c, s_.budget_tokens);
                return A::skip(c);
            });
        }
        if (key == "inferenceConfig") {
            s_.inference_config = true;
            return object(v, 1, [&](std::string_view k, N& c) {
                return k == "maxTokens" ? num(c, s_.inference_max_tokens) : A::skip(c);
            });
        }
        if (key == "toolConfig") {
            s_.tool_config = true;
            return object(v, 1, [&](std::string_view k, N& c) {
                return k == "tools" && s_.family == WireFamily::kBedrockConverse ? tools(c, 2) : A::skip(c);
            });
        }
        if (key == "additionalModelRequestFields") {
            return object(v, 1, [&](std::string_view k, N& c) {
                if (k != "thinking") return A::skip(c);
                return object(c, 2, [&](std::string_view k2, N& c2) {
                    return k2 == "type" ? enabled(c2, s_.extra_thinking_enabled) : A::skip(c2);
                });
            });
        }
        return A::skip(v);
    }

  private:
    /// Calls f(key, child) for each member when `v` is an object, else validates and discards it.
    template <class F>
    bool object(N& v, int depth, F&& f) {
        if (depth > kMaxDepth) return false;
        J j{};
        if (!A::kind(v, j)) return false;
        if (j != J::kObject) return A::skip(v);
        return A::fields(v, f);
    }

    bool str(N& v, std::string_view& out, bool* is_string = nullptr) {
        J j{};
        if (!A::kind(v, j)) return false;
        if (is_string != nullptr) *is_string = j == J::kString;
        if (j == J::kString) return A::string(v, out);
        out = {};
        return A::skip(v);
    }

    bool num(N& v, Num& out) {
        out = Num{};
        out.present = true;
        J j{};
        if (!A::kind(v, j)) return false;
        if (j == J::kNumber) return A::number(v, out);
        return A::skip(v);
    }

    bool enabled(N& v, bool& out) {
        std::string_view t;
        if (!str(v, t)) return false;
        out = t == "enabled";
        return true;
    }

    /// `{"type": ...}` of a schema.
    bool schema(N& v, bool& present, std::string_view& type, int depth) {
        present = true;
        type = {};
        return object(v, depth, [&](std::string_view k, N& c) {
            return k == "type" ? str(c, type) : A::skip(c);
        });
    }

    /// One element of a block list. `top`: its nested blocks' marks go to Shape::inner_1h.
    template <class B>
    bool block(N& v, B& b, int depth, bool top) {
        return object(v, depth, [&](std::string_view k, N& c) -> bool {
            if (k == "type") return str(c, b.type, &b.type_is_string);
            if (k == "text") return str(c, b.text, &b.text_is_string);
            if (k == mark_) return mark(c, b, depth + 1);
            if (k == "content") return anthropic_ ? content(c, b, depth + 1, top) : A::skip(c);
            if (k == "id") return str(c, b.id);
            if (k == "tool_use_id") return str(c, b.tool_use_id);
            if (k == "toolUse" || k == "toolResult") {
                (k == "toolUse" ? b.tool_use : b.tool_result) = true;
                b.id = {};
                return object(c, depth + 1, [&](std::string_view k2, N& c2) {
                    return k2 == "toolUseId" ? str(c2, b.id) : A::skip(c2);
                });
            }
            if (k == "reasoningContent") {
                b.reasoning = true;
                return A::skip(c);
            }
            if constexpr (std::is_same_v<B, Tool>) return tool_member(k, c, b, depth);
            return A::skip(c);
        });
    }

    bool tool_member(std::string_view k, N& c, Tool& b, int depth) {
        if (k == "name") return str(c, b.name);
        if (k == "input_schema") return schema(c, b.schema, b.schema_type, depth + 1);
        if (k != "function" && k != "toolSpec") return A::skip(c);
        const bool spec = k == "toolSpec";
        b.holder = true;
        b.holder_name = {};
        b.holder_schema = false;
        b.holder_schema_type = {};
        return object(c, depth + 1, [&](std::string_view k2, N& c2) -> bool {
            if (k2 == "name") return str(c2, b.holder_name);
            if (!spec) {
                return k2 == "parameters" ? schema(c2, b.holder_schema, b.holder_schema_type, depth + 2)
                                          : A::skip(c2);
            }
            if (k2 != "inputSchema") return A::skip(c2);
            b.holder_schema = false;
            b.holder_schema_type = {};
            return object(c2, depth + 2, [&](std::string_view k3, N& c3) {
                return k3 == "json" ? schema(c3, b.holder_schema, b.holder_schema_type, depth + 3)
                                    : A::skip(c3);
            });
        });
    }

    bool mark(N& v, Block& b, int depth) {
        b.mark_present = true;
        b.ttl_1h = false;
        J j{};
        if (!A::kind(v, j)) return false;
        b.mark_set = j != J::kNull;
        if (j != J::kObject) return A::skip(v);
        return object(v, depth, [&](std::string_view k, N& c) -> bool {
            if (k != "ttl") return A::skip(c);
            std::string_view ttl;
            if (!str(c, ttl)) return false;
            b.ttl_1h = ttl == "1h";
            return true;
        });
    }

    /// Anthropic: the blocks nested in a block's "content" array, for their cache marks.
    template <class B>
    bool content(N& v, B& b, int depth, bool top) {
        if (depth > kMaxDepth) return false;
        b.nested_marks = 0;
        if (top) b.inner_begin = b.inner_end = static_cast<std::uint32_t>(s_.inner_1h.size());
        J j{};
        if (!A::kind(v, j)) return false;
        if (j != J::kArray) return A::skip(v);
        return A::elements(v, [&](N& c) {
            Block inner;
            if (!block(c, inner, depth + 1, false)) return false;
            b.nested_marks += (inner.mark_set ? 1U : 0U) + inner.nested_marks;
            if (top && inner.mark_set) {
                s_.inner_1h.push_back(inner.ttl_1h ? 1U : 0U);
                b.inner_end = static_cast<std::uint32_t>(s_.inner_1h.size());
            }
            return true;
        });
    }

    bool tools(N& v, int depth) {
        s_.tools.clear();
        J j{};
        if (!A::kind(v, j)) return false;
        s_.tools_array = j == J::kArray;
        if (j != J::kArray) return A::skip(v);
        return A::elements(v, [&](N& c) { return block(c, s_.tools.emplace_back(), depth + 1, true); });
    }

    bool system(N& v) {
        s_.system_blocks.clear();
        s_.system_text = {};
        J j{};
        if (!A::kind(v, j)) return false;
        if (j == J::kString) {
            s_.system = Kind::kString;
            return A::string(v, s_.system_text);
        }
        if (j != J::kArray) {
            s_.system = Kind::kOther;
            return A::skip(v);
        }
        s_.system = Kind::kArray;
        return A::elements(v, [&](N& c) { return block(c, s_.system_blocks.emplace_back(), 2, true); });
    }

    bool messages(N& v) {
        s_.messages.clear();
        J j{};
        if (!A::kind(v, j)) return false;
        s_.messages_array = j == J::kArray;
        if (j != J::kArray) return A::skip(v);
        return A::elements(v, [&](N& c) { return message(c); });
    }

  public:
    /// One element of `messages`, appended to the records.
    bool message(N& c) {
        // Filled in place (message_member adds nothing to s_.messages, so the reference holds),
        // from a copy of a blank record: no record is built on the stack and copied.
        Msg& m = s_.messages.emplace_back(kBlankMsg);
        m.blocks_begin = m.blocks_end = static_cast<std::uint32_t>(s_.blocks.size());
        m.calls_begin = m.calls_end = static_cast<std::uint32_t>(s_.call_ids.size());
        return object(c, 2, [&](std::string_view k, N& f) { return message_member(k, f, m); });
    }

  private:

    bool message_member(std::string_view k, N& f, Msg& m) {
        if (k == "role") return str(f, m.role);
        if (k == "content") {
            s_.blocks.resize(m.blocks_begin);
            m.blocks_end = m.blocks_begin;
            m.content_text = {};
            J j{};
            if (!A::kind(f, j)) return false;
            if (j == J::kString) {
                m.content = Kind::kString;
                if (!A::string(f, m.content_text)) return false;
                m.content_empty = m.content_text.empty();
                return true;
            }
            if (j != J::kArray) {
                m.content = Kind::kOther;
                m.content_empty = false;
                return A::skip(f);
            }
            m.content = Kind::kArray;
            // Filled in place: block() adds nothing to s_.blocks, so the reference holds.
            const bool ok = A::elements(f, [&](N& c) { return block(c, s_.blocks.emplace_back(kBlankBlock), 4, true); });
            m.blocks_end = static_cast<std::uint32_t>(s_.blocks.size());
            m.content_empty = m.blocks_end == m.blocks_begin;
            return ok;
        }
        if (k == "tool_call_id") {
            m.tool_call_id_present = true;
            return str(f, m.tool_call_id);
        }
        if (k == "tool_calls") {
            s_.call_ids.resize(m.calls_begin);
            m.calls_end = m.calls_begin;
            J j{};
            if (!A::kind(f, j)) return false;
            if (j != J::kArray) return A::skip(f);
            const bool ok = A::elements(f, [&](N& c) {
                std::string_view id;
                if (!object(c, 4, [&](std::string_view k2, N& c2) { return k2 == "id" ? str(c2, id) : A::skip(c2); }))
                    return false;
                s_.call_ids.push_back(id);
                return true;
            });
            m.calls_end = static_cast<std::uint32_t>(s_.call_ids.size());
            return ok;
        }
        return A::skip(f);
    }

    Shape& s_;
    bool anthropic_;
    std::string_view mark_;
};

// ---- over a parsed RapidJSON value: already valid, so skip() has nothing to check.

struct Dom {
    using Node = const rapidjson::Value;
    static bool kind(Node& v, J& j) {
        switch (v.GetType()) {
            case rapidjson::kObjectType: j = J::kObject; break;
            case rapidjson::kArrayType: j = J::kArray; break;
            case rapidjson::kStringType: j = J::kString; break;
            case rapidjson::kNumberType: j = J::kNumber; break;
            case rapidjson::kNullType: j = J::kNull; break;
            default: j = J::kBool; break;
        }
        return true;
    }
    template <class F>
    static bool fields(Node& v, F&& f) {
        for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
            if (!f(std::string_view(it->name.GetString(), it->name.GetStringLength()), it->value)) return false;
        }
        return true;
    }
    template <class F>
    static bool elements(Node& v, F&& f) {
        for (auto it = v.Begin(); it != v.End(); ++it)
            if (!f(*it)) return false;
        return true;
    }
    static bool string(Node& v, std::string_view& out) {
        out = std::string_view(v.GetString(), v.GetStringLength());
        return true;
    }
    static bool number(Node& v, Num& out) {
        out.is_int64 = v.IsInt64();
        if (out.is_int64) out.value = v.GetInt64();
        return true;
    }
    static bool skip(Node&) { return true; }
};

// ---- over the body bytes parsed by simdjson's DOM parser: it validates the whole body (grammar,
// escapes, numbers, literals, UTF-8) into its tape, which the walk then reads word by word, in the
// tape's documented format: a word's top byte is its type; '{' and '[' carry the index after their
// closing word; a string carries the offset of its 32-bit length and bytes in the string buffer;
// a number's value is the next word. (The element API re-checks each type and calls out of line
// to skip a value: a third of the walk.)

static_assert(simdjson::SIMDJSON_VERSION_MAJOR == 3, "the walk reads simdjson 3's tape format");

struct Tape {
    struct Node {
        const std::uint64_t* tape;
        const std::uint8_t* strings;
        std::size_t at;
        [[nodiscard]] char type() const { return static_cast<char>(tape[at] >> 56); }
        /// The index of the word after this value.
        [[nodiscard]] std::size_t after() const {
            switch (type()) {
                case '{':
                case '[': return static_cast<std::uint32_t>(tape[at]);
                case 'l':
                case 'u':
                case 'd': return at + 2;
                default: return at + 1;
            }
        }
        [[nodiscard]] std::string_view text() const {
            const std::uint8_t* s = strings + (tape[at] & simdjson::internal::JSON_VALUE_MASK);
            std::uint32_t size = 0;
            std::memcpy(&size, s, sizeof size);
            return {reinterpret_cast<const char*>(s + sizeof size), size};
        }
    };
    static bool kind(Node& v, J& j) {
        switch (v.type()) {
            case '{': j = J::kObject; break;
            case '[': j = J::kArray; break;
            case '"': j = J::kString; break;
            case 'l':
            case 'u':
            case 'd': j = J::kNumber; break;
            case 't':
            case 'f': j = J::kBool; break;
            default: j = J::kNull; break;
        }
        return true;
    }
    template <class F>
    static bool fields(Node& v, F&& f) {
        const std::size_t close = v.after() - 1;
        for (std::size_t k = v.at + 1; k < close;) {
            const Node key{v.tape, v.strings, k};
            Node value{v.tape, v.strings, k + 1};
            if (!f(key.text(), value)) return false;
            k = value.after();
        }
        return true;
    }
    template <class F>
    static bool elements(Node& v, F&& f) {
        const std::size_t close = v.after() - 1;
        for (std::size_t k = v.at + 1; k < close;) {
            Node e{v.tape, v.strings, k};
            if (!f(e)) return false;
            k = e.after();
        }
        return true;
    }
    static bool string(Node& v, std::string_view& out) {
        out = v.text();
        return true;
    }
    static bool number(Node& v, Num& out) {
        out.is_int64 = v.type() == 'l';
        if (out.is_int64) std::memcpy(&out.value, &v.tape[v.at + 1], sizeof out.value);
        return true;
    }
    static bool skip(Node&) { return true; }

    /// The root value of the document the parser read last.
    static Node root(const simdjson::dom::parser& parser) {
        return {parser.doc.tape.get(), parser.doc.string_buf.get(), 1};
    }
};

/// The per-thread parser and the padded copy of the body it reads.
struct Reader {
    simdjson::dom::parser parser;
    std::string padded;
    rapidjson::Document fallback;  ///< a body simdjson refuses, read again by RapidJSON
};

}  // namespace

bool shape_of(WireFamily family, const rapidjson::Value& body, Shape& out) {
    out.clear(family);
    if (!body.IsObject()) return false;
    Walker<Dom> walker(out);
    return Dom::fields(body, [&](std::string_view k, const rapidjson::Value& v) { return walker.root_member(k, v); });
}

namespace {

Reader& reader_of_thread() {
    thread_local Reader reader;
    return reader;
}

}  // namespace

void release_large_reader() {
    Reader& reader = reader_of_thread();
    if (reader.parser.capacity() <= kKeepReaderBytes && reader.padded.capacity() <= kKeepReaderBytes) return;
    // simdjson sizes its tape and indexes by the largest body read (several times its bytes).
    reader.parser = simdjson::dom::parser{};
    std::string().swap(reader.padded);
    rapidjson::Document().Swap(reader.fallback);
}

static_assert(kReadPadding >= simdjson::SIMDJSON_PADDING);

BytesRead shape_of_bytes(WireFamily family, std::string_view body, std::size_t readable, Shape& out) {
    out.clear(family);
    Reader& reader = reader_of_thread();
    // simdjson reads up to SIMDJSON_PADDING bytes past the end (wire.172): in place when the
    // caller's buffer has them, else from a padded copy.
    const char* bytes = body.data();
    if (readable < body.size() + simdjson::SIMDJSON_PADDING) {
        reader.padded.assign(body.data(), body.size());
        reader.padded.append(simdjson::SIMDJSON_PADDING, ' ');
        bytes = reader.padded.data();
    }
    simdjson::dom::element root;
    if (reader.parser.parse(bytes, body.size(), false).get(root) != simdjson::SUCCESS) {
        // simdjson is the stricter reader: it refuses integers beyond 64 bits and lone low
        // surrogates, which RapidJSON (and the providers' JSON readers) take. Such a body, or a
        // broken one, is read again with RapidJSON's full validation, which decides; but a raw
        // NUL byte, which RapidJSON takes for the end of the text, is never JSON (wire.175).
        if (std::memchr(body.data(), '\0', body.size()) != nullptr) return BytesRead::kNotJson;
        reader.fallback.Parse<rapidjson::kParseValidateEncodingFlag>(body.data(), body.size());
        if (reader.fallback.HasParseError()) return BytesRead::kNotJson;
        if (!reader.fallback.IsObject()) return BytesRead::kNotObject;
        shape_of(family, reader.fallback, out);
        return BytesRead::kOk;
    }
    if (root.type() != simdjson::dom::element_type::OBJECT) return BytesRead::kNotObject;
    Walker<Tape> walker(out);
    Tape::Node top = Tape::root(reader.parser);
    if (!Tape::fields(top, [&](std::string_view k, Tape::Node& v) { return walker.root_member(k, v); }))
        return BytesRead::kNotJson;
    return BytesRead::kOk;
}

}  // namespace nucleo::contract::internal

namespace nucleo::contract::internal {

BytesRead messages_of_bytes(WireFamily family, std::string_view list, Shape& out) {
    out.clear(family);
    Reader& reader = reader_of_thread();
    // Read as the array "[" list "]": one or more values, each then walked as a message.
    reader.padded.clear();
    reader.padded.reserve(list.size() + 2 + simdjson::SIMDJSON_PADDING);
    reader.padded += '[';
    reader.padded += list;
    reader.padded += ']';
    const std::size_t size = reader.padded.size();
    reader.padded.append(simdjson::SIMDJSON_PADDING, ' ');
    simdjson::dom::element root;
    if (reader.parser.parse(reader.padded.data(), size, false).get(root) != simdjson::SUCCESS) {
        // As for a whole body: RapidJSON decides what simdjson refuses, and a raw NUL byte is
        // never JSON (wire.175).
        if (std::memchr(list.data(), '\0', list.size()) != nullptr) return BytesRead::kNotJson;
        reader.fallback.Parse<rapidjson::kParseValidateEncodingFlag>(reader.padded.data(), size);
        if (reader.fallback.HasParseError() || !reader.fallback.IsArray()) return BytesRead::kNotJson;
        if (reader.fallback.Empty()) return BytesRead::kNotObject;
        Walker<Dom> walker(out);
        for (const rapidjson::Value& m : reader.fallback.GetArray())
            if (!walker.message(m)) return BytesRead::kNotJson;
        return BytesRead::kOk;
    }
    if (root.type() != simdjson::dom::element_type::ARRAY) return BytesRead::kNotJson;
    Tape::Node list_node = Tape::root(reader.parser);
    if (list_node.after() == list_node.at + 2) return BytesRead::kNotObject;  // "[]"
    Walker<Tape> walker(out);
    return Tape::elements(list_node, [&](Tape::Node& m) { return walker.message(m); }) ? BytesRead::kOk
                                                                                         : BytesRead::kNotJson;
}

void fold_system_messages(Shape& shape) {
    if (shape.family != WireFamily::kAnthropicMessages) return;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < shape.messages.size(); ++i) {
        const Msg& m = shape.messages[i];
        if (kept > 0 && m.role == "system" && m.content == Kind::kArray &&
            shape.messages[kept - 1].blocks_end == m.blocks_begin) {
            shape.messages[kept - 1].blocks_end = m.blocks_end;
            continue;
        }
        if (kept != i) shape.messages[kept] = m;
        ++kept;
    }
    shape.messages.resize(kept);
}

}  // namespace nucleo::contract::internal
