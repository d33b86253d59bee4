// The YAML reading every part of nucleo.yaml shares (the config loader and the model catalog's
// records): one Reader per file, whose refusals are Errors of kind kConfig starting with
// `file:line:column: ` and the key path (config_loader.cpp says why).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "config/config_text.hpp"
#include "config/env_expand.hpp"
#include "config/yaml_tree.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::config_internal {

/// Names of the token counters core/src/tokens serves (docs/spec/tokens.md: o200k_base and
/// cl100k_base by parity with tiktoken, anthropic_approx for Claude models).
inline constexpr std::string_view kTokenCounters[] = {"o200k_base", "cl100k_base",
                                                      "anthropic_approx"};

inline std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
    return out;
}

inline std::string child(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
}
inline std::string element(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

/// config.4: the most problems one load lists; a file of garbage keys is not echoed line by line.
inline constexpr std::size_t kMaxConfigProblems = 50;

/// Whether an unknown key reads like a config key (at most 64 of [A-Za-z0-9_.-]), so naming it
/// helps with a typo and echoes nothing else of a file (limits.138).
inline bool key_like(std::string_view key) {
    return !key.empty() && key.size() <= 64 && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '.' || c == '-';
    });
}

/// What a node holds, for "expected X, got Y" (never called on a secret's value).
inline std::string describe(const YamlNode& n) {
    switch (n.type()) {
        case YamlType::kMap:
            return "a mapping";
        case YamlType::kSequence:
            return "a sequence";
        case YamlType::kNull:
            return "nothing";
        case YamlType::kScalar:
            return quote(n.scalar());
        default:
            return "nothing";
    }
}

/// Reads one YAML document of one file, knowing the file's name for messages.
class Reader {
  public:
    /// `unset`: where every `${VAR}` without default whose variable is unset is recorded.
    /// `problems`: where attempt() records the refusals it catches (config.4); null, a refusal
    /// ends the reading.
    Reader(std::string file, std::vector<UnsetVariable>* unset,
           std::vector<std::string>* problems = nullptr)
        : file_(std::move(file)), unset_(unset), problems_(problems) {}

    /// config.4: runs `read`; a refusal of kind kConfig it throws is recorded and the reading goes
    /// on with what follows, so one load names every problem of a file. Whether `read` ran
    /// through, so a check that needs its value is skipped instead of refusing a default.
    template <typename F>
    bool attempt(F&& read) const {
        if (problems_ == nullptr) {
            read();
            return true;
        }
        try {
            read();
            return true;
        } catch (const Error& e) {
            // Past kMaxConfigProblems the refusal ends the reading, and is the list's last line.
            if (e.kind() != ErrorKind::kConfig || problems_->size() >= kMaxConfigProblems) throw;
            problems_->emplace_back(e.what());
            return false;
        }
    }

    /// How many problems attempt() has recorded so far (0 when not collecting).
    [[nodiscard]] std::size_t problem_count() const {
        return problems_ == nullptr ? 0 : problems_->size();
    }

    [[nodiscard]] const std::string& file() const { return file_; }

    [[nodiscard]] std::string where(const YamlMark& m) const {
        if (m.is_null()) return file_;
        return file_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
    }

    [[noreturn]] void fail(const YamlMark& m, const std::string& path,
                           const std::string& what) const {
        throw Error(ErrorKind::kConfig, where(m) + ": " + (path.empty() ? "" : path + ": ") + what);
    }

    /// A mapping, its keys checked against `known` (unknown or repeated key refused).
    void expect_map(const YamlNode& n, const std::string& path,
                    std::initializer_list<std::string_view> known) const {
        check_keys(n, path, &known);
    }

    /// A mapping with free keys (names of providers, options); repeated keys refused.
    void expect_map(const YamlNode& n, const std::string& path) const {
        check_keys(n, path, nullptr);
    }

    /// A mapping whose keys are plain, each once, and (given `known`) each one of those; every
    /// offending key is named, in written order (config.4), and the reading goes on without it.
    void check_keys(const YamlNode& n, const std::string& path,
                    const std::initializer_list<std::string_view>* known) const {
        if (!n.is_map()) fail(n.mark(), path, "expected a mapping, got " + describe(n));
        // Views into the tree: the keys live as long as it does.
        std::set<std::string_view> seen;
        for (const auto& kv : n.entries()) attempt([&] { check_key(kv.first, path, known, seen); });
    }

    void check_key(const YamlNode& k, const std::string& path,
                   const std::initializer_list<std::string_view>* known,
                   std::set<std::string_view>& seen) const {
        const std::string& key = key_of(k, path);
        if (!seen.insert(key).second) fail(k.mark(), child(path, key), "duplicate key");
        if (known == nullptr || std::find(known->begin(), known->end(), key) != known->end())
            return;
        std::vector<std::string> names(known->begin(), known->end());
        // limits.138: a key that could be a misspelt one is named; anything else is the content
        // of a file that is no config, and is not echoed.
        if (!key_like(key))
            fail(k.mark(), path,
                 "a key that is no config key (" + std::to_string(key.size()) +
                     " bytes, not shown; known keys: " + join(names) + ")");
        fail(k.mark(), child(path, key), "unknown key (known keys: " + join(names) + ")");
    }

    const std::string& key_of(const YamlNode& k, const std::string& path) const {
        if (!k.is_scalar()) fail(k.mark(), path, "expected a plain key, got " + describe(k));
        return k.scalar();
    }

    /// The value at `key`, or an undefined node when absent. A `key:` with no value is null.
    static YamlNode get(const YamlNode& map, std::string_view key) {
        for (const auto& kv : map.entries())
            if (kv.first.is_scalar() && kv.first.scalar() == key) return kv.second;
        return YamlNode();
    }
    static bool present(const YamlNode& n) { return n.is_defined() && !n.is_null(); }

    /// The value at `key`, refused as missing when absent or null.
    YamlNode need(const YamlNode& map, std::string_view key, const std::string& path) const {
        for (const auto& kv : map.entries()) {
            if (!kv.first.is_scalar() || kv.first.scalar() != key) continue;
            // A `key:` without a value: yaml-cpp marks the null where the next token starts,
            // so point at the key instead.
            if (kv.second.is_null())
                fail(kv.first.mark(), child(path, key), "required value missing");
            return kv.second;
        }
        fail(map.mark(), child(path, key), "required value missing");
    }

    /// A string, `${VAR}`-expanded. `secret`: never quote it. `unset_names`, when given, also
    /// receives the unset variables' names.
    std::string string(const YamlNode& n, const std::string& path, bool secret = false,
                       std::vector<std::string>* unset_names = nullptr) const {
        if (!n.is_scalar()) fail(n.mark(), path, "expected a string, got " + describe(n));
        try {
            std::vector<std::string> unset;
            std::string value =
                config_internal::expand_env(n.scalar(), config_internal::process_env, &unset);
            for (const auto& name : unset) {
                if (unset_ != nullptr) unset_->push_back({name, where(n.mark()), path});
                if (unset_names != nullptr) unset_names->push_back(name);
            }
            return value;
        } catch (const config_internal::ExpandError& e) {
            if (secret)
                fail(n.mark(), path, "malformed ${...} reference (value not shown: secret)");
            fail(n.mark(), path, e.what());
        }
    }

    /// limits.127: the `plugin:` of a provider or a choice — a plain name ([a-z0-9_-]+, found as
    /// nucleo-<name>.so on the plugin search path) unless written as a path to a shared object
    /// (holding a '/' and ending in ".so"), so a name never walks out of the search folders.
    std::string plugin_name(const YamlNode& map, const std::string& path) const {
        std::string s = name(map, "plugin", path);
        const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        });
        const bool as_path = s.find('/') != std::string::npos && s.size() > 3 &&
                             s.compare(s.size() - 3, 3, ".so") == 0;
        if (!plain && !as_path) {
            fail(need(map, "plugin", path).mark(), child(path, "plugin"),
                 quote(s) + " is neither a plugin name ([a-z0-9_-]+) nor a path to a shared " +
                     "object (holding a '/' and ending in .so)");
        }
        return s;
    }

    /// A required non-empty string.
    std::string name(const YamlNode& map, std::string_view key, const std::string& path) const {
        const YamlNode v = need(map, key, path);
        std::string s = string(v, child(path, key));
        if (s.empty()) fail(v.mark(), child(path, key), "required value is empty");
        return s;
    }

    std::int64_t integer(const YamlNode& n, const std::string& path) const {
        if (!n.is_scalar()) fail(n.mark(), path, "expected an integer, got " + describe(n));
        std::string digits;  // "200_000" reads as 200000, as YAML 1.1 allowed
        for (char c : n.scalar())
            if (c != '_') digits += c;
        std::int64_t value = 0;
        const char* begin = digits.data();
        const char* end = digits.data() + digits.size();
        if (begin != end && *begin == '+') ++begin;
        auto [ptr, ec] = std::from_chars(begin, end, value);
        if (ec == std::errc::result_out_of_range)
            fail(n.mark(), path, "integer out of range: " + quote(n.scalar()));
        if (digits.empty() || ec != std::errc() || ptr != end || n.scalar().front() == '_')
            fail(n.mark(), path, "expected an integer, got " + describe(n));
        return value;
    }

    std::int64_t positive(const YamlNode& n, const std::string& path) const {
        const std::int64_t v = integer(n, path);
        if (v <= 0) fail(n.mark(), path, "expected a positive integer, got " + std::to_string(v));
        return v;
    }
    std::int64_t non_negative(const YamlNode& n, const std::string& path) const {
        const std::int64_t v = integer(n, path);
        if (v < 0) fail(n.mark(), path, "expected an integer >= 0, got " + std::to_string(v));
        return v;
    }

    /// A finite number >= 0 (prices).
    double price(const YamlNode& n, const std::string& path) const {
        if (!n.is_scalar()) fail(n.mark(), path, "expected a number, got " + describe(n));
        const std::string& s = n.scalar();
        double value = 0;
        auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
        if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(value))
            fail(n.mark(), path, "expected a number, got " + describe(n));
        if (value < 0) fail(n.mark(), path, "expected a price >= 0, got " + s);
        return value;
    }

    bool boolean(const YamlNode& n, const std::string& path) const {
        if (n.is_scalar()) {
            const std::string& s = n.scalar();
            if (s == "true" || s == "True" || s == "TRUE") return true;
            if (s == "false" || s == "False" || s == "FALSE") return false;
        }
        fail(n.mark(), path, "expected true or false, got " + describe(n));
    }

    /// One of the upper-case names of an enum (catalog.hpp's parse_* functions).
    template <typename E>
    E enumerator(const YamlNode& n, const std::string& path,
                 std::optional<E> (*parse)(std::string_view) noexcept,
                 std::initializer_list<E> all) const {
        std::vector<std::string> names;
        for (E e : all) names.emplace_back(to_string(e));
        if (n.is_scalar())
            if (auto e = parse(n.scalar())) return *e;
        fail(n.mark(), path, "expected one of " + join(names) + ", got " + describe(n));
    }

    /// A YAML subtree as JSON (options handed to plugins). Plain scalars become null, booleans,
    /// integers or numbers when they read as such, everything else a `${VAR}`-expanded string.
    /// `origin` records where each option was written, by its path relative to origin's
    /// key_path (abi.109).
    void to_json(const YamlNode& n, const std::string& path, bool secret,
                 rapidjson::Writer<rapidjson::StringBuffer>& w, OptionsOrigin& origin) const {
        const auto relative = [&](const std::string& full) {
            return full.size() > origin.key_path.size() + 1
                       ? full.substr(origin.key_path.size() + 1)
                       : std::string();
        };
        switch (n.type()) {
            case YamlType::kMap: {
                expect_map(n, path);
                w.StartObject();
                for (const auto& kv : n.entries()) {
                    const std::string key = kv.first.scalar();
                    w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
                    origin.where_of[relative(child(path, key))] = where(kv.first.mark());
                    to_json(kv.second, child(path, key), secret || is_secret_key(key), w, origin);
                }
                w.EndObject();
                return;
            }
            case YamlType::kSequence: {
                w.StartArray();
                std::size_t i = 0;
                for (const auto& item : n.items()) {
                    origin.where_of[relative(element(path, i))] = where(item.mark());
                    to_json(item, element(path, i), secret, w, origin);
                    ++i;
                }
                w.EndArray();
                return;
            }
            case YamlType::kScalar:
                break;
            default:
                w.Null();
                return;
        }
        const std::string& s = n.scalar();
        if (n.plain()) {  // plain (unquoted) scalar: typed as YAML would type it
            if (s == "~" || s == "null" || s == "Null" || s == "NULL") return (void)w.Null();
            if (s == "true" || s == "True" || s == "TRUE") return (void)w.Bool(true);
            if (s == "false" || s == "False" || s == "FALSE") return (void)w.Bool(false);
            std::int64_t i = 0;
            auto [ip, iec] = std::from_chars(s.data(), s.data() + s.size(), i);
            if (!s.empty() && iec == std::errc() && ip == s.data() + s.size())
                return (void)w.Int64(i);
            double d = 0;
            auto [dp, dec] = std::from_chars(s.data(), s.data() + s.size(), d);
            if (!s.empty() && dec == std::errc() && dp == s.data() + s.size() && std::isfinite(d))
                return (void)w.Double(d);
        }
        std::vector<std::string> unset;
        const std::string value = string(n, path, secret, &unset);
        if (!unset.empty()) origin.unset_of[relative(path)] = std::move(unset);
        w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
    }

    /// `options:` of a provider or a plugin choice, as a JSON object text; `origin` receives
    /// where each option was written.
    std::string options(const YamlNode& map, const std::string& path, OptionsOrigin& origin) const {
        const YamlNode n = get(map, "options");
        origin.key_path = child(path, "options");
        origin.where = where(map.mark());
        if (!present(n)) return "{}";
        expect_map(n, child(path, "options"));
        origin.where = where(n.mark());
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
        to_json(n, child(path, "options"), false, writer, origin);
        return buffer.GetString();
    }

  private:
    std::string file_;
    std::vector<UnsetVariable>* unset_ = nullptr;
    std::vector<std::string>* problems_ = nullptr;
};

}  // namespace nucleo::config_internal

namespace nucleo::config_internal {

/// catalog.1-catalog.8: one entry of `models:` (config/models.yaml) read into a ModelSpec, every
/// field checked against the others (docs/catalog.md). Duplicate ids and the provider and
/// replacement references are the loader's to check, across files.
ModelSpec read_model_record(const Reader& r, const YamlNode& n, const std::string& path);

}  // namespace nucleo::config_internal
