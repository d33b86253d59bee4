#include "json.hpp"

#include <rapidjson/error/en.h>

namespace nucleo::emulator::json {

bool parse(const std::string& body, rapidjson::Document& doc, std::string& error) {
    doc.Parse(body.data(), body.size());
    if (!doc.HasParseError()) return true;
    error = std::string(rapidjson::GetParseError_En(doc.GetParseError())) + " at offset " +
            std::to_string(doc.GetErrorOffset());
    return false;
}

const Value* member(const Value& v, const char* name) {
    if (!v.IsObject()) return nullptr;
    const auto it = v.FindMember(name);
    return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string string_member(const Value& v, const char* name, std::string fallback) {
    const Value* m = member(v, name);
    return m != nullptr && m->IsString() ? std::string(m->GetString(), m->GetStringLength())
                                         : fallback;
}

long long int_member(const Value& v, const char* name, long long fallback) {
    const Value* m = member(v, name);
    return m != nullptr && m->IsInt64() ? m->GetInt64() : fallback;
}

std::string write(const Value& v) {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    v.Accept(w);
    return std::string(buf.GetString(), buf.GetSize());
}

std::string canonical(const Value& v, std::string_view skip) {
    if (!v.IsObject()) return write(v);
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    for (const auto& m : v.GetObject()) {
        const std::string_view name(m.name.GetString(), m.name.GetStringLength());
        if (name == skip) continue;
        w.Key(m.name.GetString(), m.name.GetStringLength());
        m.value.Accept(w);
    }
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize());
}

std::string quote(std::string_view s) {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return std::string(buf.GetString(), buf.GetSize());
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) return text;
    std::size_t n = max_bytes;
    // Back off continuation bytes (10xxxxxx) so the cut never splits a character.
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
    return text.substr(0, n);
}

std::string first_line(std::string_view text, std::size_t max_bytes) {
    while (!text.empty() && (text.front() == '\n' || text.front() == '\r')) text.remove_prefix(1);
    const auto nl = text.find_first_of("\r\n");
    return std::string(utf8_prefix(text.substr(0, nl), max_bytes));
}

bool has_non_whitespace(std::string_view text) {
    return text.find_first_not_of(" \t\r\n\f\v") != std::string_view::npos;
}

}  // namespace nucleo::emulator::json
