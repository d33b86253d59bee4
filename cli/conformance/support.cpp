// Sinks, error structs, JSON checks and the ELF export table of the conformance kit.
#include "conformance/support.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace nucleo::conformance::detail {
namespace {

struct SinkTable {
    std::mutex mutex;
    std::uint64_t next = 1;
    std::unordered_map<std::uint64_t, std::string*> open;
    std::unordered_map<std::uint64_t, std::string> closed;  ///< id -> the slot it served
    std::vector<std::string> late;
};

SinkTable& sinks() {
    static SinkTable t;
    return t;
}

int32_t sink_write(void* ctx, const char* data, size_t size) {
    const auto id = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(ctx));
    try {
        SinkTable& t = sinks();
        std::lock_guard<std::mutex> lock(t.mutex);
        if (auto it = t.open.find(id); it != t.open.end()) {
            if (size > 0) {
                if (data == nullptr) return NUCLEO_ERR_INVALID_ARGUMENT;
                it->second->append(data, size);
            }
            return NUCLEO_OK;
        }
        auto closed = t.closed.find(id);
        t.late.push_back(closed != t.closed.end() ? closed->second : "an unknown call");
        return NUCLEO_ERR_PLUGIN;
    } catch (...) {
        return NUCLEO_ERR_INTERNAL;
    }
}

/// answers.101: the normalized stop reasons. The kit is built against plugin-api alone, so the
/// list is its own; core/include/nucleo/provider_client.hpp's kStopReasons is the same set.
bool known_stop_reason(std::string_view reason) {
    static const std::set<std::string, std::less<>> s{
        "end_turn", "max_tokens", "tool_use",       "stop_sequence",
        "refusal",  "pause_turn", "content_filter", "context_window_exceeded",
        "other",    "compaction"};
    return s.count(reason) != 0;
}

bool is_count(const rapidjson::Value& v) {
    return v.IsInt64() && v.GetInt64() >= 0;
}

std::string block_problem(const rapidjson::Value& b, const std::string& where) {
    if (!b.IsObject() || !b.HasMember("type") || !b["type"].IsString())
        return where + " is not a block with a \"type\"";
    const std::string_view type = b["type"].GetString();
    const auto needs_string = [&](const char* key) -> std::string {
        if (!b.HasMember(key) || !b[key].IsString())
            return where + " (" + std::string(type) + ") lacks \"" + key + "\" (a string)";
        return "";
    };
    if (type == "text") return needs_string("text");
    if (type == "thinking") return needs_string("thinking");
    if (type == "redacted_thinking") return needs_string("data");
    if (type == "tool_use") {
        if (auto p = needs_string("id"); !p.empty()) return p;
        if (auto p = needs_string("name"); !p.empty()) return p;
        if (!b.HasMember("input") || !b["input"].IsObject())
            return where + " (tool_use) lacks \"input\" (an object)";
        return "";
    }
    if (type == "provider_block") {  // answers.110: a provider's own block, kept verbatim
        if (auto p = needs_string("wire_family"); !p.empty()) return p;
        if (!b.HasMember("block") || !b["block"].IsObject() || !b["block"].HasMember("type") ||
            !b["block"]["type"].IsString())
            return where + " (provider_block) lacks \"block\" (an object with a string \"type\")";
        return "";
    }
    if (type == "json" || type == "image" || type == "file" || type == "tool_result") return "";
    return where + " has the unknown type \"" + std::string(type) + "\"";
}

}  // namespace

Sink::Sink(std::string& out, std::string slot) {
    SinkTable& t = sinks();
    std::lock_guard<std::mutex> lock(t.mutex);
    id_ = t.next++;
    t.open.emplace(id_, &out);
    t.closed.emplace(id_, std::move(slot));
    sink_ = {sizeof(nucleo_sink), reinterpret_cast<void*>(static_cast<std::uintptr_t>(id_)),
             &sink_write};
}

Sink::~Sink() {
    SinkTable& t = sinks();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.open.erase(id_);
}

std::vector<std::string> take_late_writes() {
    SinkTable& t = sinks();
    std::lock_guard<std::mutex> lock(t.mutex);
    std::vector<std::string> late;
    late.swap(t.late);
    return late;
}

nucleo_error fresh_error() noexcept {
    nucleo_error err;
    nucleo_error_init(&err);
    std::memset(err.message + 1, 'x', sizeof err.message - 1);
    err.message[0] = '\0';
    return err;
}

std::string error_text(const nucleo_error& err) {
    const void* nul = std::memchr(err.message, '\0', sizeof err.message);
    const std::size_t n =
        nul != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nul) - err.message)
                       : sizeof err.message;
    return std::string(err.message, n);
}

std::string error_problem(int32_t status, const nucleo_error& err) {
    if (status == NUCLEO_OK) return "";
    if (err.code != status)
        return "err.code " + std::to_string(err.code) + " while the call returned " +
               std::to_string(status);
    if (std::memchr(err.message, '\0', sizeof err.message) == nullptr)
        return "err.message is not NUL-terminated within its " +
               std::to_string(sizeof err.message) + " bytes";
    const std::string text = error_text(err);
    if (text.empty()) return "err.message is empty";
    if (text.find('\n') != std::string::npos)
        return "err.message spans several lines: \"" + excerpt(text) + "\"";
    return "";
}

std::string status_name(int32_t status) {
    static const char* const names[] = {"NUCLEO_OK",
                                        "NUCLEO_ERR_INVALID_ARGUMENT",
                                        "NUCLEO_ERR_NOT_FOUND",
                                        "NUCLEO_ERR_NOT_IMPLEMENTED",
                                        "NUCLEO_ERR_CONFIG",
                                        "NUCLEO_ERR_PLUGIN",
                                        "NUCLEO_ERR_RATE_LIMITED",
                                        "NUCLEO_ERR_OVERLOADED",
                                        "NUCLEO_ERR_TRANSPORT",
                                        "NUCLEO_ERR_PROTOCOL",
                                        "NUCLEO_ERR_UNCORRECTABLE",
                                        "NUCLEO_ERR_CONTEXT_OVERFLOW",
                                        "NUCLEO_ERR_OWNERSHIP",
                                        "NUCLEO_ERR_INTERNAL"};
    if (status >= 0 && status <= NUCLEO_ERR_INTERNAL) return names[status];
    return "status " + std::to_string(status);
}

bool parse_json(std::string_view text, rapidjson::Document& doc, std::string& why) {
    doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(text.data(),
                                                                                      text.size());
    if (!doc.HasParseError()) return true;
    why = std::string(rapidjson::GetParseError_En(doc.GetParseError())) + " at byte " +
          std::to_string(doc.GetErrorOffset());
    return false;
}

std::string answer_problem(const rapidjson::Value& a) {
    if (!a.IsObject()) return "the answer is not a JSON object";
    if (!a.HasMember("schema_version") || !a["schema_version"].IsInt() ||
        a["schema_version"].GetInt() != 1)
        return "\"schema_version\" is not 1";
    if (!a.HasMember("blocks") || !a["blocks"].IsArray()) return "\"blocks\" is not an array";
    std::size_t i = 0;
    for (const auto& b : a["blocks"].GetArray()) {
        if (auto p = block_problem(b, "blocks." + std::to_string(i++)); !p.empty()) return p;
    }
    if (!a.HasMember("stop_reason") || !a["stop_reason"].IsString())
        return "\"stop_reason\" is missing or not a string";
    if (!known_stop_reason(a["stop_reason"].GetString()))
        return "\"stop_reason\" \"" + std::string(a["stop_reason"].GetString()) +
               "\" is not a normalized stop reason";
    if (!a.HasMember("usage") || !a["usage"].IsObject()) return "\"usage\" is not an object";
    for (const char* k :
         {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"}) {
        if (!a["usage"].HasMember(k)) return std::string("usage.") + k + " is missing";
        if (!is_count(a["usage"][k]))
            return std::string("usage.") + k + " is " + to_json(a["usage"][k]) +
                   ", not a non-negative integer";
    }
    return "";
}

std::string deltas_problem(const rapidjson::Value& doc) {
    if (!doc.IsObject()) return "the document is not a JSON object";
    if (!doc.HasMember("deltas")) return "";
    if (!doc["deltas"].IsArray()) return "\"deltas\" is not an array";
    std::size_t i = 0;
    for (const auto& d : doc["deltas"].GetArray()) {
        const std::string where = "deltas." + std::to_string(i++);
        if (!d.IsObject() || !d.HasMember("type") || !d["type"].IsString())
            return where + " has no \"type\"";
        const std::string_view type = d["type"].GetString();
        const auto needs = [&](const char* key) -> std::string {
            return d.HasMember(key) && d[key].IsString()
                       ? ""
                       : where + " (" + std::string(type) + ") lacks \"" + key + "\" (a string)";
        };
        if (type == "usage") {
            if (!d.HasMember("usage") || !d["usage"].IsObject())
                return where + " (usage) lacks \"usage\"";
            for (const auto& m : d["usage"].GetObject())
                if (!is_count(m.value))
                    return where + ": usage." + m.name.GetString() + " is " + to_json(m.value) +
                           ", not a non-negative integer";
            continue;
        }
        if (!d.HasMember("index") || !is_count(d["index"]))
            return where + " lacks \"index\" (a non-negative integer)";
        std::string p;
        if (type == "text")
            p = needs("text");
        else if (type == "thinking")
            p = needs("thinking");
        else if (type == "tool_use")
            p = needs("id").empty() ? needs("name") : needs("id");
        else if (type == "tool_input")
            p = needs("partial_json");
        else
            p = where + " has the unknown type \"" + std::string(type) + "\"";
        if (!p.empty()) return p;
    }
    return "";
}

std::string subset_difference(const rapidjson::Value& expected, const rapidjson::Value& got,
                              const std::string& where) {
    const std::string at = where.empty() ? "the answer" : where;
    if (expected.IsObject()) {
        if (!got.IsObject())
            return at + " is " + excerpt(to_json(got), 80) + ", expected an object";
        for (const auto& m : expected.GetObject()) {
            const std::string key = m.name.GetString();
            const std::string sub = where.empty() ? key : where + "." + key;
            if (!got.HasMember(m.name))
                return sub + " is missing, expected " + excerpt(to_json(m.value), 80);
            if (auto d = subset_difference(m.value, got[m.name], sub); !d.empty()) return d;
        }
        return "";
    }
    if (expected.IsArray()) {
        if (!got.IsArray()) return at + " is " + excerpt(to_json(got), 80) + ", expected an array";
        if (got.Size() != expected.Size())
            return at + " has " + std::to_string(got.Size()) + " elements, expected " +
                   std::to_string(expected.Size());
        for (rapidjson::SizeType i = 0; i < expected.Size(); ++i)
            if (auto d = subset_difference(expected[i], got[i], where + "." + std::to_string(i));
                !d.empty())
                return d;
        return "";
    }
    const bool same = expected.IsNumber() && got.IsNumber()
                          ? expected.GetDouble() == got.GetDouble()
                          : expected == got;
    return same ? ""
                : at + " is " + excerpt(to_json(got), 80) + ", expected " +
                      excerpt(to_json(expected), 80);
}

std::string to_json(const rapidjson::Value& value) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    value.Accept(w);
    return std::string(buf.GetString(), buf.GetSize());
}

std::string excerpt(std::string_view text, std::size_t n) {
    // One line of valid UTF-8 (a report is JSON): line breaks become spaces, a byte that does not
    // start a whole UTF-8 sequence becomes '?'.
    const std::string_view cut = text.substr(0, n);
    std::string out;
    for (std::size_t i = 0; i < cut.size();) {
        const auto c = static_cast<unsigned char>(cut[i]);
        const std::size_t len = c < 0x80           ? 1
                                : (c >> 5) == 0x6  ? 2
                                : (c >> 4) == 0xE  ? 3
                                : (c >> 3) == 0x1E ? 4
                                                   : 0;
        bool whole = len > 0 && i + len <= cut.size();
        for (std::size_t k = 1; whole && k < len; ++k)
            whole = (static_cast<unsigned char>(cut[i + k]) >> 6) == 0x2;
        if (!whole) {
            out += '?';
            ++i;
            continue;
        }
        if (len == 1 && (c == '\n' || c == '\r'))
            out += ' ';
        else
            out.append(cut.substr(i, len));
        i += len;
    }
    if (text.size() > n) out += "...";
    return out;
}

std::vector<std::string> exported_symbols(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0 ||
        bytes[EI_CLASS] != ELFCLASS64)
        throw std::runtime_error("not a 64-bit ELF object");
    Elf64_Ehdr eh;
    std::memcpy(&eh, bytes.data(), sizeof eh);
    const auto section = [&](std::size_t i) {
        Elf64_Shdr sh;
        const std::size_t at = eh.e_shoff + i * sizeof(Elf64_Shdr);
        if (at + sizeof sh > bytes.size())
            throw std::runtime_error("section header out of the file");
        std::memcpy(&sh, bytes.data() + at, sizeof sh);
        return sh;
    };
    std::vector<std::string> names;
    for (std::size_t i = 0; i < eh.e_shnum; ++i) {
        const Elf64_Shdr sh = section(i);
        if (sh.sh_type != SHT_DYNSYM) continue;
        const Elf64_Shdr strtab = section(sh.sh_link);
        if (sh.sh_offset + sh.sh_size > bytes.size() ||
            strtab.sh_offset + strtab.sh_size > bytes.size())
            throw std::runtime_error("symbol table out of the file");
        for (std::size_t off = sizeof(Elf64_Sym); off + sizeof(Elf64_Sym) <= sh.sh_size;
             off += sizeof(Elf64_Sym)) {
            Elf64_Sym sym;
            std::memcpy(&sym, bytes.data() + sh.sh_offset + off, sizeof sym);
            const unsigned bind = ELF64_ST_BIND(sym.st_info);
            const unsigned vis = ELF64_ST_VISIBILITY(sym.st_other);
            if (sym.st_shndx == SHN_UNDEF ||
                (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) ||
                (vis != STV_DEFAULT && vis != STV_PROTECTED) || sym.st_name >= strtab.sh_size)
                continue;
            const char* name = bytes.data() + strtab.sh_offset + sym.st_name;
            names.emplace_back(name, strnlen(name, strtab.sh_size - sym.st_name));
        }
    }
    return names;
}

}  // namespace nucleo::conformance::detail
