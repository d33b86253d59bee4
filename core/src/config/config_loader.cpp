// Reading nucleo.yaml and its includes into a Config.
//
// Every refusal is an Error of kind kConfig whose message starts with `file:line:column: ` (from
// yaml-cpp's marks, 1-based) followed by the key path (`models[1].max_output_tokens: `) and what
// was wrong. Values at secret keys are never quoted. Messages are one line (values are escaped and
// cut), so the CLI prints them as they are.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/log_internal.hpp"
#include "config/config_text.hpp"
#include "config/env_expand.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace fs = std::filesystem;

namespace nucleo {
namespace {

using config_internal::quote;

/// limits.124: the most YAML nodes one config file may hold, an alias counted again at each of
/// its uses (what a reader of the file walks), so a few KB of nested aliases cannot expand to
/// 10^9 nodes.
constexpr std::size_t kMaxYamlNodes = 100000;
/// limits.126: the largest config file (or include) read, in bytes.
constexpr std::uintmax_t kMaxConfigBytes = 1024 * 1024;
/// limits.131: the deepest nesting of collections (flow `[`/`{` or block sequences and mappings,
/// counted together) one config file may hold. A config needs a handful of levels; the limit is
/// checked on the parser's events before any node is built, so a file of thousands of `[` costs
/// 64 levels of work, never yaml-cpp's deep recursion.
constexpr std::size_t kMaxYamlNesting = 64;

/// limits.131: counts open collections as yaml-cpp's parser announces them and stops the parse
/// (throws) at the first one past kMaxYamlNesting, keeping where it opened.
class NestingGuard final : public YAML::EventHandler {
  public:
    struct TooDeep {
        YAML::Mark mark;
    };
    /// limits.133: a document that starts where the previous one did: yaml-cpp 0.7 read nothing
    /// in between and would start empty documents there forever (a ',' at the top level does).
    struct Stuck {
        YAML::Mark mark;
    };
    void OnDocumentStart(const YAML::Mark& mark) override {
        if (documents_++ > 0 && mark.pos == last_start_) throw Stuck{mark};
        last_start_ = mark.pos;
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  const std::string&) override {}
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
        open(mark);
    }
    void OnSequenceEnd() override { --depth_; }
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {
        open(mark);
    }
    void OnMapEnd() override { --depth_; }

  private:
    void open(const YAML::Mark& mark) {
        if (++depth_ > kMaxYamlNesting) throw TooDeep{mark};
    }
    std::size_t depth_ = 0;
    std::size_t documents_ = 0;
    int last_start_ = -1;
};

/// Names of the token counters the tokens concern serves (tokens issue: o200k_base and
/// cl100k_base by parity with tiktoken, anthropic_approx for Claude models).
constexpr std::string_view kTokenCounters[] = {"o200k_base", "cl100k_base", "anthropic_approx"};

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
    return out;
}

std::string child(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string element(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

/// What a node holds, for "expected X, got Y" (never called on a secret's value).
std::string describe(const YAML::Node& n) {
    switch (n.Type()) {
        case YAML::NodeType::Map:
            return "a mapping";
        case YAML::NodeType::Sequence:
            return "a sequence";
        case YAML::NodeType::Null:
            return "nothing";
        case YAML::NodeType::Scalar:
            return quote(n.Scalar());
        default:
            return "nothing";
    }
}

/// Reads one YAML document of one file, knowing the file's name for messages.
class Reader {
  public:
    /// `unset`: where every `${VAR}` without default whose variable is unset is recorded.
    Reader(std::string file, std::vector<UnsetVariable>* unset)
        : file_(std::move(file)), unset_(unset) {}

    [[nodiscard]] const std::string& file() const { return file_; }

    [[nodiscard]] std::string where(const YAML::Mark& m) const {
        if (m.is_null()) return file_;
        return file_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
    }

    [[noreturn]] void fail(const YAML::Mark& m, const std::string& path,
                           const std::string& what) const {
        throw Error(ErrorKind::kConfig, where(m) + ": " + (path.empty() ? "" : path + ": ") + what);
    }

    /// A mapping, its keys checked against `known` (unknown or repeated key refused).
    void expect_map(const YAML::Node& n, const std::string& path,
                    std::initializer_list<std::string_view> known) const {
        expect_map(n, path);
        std::set<std::string> seen;
        for (const auto& kv : n) {
            const std::string key = key_of(kv.first, path);
            if (!seen.insert(key).second) fail(kv.first.Mark(), child(path, key), "duplicate key");
            if (std::find(known.begin(), known.end(), key) == known.end()) {
                std::vector<std::string> names(known.begin(), known.end());
                fail(kv.first.Mark(), child(path, key),
                     "unknown key (known keys: " + join(names) + ")");
            }
        }
    }

    /// A mapping with free keys (names of providers, options); repeated keys refused.
    void expect_map(const YAML::Node& n, const std::string& path) const {
        if (!n.IsMap()) fail(n.Mark(), path, "expected a mapping, got " + describe(n));
        std::set<std::string> seen;
        for (const auto& kv : n) {
            const std::string key = key_of(kv.first, path);
            if (!seen.insert(key).second) fail(kv.first.Mark(), child(path, key), "duplicate key");
        }
    }

    std::string key_of(const YAML::Node& k, const std::string& path) const {
        if (!k.IsScalar()) fail(k.Mark(), path, "expected a plain key, got " + describe(k));
        return k.Scalar();
    }

    /// The value at `key`, or an undefined node when absent. A `key:` with no value is null.
    static YAML::Node get(const YAML::Node& map, std::string_view key) {
        for (const auto& kv : map)
            if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
        return YAML::Node(YAML::NodeType::Undefined);
    }
    static bool present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

    /// The value at `key`, refused as missing when absent or null.
    YAML::Node need(const YAML::Node& map, std::string_view key, const std::string& path) const {
        for (const auto& kv : map) {
            if (!kv.first.IsScalar() || kv.first.Scalar() != key) continue;
            // A `key:` without a value: yaml-cpp marks the null where the next token starts,
            // so point at the key instead.
            if (kv.second.IsNull())
                fail(kv.first.Mark(), child(path, key), "required value missing");
            return kv.second;
        }
        fail(map.Mark(), child(path, key), "required value missing");
    }

    /// A string, `${VAR}`-expanded. `secret`: never quote it. `unset_names`, when given, also
    /// receives the unset variables' names.
    std::string string(const YAML::Node& n, const std::string& path, bool secret = false,
                       std::vector<std::string>* unset_names = nullptr) const {
        if (!n.IsScalar()) fail(n.Mark(), path, "expected a string, got " + describe(n));
        try {
            std::vector<std::string> unset;
            std::string value =
                config_internal::expand_env(n.Scalar(), config_internal::process_env, &unset);
            for (const auto& name : unset) {
                if (unset_ != nullptr) unset_->push_back({name, where(n.Mark()), path});
                if (unset_names != nullptr) unset_names->push_back(name);
            }
            return value;
        } catch (const config_internal::ExpandError& e) {
            if (secret)
                fail(n.Mark(), path, "malformed ${...} reference (value not shown: secret)");
            fail(n.Mark(), path, e.what());
        }
    }

    /// limits.127: the `plugin:` of a provider or a choice — a plain name ([a-z0-9_-]+, found as
    /// nucleo-<name>.so on the plugin search path) unless written as a path to a shared object
    /// (holding a '/' and ending in ".so"), so a name never walks out of the search folders.
    std::string plugin_name(const YAML::Node& map, const std::string& path) const {
        std::string s = name(map, "plugin", path);
        const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        });
        const bool as_path =
            s.find('/') != std::string::npos && s.size() > 3 && s.compare(s.size() - 3, 3, ".so") == 0;
        if (!plain && !as_path) {
            fail(need(map, "plugin", path).Mark(), child(path, "plugin"),
                 quote(s) + " is neither a plugin name ([a-z0-9_-]+) nor a path to a shared " +
                     "object (holding a '/' and ending in .so)");
        }
        return s;
    }

    /// A required non-empty string.
    std::string name(const YAML::Node& map, std::string_view key, const std::string& path) const {
        const YAML::Node v = need(map, key, path);
        std::string s = string(v, child(path, key));
        if (s.empty()) fail(v.Mark(), child(path, key), "required value is empty");
        return s;
    }

    std::int64_t integer(const YAML::Node& n, const std::string& path) const {
        if (!n.IsScalar()) fail(n.Mark(), path, "expected an integer, got " + describe(n));
        std::string digits;  // "200_000" reads as 200000, as YAML 1.1 allowed
        for (char c : n.Scalar())
            if (c != '_') digits += c;
        std::int64_t value = 0;
        const char* begin = digits.data();
        const char* end = digits.data() + digits.size();
        if (begin != end && *begin == '+') ++begin;
        auto [ptr, ec] = std::from_chars(begin, end, value);
        if (ec == std::errc::result_out_of_range)
            fail(n.Mark(), path, "integer out of range: " + quote(n.Scalar()));
        if (digits.empty() || ec != std::errc() || ptr != end || n.Scalar().front() == '_')
            fail(n.Mark(), path, "expected an integer, got " + describe(n));
        return value;
    }

    std::int64_t positive(const YAML::Node& n, const std::string& path) const {
        const std::int64_t v = integer(n, path);
        if (v <= 0) fail(n.Mark(), path, "expected a positive integer, got " + std::to_string(v));
        return v;
    }
    std::int64_t non_negative(const YAML::Node& n, const std::string& path) const {
        const std::int64_t v = integer(n, path);
        if (v < 0) fail(n.Mark(), path, "expected an integer >= 0, got " + std::to_string(v));
        return v;
    }

    /// A finite number >= 0 (prices).
    double price(const YAML::Node& n, const std::string& path) const {
        if (!n.IsScalar()) fail(n.Mark(), path, "expected a number, got " + describe(n));
        const std::string& s = n.Scalar();
        double value = 0;
        auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
        if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(value))
            fail(n.Mark(), path, "expected a number, got " + describe(n));
        if (value < 0) fail(n.Mark(), path, "expected a price >= 0, got " + s);
        return value;
    }

    bool boolean(const YAML::Node& n, const std::string& path) const {
        if (n.IsScalar()) {
            const std::string& s = n.Scalar();
            if (s == "true" || s == "True" || s == "TRUE") return true;
            if (s == "false" || s == "False" || s == "FALSE") return false;
        }
        fail(n.Mark(), path, "expected true or false, got " + describe(n));
    }

    /// One of the upper-case names of an enum (catalog.hpp's parse_* functions).
    template <typename E>
    E enumerator(const YAML::Node& n, const std::string& path,
                 std::optional<E> (*parse)(std::string_view) noexcept,
                 std::initializer_list<E> all) const {
        std::vector<std::string> names;
        for (E e : all) names.emplace_back(to_string(e));
        if (n.IsScalar())
            if (auto e = parse(n.Scalar())) return *e;
        fail(n.Mark(), path, "expected one of " + join(names) + ", got " + describe(n));
    }

    /// A YAML subtree as JSON (options handed to plugins). Plain scalars become null, booleans,
    /// integers or numbers when they read as such, everything else a `${VAR}`-expanded string.
    /// `origin` records where each option was written, by its path relative to origin's
    /// key_path (abi.109).
    void to_json(const YAML::Node& n, const std::string& path, bool secret,
                 rapidjson::Writer<rapidjson::StringBuffer>& w, OptionsOrigin& origin) const {
        const auto relative = [&](const std::string& full) {
            return full.size() > origin.key_path.size() + 1 ? full.substr(origin.key_path.size() + 1)
                                                           : std::string();
        };
        switch (n.Type()) {
            case YAML::NodeType::Map: {
                expect_map(n, path);
                w.StartObject();
                for (const auto& kv : n) {
                    const std::string key = kv.first.Scalar();
                    w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
                    origin.where_of[relative(child(path, key))] = where(kv.first.Mark());
                    to_json(kv.second, child(path, key), secret || is_secret_key(key), w, origin);
                }
                w.EndObject();
                return;
            }
            case YAML::NodeType::Sequence: {
                w.StartArray();
                std::size_t i = 0;
                for (const auto& item : n) {
                    origin.where_of[relative(element(path, i))] = where(item.Mark());
                    to_json(item, element(path, i), secret, w, origin);
                    ++i;
                }
                w.EndArray();
                return;
            }
            case YAML::NodeType::Scalar:
                break;
            default:
                w.Null();
                return;
        }
        const std::string& s = n.Scalar();
        if (n.Tag() != "!") {  // plain (unquoted) scalar: typed as YAML would type it
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
    std::string options(const YAML::Node& map, const std::string& path,
                        OptionsOrigin& origin) const {
        const YAML::Node n = get(map, "options");
        origin.key_path = child(path, "options");
        origin.where = where(map.Mark());
        if (!present(n)) return "{}";
        expect_map(n, child(path, "options"));
        origin.where = where(n.Mark());
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
        to_json(n, child(path, "options"), false, writer, origin);
        return buffer.GetString();
    }

  private:
    std::string file_;
    std::vector<UnsetVariable>* unset_ = nullptr;
};

}  // namespace

/// Builds a Config from a root file and its includes (friend of Config).
class ConfigBuilder {
  public:
    explicit ConfigBuilder(Config& config) : config_(config) {}

    void read_file(const fs::path& file, const Reader* includer, const YAML::Mark& include_mark,
                   const std::string& include_path) {
        const std::string what = (includer == nullptr ? "config file " : "included file ") + file.string();
        auto refuse = [&](ErrorKind kind, const std::string& why) {
            if (includer == nullptr) throw Error(kind, what + " " + why);
            includer->fail(include_mark, include_path, what + " " + why);
        };
        // limits.126: only a regular file is read (a directory, /dev/zero or a pipe never ends or
        // never was a config), and at most kMaxConfigBytes of it.
        std::error_code ec;
        const fs::file_status status = fs::status(file, ec);
        if (!ec && fs::exists(status) && !fs::is_regular_file(status))
            refuse(ErrorKind::kConfig, "is not a regular file (a config is read from regular files only)");
        std::ifstream in(file, std::ios::binary);
        if (!in) refuse(ErrorKind::kNotFound, "not found or unreadable");
        std::string text(kMaxConfigBytes + 1, '\0');
        in.read(text.data(), static_cast<std::streamsize>(text.size()));
        text.resize(static_cast<std::size_t>(in.gcount()));
        if (text.size() > kMaxConfigBytes)
            refuse(ErrorKind::kConfig, "is larger than " + std::to_string(kMaxConfigBytes) +
                                           " bytes (the config file size limit)");
        read_text(text, file, includer, include_mark, include_path);
    }

    void read_text(const std::string& text, const fs::path& file, const Reader* includer,
                   const YAML::Mark& include_mark, const std::string& include_path) {
        const fs::path identity = fs::absolute(file).lexically_normal();
        if (std::find(stack_.begin(), stack_.end(), identity) != stack_.end())
            includer->fail(include_mark, include_path,
                           "include cycle: " + file.string() + " is already being read");
        stack_.push_back(identity);
        Reader reader(file.string(), &config_.unset_);
        check_nesting(reader, text);
        std::vector<YAML::Node> documents;
        try {
            documents = YAML::LoadAll(text);
        } catch (const YAML::Exception& e) {
            reader.fail(e.mark, "", "malformed YAML: " + e.msg);
        }
        // limits.128: one document per file; a second one would be ignored silently otherwise.
        if (documents.size() > 1)
            reader.fail(documents[1].Mark(), "",
                        "a second YAML document (a config file holds 1 document)");
        const YAML::Node root = documents.empty() ? YAML::Node() : documents.front();
        check_node_count(reader, root);
        read_document(reader, root, file.parent_path());
        stack_.pop_back();
    }

    void finish() {
        std::vector<std::string> names;
        for (const auto& p : config_.providers_) names.push_back(p.name);
        for (const auto& ref : model_refs_) {
            if (std::find(names.begin(), names.end(), ref.provider) == names.end())
                throw Error(ErrorKind::kConfig,
                            ref.where + ": " + ref.path + ": unknown provider instance " +
                                quote(ref.provider) + " (providers: " +
                                (names.empty() ? std::string("none") : join(names)) + ")");
        }
        config_.catalog_ = ModelCatalog(std::move(models_));
    }

  private:
    /// limits.131: refuses collections nested deeper than kMaxYamlNesting where the first one too
    /// deep opens, before the text is loaded into nodes; limits.133: and a text the parser stops
    /// moving through, which yaml-cpp's load would loop on forever. Malformed YAML met on the way is left to
    /// the load, which words it as every other syntax error.
    static void check_nesting(const Reader& r, const std::string& text) {
        std::istringstream in(text);
        YAML::Parser parser(in);
        NestingGuard guard;
        try {
            while (parser.HandleNextDocument(guard)) {
            }
        } catch (const NestingGuard::TooDeep& deep) {
            r.fail(deep.mark, "",
                   "collections nested deeper than " + std::to_string(kMaxYamlNesting) +
                       " levels (the YAML nesting limit)");
        } catch (const NestingGuard::Stuck& stuck) {
            const auto at = static_cast<std::size_t>(stuck.mark.pos);
            r.fail(stuck.mark, "",
                   "malformed YAML: the parser cannot read past " +
                       (at < text.size() ? quote(std::string_view(text).substr(at, 1))
                                         : std::string("the end")) +
                       " here");
        } catch (const YAML::Exception&) {
        }
    }

    /// limits.124: walks the nodes as the reader would, an alias again at each use, and refuses
    /// the file once more than kMaxYamlNodes are seen: the walk stops there, so a bomb costs
    /// kMaxYamlNodes steps, not its expansion.
    static void check_node_count(const Reader& r, const YAML::Node& root) {
        std::size_t seen = 0;
        std::vector<YAML::Node> pending{root};
        while (!pending.empty()) {
            const YAML::Node n = pending.back();
            pending.pop_back();
            if (++seen > kMaxYamlNodes)
                r.fail(n.Mark(), "",
                       "more than " + std::to_string(kMaxYamlNodes) +
                           " YAML nodes, each alias counted at every use (the node limit)");
            if (n.IsMap()) {
                for (auto it = n.begin(); it != n.end(); ++it) {
                    pending.push_back(it->first);
                    pending.push_back(it->second);
                }
            } else if (n.IsSequence()) {
                for (auto it = n.begin(); it != n.end(); ++it) pending.push_back(*it);
            }
        }
    }

    void read_document(const Reader& r, const YAML::Node& root, const fs::path& folder) {
        if (!root.IsDefined() || root.IsNull()) return;  // an empty file configures nothing
        r.expect_map(root, "",
                     {"include", "plugins", "providers", "stores", "summarizer", "models",
                      "defaults"});
        if (auto n = Reader::get(root, "plugins"); Reader::present(n)) read_plugins(r, n, folder);
        if (auto n = Reader::get(root, "providers"); Reader::present(n)) read_providers(r, n);
        if (auto n = Reader::get(root, "stores"); Reader::present(n)) read_stores(r, n);
        if (auto n = Reader::get(root, "summarizer"); Reader::present(n))
            set_once(r, n, "summarizer", config_.summarizer_, read_choice(r, n, "summarizer"));
        if (auto n = Reader::get(root, "models"); Reader::present(n)) read_models(r, n);
        if (auto n = Reader::get(root, "defaults"); Reader::present(n)) read_defaults(r, n);
        if (auto n = Reader::get(root, "include"); Reader::present(n)) {
            if (n.IsScalar()) {
                include(r, n, folder, "include");
            } else if (n.IsSequence()) {
                std::size_t i = 0;
                for (const auto& item : n) include(r, item, folder, element("include", i++));
            } else {
                r.fail(n.Mark(), "include",
                       "expected a file name or a list of them, got " + describe(n));
            }
        }
    }

    void include(const Reader& r, const YAML::Node& n, const fs::path& folder,
                 const std::string& path) {
        const std::string name = r.string(n, path);
        if (name.empty()) r.fail(n.Mark(), path, "required value is empty");
        const fs::path target =
            fs::path(name).is_absolute() ? fs::path(name) : (folder / name).lexically_normal();
        read_file(target, &r, n.Mark(), path);
    }

    void read_plugins(const Reader& r, const YAML::Node& n, const fs::path& folder) {
        r.expect_map(n, "plugins", {"paths"});
        const YAML::Node paths = Reader::get(n, "paths");
        if (!Reader::present(paths)) return;
        if (!paths.IsSequence())
            r.fail(paths.Mark(), "plugins.paths", "expected a sequence, got " + describe(paths));
        std::size_t i = 0;
        for (const auto& item : paths) {
            const std::string p = r.string(item, element("plugins.paths", i++));
            if (p.empty()) continue;  // "${EXTRA_PLUGINS:-}" unset: no entry
            const fs::path path(p);
            config_.plugin_paths_.push_back(path.is_absolute()
                                                ? path.lexically_normal()
                                                : fs::absolute(folder / path).lexically_normal());
        }
    }

    void read_providers(const Reader& r, const YAML::Node& n) {
        r.expect_map(n, "providers");
        for (const auto& kv : n) {
            ProviderConfig p;
            p.name = kv.first.Scalar();
            const std::string path = child("providers", p.name);
            const bool valid_name =
                !p.name.empty() && std::all_of(p.name.begin(), p.name.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                           c == '.';
                });
            if (!valid_name)
                r.fail(kv.first.Mark(), path,
                       "a provider name is letters, digits, '_', '-' or '.'");
            for (const auto& existing : config_.providers_)
                if (existing.name == p.name)
                    r.fail(kv.first.Mark(), path,
                           "provider instance defined twice (also at " + provider_where_[p.name] +
                               ")");
            const YAML::Node& body = kv.second;
            r.expect_map(body, path,
                         {"plugin", "base_url", "api_key", "credentials", "options", "transport"});
            p.plugin = r.plugin_name(body, path);
            p.where = r.where(Reader::get(body, "plugin").Mark());
            if (auto v = Reader::get(body, "base_url"); Reader::present(v))
                p.base_url = r.string(v, child(path, "base_url"));
            if (auto v = Reader::get(body, "api_key"); Reader::present(v))
                p.credentials.api_key = r.string(v, child(path, "api_key"), true);
            if (auto c = Reader::get(body, "credentials"); Reader::present(c)) {
                const std::string cpath = child(path, "credentials");
                r.expect_map(c, cpath,
                             {"access_key_id", "secret_access_key", "session_token", "region"});
                auto field = [&](std::string_view key, std::string& out, bool secret) {
                    if (auto v = Reader::get(c, key); Reader::present(v))
                        out = r.string(v, child(cpath, key), secret);
                };
                field("access_key_id", p.credentials.access_key_id, true);
                field("secret_access_key", p.credentials.secret_access_key, true);
                field("session_token", p.credentials.session_token, true);
                field("region", p.credentials.region, false);
            }
            p.options_json = r.options(body, path, p.options_origin);
            if (auto t = Reader::get(body, "transport"); Reader::present(t))
                read_transport(r, t, child(path, "transport"), p.transport);
            provider_where_[p.name] = r.where(kv.first.Mark());
            config_.providers_.push_back(std::move(p));
        }
    }

    /// limits.101-104: a provider's transport limits, each a positive integer.
    static void read_transport(const Reader& r, const YAML::Node& n, const std::string& path,
                               TransportLimits& out) {
        r.expect_map(n, path,
                     {"connect_timeout_ms", "idle_timeout_ms", "deadline_ms", "max_response_bytes"});
        const auto ms = [&](std::string_view key, std::chrono::milliseconds& into) {
            if (auto v = Reader::get(n, key); Reader::present(v))
                into = std::chrono::milliseconds(r.positive(v, child(path, std::string(key))));
        };
        ms("connect_timeout_ms", out.connect_timeout);
        ms("idle_timeout_ms", out.idle_timeout);
        ms("deadline_ms", out.deadline);
        if (auto v = Reader::get(n, "max_response_bytes"); Reader::present(v))
            out.max_response_bytes =
                static_cast<std::size_t>(r.positive(v, child(path, "max_response_bytes")));
    }

    PluginChoice read_choice(const Reader& r, const YAML::Node& n, const std::string& path) {
        r.expect_map(n, path, {"plugin", "options"});
        PluginChoice c;
        c.plugin = r.plugin_name(n, path);
        c.options_json = r.options(n, path, c.options_origin);
        c.where = r.where(n.Mark());
        return c;
    }

    void read_stores(const Reader& r, const YAML::Node& n) {
        r.expect_map(n, "stores", {"session", "persistent"});
        if (auto v = Reader::get(n, "session"); Reader::present(v))
            set_once(r, v, "stores.session", config_.session_store_,
                     read_choice(r, v, "stores.session"));
        if (auto v = Reader::get(n, "persistent"); Reader::present(v))
            set_once(r, v, "stores.persistent", config_.persistent_store_,
                     read_choice(r, v, "stores.persistent"));
    }

    /// A role an included file may set only if no other file did.
    // budget.102: `defaults: {depth, output}`, each a value or `none` (budget.103).
    void read_defaults(const Reader& r, const YAML::Node& n) {
        r.expect_map(n, "defaults", {"depth", "output"});
        if (!set_where_.emplace("defaults", r.where(n.Mark())).second)
            r.fail(n.Mark(), "defaults", "set twice (also at " + set_where_["defaults"] + ")");
        if (auto v = Reader::get(n, "depth"); v.IsDefined()) {
            const std::string s = v.IsScalar() ? v.Scalar() : std::string();
            if (s == "none") {
                config_.defaults_.depth.reset();
            } else if (auto d = parse_depth(s); d && v.IsScalar()) {
                config_.defaults_.depth = *d;
            } else {
                r.fail(v.Mark(), "defaults.depth",
                       "expected IMMEDIATE, STANDARD, DEEP or none, got " + describe(v));
            }
        }
        if (auto v = Reader::get(n, "output"); v.IsDefined()) {
            const std::string s = v.IsScalar() ? v.Scalar() : std::string();
            std::int64_t tokens = 0;
            const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), tokens);
            if (s == "none") {
                config_.defaults_.output.reset();
            } else if (auto rung = parse_output_size(s); rung && v.IsScalar()) {
                config_.defaults_.output = OutputDeclaration{*rung};
            } else if (v.IsScalar() && !s.empty() && ec == std::errc() && end == s.data() + s.size() &&
                       tokens > 0) {
                config_.defaults_.output = OutputDeclaration{tokens};
            } else {
                r.fail(v.Mark(), "defaults.output",
                       "expected SHORT, MEDIUM, LONG, EXTENDED, a positive token count or none, "
                       "got " + describe(v));
            }
        }
    }

    void set_once(const Reader& r, const YAML::Node& n, const std::string& path,
                  std::optional<PluginChoice>& slot, PluginChoice value) {
        if (slot) r.fail(n.Mark(), path, "set twice (also at " + set_where_[path] + ")");
        set_where_[path] = r.where(n.Mark());
        slot = std::move(value);
    }

    void read_models(const Reader& r, const YAML::Node& n) {
        if (!n.IsSequence()) r.fail(n.Mark(), "models", "expected a sequence, got " + describe(n));
        for (const auto& item : n) {
            // Index across files, so "models[5]" names the same entry `nucleo models` lists sixth.
            const std::string path = element("models", models_.size());
            models_.push_back(read_model(r, item, path));
        }
    }

    ModelSpec read_model(const Reader& r, const YAML::Node& n, const std::string& path) {
        r.expect_map(
            n, path,
            {"id", "provider", "wire_model", "grade", "max_context_tokens", "max_output_tokens",
             "comfort_context_tokens", "output_budget", "thinking_budget", "supports_caching",
             "native_tools", "min_cacheable_tokens", "cache_ttls", "prices", "accepts", "token_counter",
             "rate_limits"});
        ModelSpec m;
        m.id = r.name(n, "id", path);
        if (auto it = model_where_.find(m.id); it != model_where_.end())
            r.fail(Reader::get(n, "id").Mark(), child(path, "id"),
                   "duplicate model id " + quote(m.id) + " (also at " + it->second + ")");
        model_where_[m.id] = r.where(Reader::get(n, "id").Mark());
        m.provider = r.name(n, "provider", path);
        model_refs_.push_back(
            {r.where(Reader::get(n, "provider").Mark()), child(path, "provider"), m.provider});
        m.wire_model = r.name(n, "wire_model", path);
        m.grade = r.enumerator<Grade>(r.need(n, "grade", path), child(path, "grade"), parse_grade,
                                      {Grade::kSmall, Grade::kMedium, Grade::kLarge});
        const YAML::Node context = r.need(n, "max_context_tokens", path);
        m.max_context_tokens = r.positive(context, child(path, "max_context_tokens"));
        const YAML::Node output = r.need(n, "max_output_tokens", path);
        m.max_output_tokens = r.positive(output, child(path, "max_output_tokens"));
        if (m.max_output_tokens > m.max_context_tokens)
            r.fail(output.Mark(), child(path, "max_output_tokens"),
                   std::to_string(m.max_output_tokens) + " exceeds max_context_tokens " +
                       std::to_string(m.max_context_tokens));
        if (auto v = Reader::get(n, "comfort_context_tokens"); Reader::present(v)) {
            m.comfort_context_tokens = r.positive(v, child(path, "comfort_context_tokens"));
            if (*m.comfort_context_tokens > m.max_context_tokens)
                r.fail(v.Mark(), child(path, "comfort_context_tokens"),
                       std::to_string(*m.comfort_context_tokens) + " exceeds max_context_tokens " +
                           std::to_string(m.max_context_tokens));
        }
        read_output_budget(r, r.need(n, "output_budget", path), child(path, "output_budget"), m);
        if (auto v = Reader::get(n, "thinking_budget"); Reader::present(v))
            read_thinking_budget(r, v, child(path, "thinking_budget"), m);
        if (auto v = Reader::get(n, "supports_caching"); Reader::present(v))
            m.supports_caching = r.boolean(v, child(path, "supports_caching"));
        if (auto v = Reader::get(n, "native_tools"); Reader::present(v))
            m.native_tools = r.boolean(v, child(path, "native_tools"));
        if (auto v = Reader::get(n, "min_cacheable_tokens"); Reader::present(v))
            m.min_cacheable_tokens = r.non_negative(v, child(path, "min_cacheable_tokens"));
        // caching.109: the TTLs the provider offers for this model's cache entries.
        if (auto v = Reader::get(n, "cache_ttls"); Reader::present(v)) {
            const std::string ttls = child(path, "cache_ttls");
            if (!v.IsSequence())
                r.fail(v.Mark(), ttls, "expected a sequence of \"5m\" and \"1h\", got " + describe(v));
            std::size_t i = 0;
            for (const auto& item : v) {
                const std::string ttl = r.string(item, element(ttls, i++));
                if (ttl == "1h") {
                    m.cache_ttl_1h = true;
                } else if (ttl != "5m") {
                    r.fail(item.Mark(), element(ttls, i - 1),
                           "expected \"5m\" or \"1h\", got \"" + ttl + "\"");
                }
            }
        }
        read_prices(r, r.need(n, "prices", path), child(path, "prices"), m);
        if (auto v = Reader::get(n, "accepts"); Reader::present(v)) {
            if (!v.IsSequence())
                r.fail(v.Mark(), child(path, "accepts"), "expected a sequence, got " + describe(v));
            std::size_t i = 0;
            for (const auto& item : v) {
                const Input input =
                    r.enumerator<Input>(item, element(child(path, "accepts"), i++), parse_input,
                                        {Input::kImages, Input::kDocuments});
                if (!m.accepts(input)) m.accepted_inputs.push_back(input);
            }
        }
        if (auto v = Reader::get(n, "rate_limits"); Reader::present(v)) {
            const std::string limits = child(path, "rate_limits");
            r.expect_map(v, limits, {"requests_per_minute", "tokens_per_minute"});
            if (auto rpm = Reader::get(v, "requests_per_minute"); Reader::present(rpm))
                m.requests_per_minute = r.non_negative(rpm, child(limits, "requests_per_minute"));
            if (auto tpm = Reader::get(v, "tokens_per_minute"); Reader::present(tpm))
                m.tokens_per_minute = r.non_negative(tpm, child(limits, "tokens_per_minute"));
        }
        if (auto v = Reader::get(n, "token_counter"); Reader::present(v)) {
            m.token_counter = r.string(v, child(path, "token_counter"));
            if (std::find(std::begin(kTokenCounters), std::end(kTokenCounters), m.token_counter) ==
                std::end(kTokenCounters))
                r.fail(v.Mark(), child(path, "token_counter"),
                       "expected one of o200k_base, cl100k_base, anthropic_approx, got " +
                           quote(m.token_counter));
        }
        return m;
    }

    /// budget.1, budget.2: the entry translates every rung, so all four are
    /// required (a rung the entry cannot translate would be a number invented at call time).
    void read_output_budget(const Reader& r, const YAML::Node& n, const std::string& path,
                            ModelSpec& m) {
        r.expect_map(n, path, {"SHORT", "MEDIUM", "LONG", "EXTENDED"});
        for (OutputSize rung :
             {OutputSize::kShort, OutputSize::kMedium, OutputSize::kLong, OutputSize::kExtended}) {
            const YAML::Node v = r.need(n, to_string(rung), path);
            const std::int64_t tokens = r.positive(v, child(path, to_string(rung)));
            if (tokens > m.max_output_tokens)
                r.fail(v.Mark(), child(path, to_string(rung)),
                       std::to_string(tokens) + " exceeds max_output_tokens " +
                           std::to_string(m.max_output_tokens));
            m.output_budget[rung] = tokens;
        }
    }

    /// Reasoning tokens per depth; a depth left out books none. IMMEDIATE is thinking off
    /// (conversation.24), so it must be 0.
    void read_thinking_budget(const Reader& r, const YAML::Node& n, const std::string& path,
                              ModelSpec& m) {
        r.expect_map(n, path, {"IMMEDIATE", "STANDARD", "DEEP"});
        for (Depth depth : {Depth::kImmediate, Depth::kStandard, Depth::kDeep}) {
            const YAML::Node v = Reader::get(n, to_string(depth));
            if (!Reader::present(v)) continue;
            const std::int64_t tokens = r.non_negative(v, child(path, to_string(depth)));
            if (depth == Depth::kImmediate && tokens != 0)
                r.fail(v.Mark(), child(path, "IMMEDIATE"),
                       "IMMEDIATE is thinking off: expected 0, got " + std::to_string(tokens));
            if (tokens > m.max_output_tokens)
                r.fail(v.Mark(), child(path, to_string(depth)),
                       std::to_string(tokens) + " exceeds max_output_tokens " +
                           std::to_string(m.max_output_tokens));
            m.thinking_budget[depth] = tokens;
        }
    }

    /// input and output are required; the cache prices too when the entry supports caching
    /// (a cache price left out would bill cached tokens at $0).
    void read_prices(const Reader& r, const YAML::Node& n, const std::string& path, ModelSpec& m) {
        r.expect_map(n, path, {"input", "output", "cache_write", "cache_read", "cache_write_1h"});
        m.prices.input = r.price(r.need(n, "input", path), child(path, "input"));
        m.prices.output = r.price(r.need(n, "output", path), child(path, "output"));
        for (auto [key, slot] :
             {std::pair<const char*, double*>{"cache_write", &m.prices.cache_write},
              std::pair<const char*, double*>{"cache_read", &m.prices.cache_read}}) {
            const YAML::Node v = m.supports_caching ? r.need(n, key, path) : Reader::get(n, key);
            if (Reader::present(v)) *slot = r.price(v, child(path, key));
        }
        // caching.108: optional; absent, the 1-hour write costs twice the input price.
        if (auto v = Reader::get(n, "cache_write_1h"); Reader::present(v))
            m.prices.cache_write_1h = r.price(v, child(path, "cache_write_1h"));
    }

    struct ModelRef {
        std::string where;
        std::string path;
        std::string provider;
    };

    Config& config_;
    std::vector<fs::path> stack_;
    std::vector<ModelSpec> models_;
    std::vector<ModelRef> model_refs_;
    std::map<std::string, std::string> model_where_;
    std::map<std::string, std::string> provider_where_;
    std::map<std::string, std::string> set_where_;
};

Config Config::load(const fs::path& path) {
    // obs.108: the log level variable is part of the configuration a host starts with.
    if (const std::string problem = log::level_variable_problem(); !problem.empty())
        throw Error(ErrorKind::kConfig, problem);
    Config config;
    config.path_ = path;
    ConfigBuilder builder(config);
    builder.read_file(path, nullptr, YAML::Mark::null_mark(), "");
    builder.finish();
    NUCLEO_LOG_DEBUG("config {}: {} provider(s), {} model(s), {} plugin path(s)", path.string(),
                     config.providers_.size(), config.catalog_.all().size(),
                     config.plugin_paths_.size());
    for (const UnsetVariable& v : config.unset_) {
        NUCLEO_LOG_DEBUG("config {}: {}: ${{{}}} is unset, so it expands to \"\"", v.where,
                         v.key_path, v.name);
    }
    return config;
}

Config Config::parse(std::string_view yaml_text, const fs::path& origin) {
    Config config;
    config.path_ = origin;
    ConfigBuilder builder(config);
    builder.read_text(std::string(yaml_text), origin, nullptr, YAML::Mark::null_mark(), "");
    builder.finish();
    return config;
}

}  // namespace nucleo
