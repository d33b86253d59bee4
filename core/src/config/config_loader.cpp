// Reading nucleo.yaml and its includes into a Config.
//
// Every refusal is an Error of kind kConfig whose message starts with `file:line:column: ` (from
// the parser's marks, 1-based) followed by the key path (`models[1].max_output_tokens: `) and what
// was wrong. Values at secret keys are never quoted. Each problem is one line (values are escaped
// and cut), so the CLI prints them as they are; config.4: a load names every problem of its files,
// one a line, in the order they are read, not only the first.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/log_internal.hpp"
#include "config/config_text.hpp"
#include "config/env_expand.hpp"
#include "config/mcp_servers.hpp"
#include "config/yaml_reader.hpp"
#include "config/yaml_tree.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace fs = std::filesystem;

namespace nucleo {
namespace {

using config_internal::child;
using config_internal::describe;
using config_internal::element;
using config_internal::join;
using config_internal::quote;
using config_internal::Reader;
using config_internal::YamlMark;
using config_internal::YamlNode;

/// limits.124: the most YAML nodes one config file may hold, an alias counted again at each of
/// its uses (what a reader of the file walks), so a few KB of nested aliases cannot expand to
/// 10^9 nodes.
constexpr std::size_t kMaxYamlNodes = 100000;
/// limits.126: the largest config file (or include) read, in bytes.
constexpr std::uintmax_t kMaxConfigBytes = 1024 * 1024;
/// limits.131: the deepest nesting of collections (flow `[`/`{` or block sequences and mappings,
/// counted together) one config file may hold. A config needs a handful of levels; the limit is
/// checked on the parser's events as the tree is built, so a file of thousands of `[` costs 64
/// levels of work.
constexpr std::size_t kMaxYamlNesting = 64;

}  // namespace

/// Builds a Config from a root file and its includes (friend of Config).
class ConfigBuilder {
  public:
    explicit ConfigBuilder(Config& config) : config_(config) {}

    void read_file(const fs::path& file, const Reader* includer, const YamlMark& include_mark,
                   const std::string& include_path) {
        const std::string what =
            (includer == nullptr ? "config file " : "included file ") + file.string();
        auto refuse = [&](ErrorKind kind, const std::string& why) {
            if (includer == nullptr) throw Error(kind, what + " " + why);
            includer->fail(include_mark, include_path, what + " " + why);
        };
        // limits.126: only a regular file is read (a directory, /dev/zero or a pipe never ends or
        // never was a config), and at most kMaxConfigBytes of it.
        std::error_code ec;
        const fs::file_status status = fs::status(file, ec);
        if (!ec && fs::exists(status) && !fs::is_regular_file(status))
            refuse(ErrorKind::kConfig,
                   "is not a regular file (a config is read from regular files only)");
        std::ifstream in(file, std::ios::binary);
        if (!in) refuse(ErrorKind::kNotFound, "not found or unreadable");
        // Read in chunks rather than into a zeroed buffer of the whole limit: the file's size is
        // only a hint (it may grow while read), and touching 1 MiB cost more than parsing the
        // shipped config (bench/config).
        std::string text;
        if (const std::uintmax_t hint = fs::file_size(file, ec); !ec)
            text.reserve(static_cast<std::size_t>(std::min(hint, kMaxConfigBytes) + 1));
        std::array<char, 16 * 1024> chunk{};
        while (text.size() <= kMaxConfigBytes &&
               in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())).gcount() > 0)
            text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
        if (text.size() > kMaxConfigBytes)
            refuse(ErrorKind::kConfig, "is larger than " + std::to_string(kMaxConfigBytes) +
                                           " bytes (the config file size limit)");
        read_text(text, file, includer, include_mark, include_path);
    }

    void read_text(const std::string& text, const fs::path& file, const Reader* includer,
                   const YamlMark& include_mark, const std::string& include_path) {
        const fs::path identity = fs::absolute(file).lexically_normal();
        if (std::find(stack_.begin(), stack_.end(), identity) != stack_.end())
            includer->fail(include_mark, include_path,
                           "include cycle: " + file.string() + " is already being read");
        stack_.push_back(identity);
        // Popped however the reading ends: a refusal recorded by an includer's attempt() must not
        // leave the file on the stack, or a later include of it would read as a cycle.
        const std::unique_ptr<std::vector<fs::path>, void (*)(std::vector<fs::path>*)> pop(
            &stack_, [](std::vector<fs::path>* stack) { stack->pop_back(); });
        Reader reader(file.string(), &config_.unset_, &problems_);
        config_internal::YamlTree tree;
        try {
            tree = config_internal::YamlTree::parse(text, kMaxYamlNesting);
        } catch (const config_internal::YamlProblem& problem) {
            reader.fail(problem.mark, "", problem.what);
        }
        const YamlNode root = tree.root();
        check_node_count(reader, root);
        read_document(reader, root, file.parent_path());
    }

    /// config.4: reads with `read` (the root file or text and its includes) and checks what
    /// spans the files; every problem found is named in one Error, one a line.
    template <typename F>
    void build(F&& read) {
        bool read_through = true;
        try {
            read();
        } catch (const Error& e) {
            // A refusal no attempt() took (the root not found, malformed YAML, the problem cap)
            // ends the reading; with problems already found it is the last of them.
            if (e.kind() != ErrorKind::kConfig || problems_.empty()) throw;
            problems_.emplace_back(e.what());
            if (problems_.size() > config_internal::kMaxConfigProblems)
                problems_.emplace_back("(the check stopped after " +
                                       std::to_string(config_internal::kMaxConfigProblems) +
                                       " problems)");
            read_through = false;
        }
        // What spans files is checked only over files read whole: a reference into a file that
        // was not read would be a problem of the reading, not of the reference.
        if (read_through) check_references();
        if (problems_.empty()) {
            config_.catalog_ = ModelCatalog(std::move(models_));
            return;
        }
        std::string all;
        for (const std::string& p : problems_) all += (all.empty() ? "" : "\n") + p;
        throw Error(ErrorKind::kConfig, all);
    }

  private:
    void check_references() {
        // Every provider named, also one whose entry was refused, so a model of it is not
        // refused again as naming none.
        const std::vector<std::string>& names = provider_names_;
        for (const auto& ref : model_refs_) {
            if (std::find(names.begin(), names.end(), ref.provider) == names.end())
                problems_.push_back(ref.where + ": " + ref.path + ": unknown provider instance " +
                                    quote(ref.provider) + " (providers: " +
                                    (names.empty() ? std::string("none") : join(names)) + ")");
        }
        for (const auto& ref : replacement_refs_) {
            if (model_where_.count(ref.provider) == 0)
                problems_.push_back(ref.where + ": " + ref.path + ": " + quote(ref.provider) +
                                    " is no model of the catalog");
        }
        if (config_.default_model_id_ && model_where_.count(*config_.default_model_id_) == 0) {
            std::string known;
            for (const auto& id : model_ids_) known += (known.empty() ? "" : ", ") + id;
            problems_.push_back(default_model_where_ + ": defaults.model: " +
                                quote(*config_.default_model_id_) + " is no model of the catalog" +
                                " (known: " + (known.empty() ? std::string("none") : known) + ")");
        }
    }

  private:
    /// limits.124: walks the nodes as the reader would, an alias again at each use, and refuses
    /// the file once more than kMaxYamlNodes are seen: the walk stops there, so a bomb costs
    /// kMaxYamlNodes steps, not its expansion.
    static void check_node_count(const Reader& r, const YamlNode& root) {
        std::size_t seen = 0;
        std::vector<YamlNode> pending{root};
        while (!pending.empty()) {
            const YamlNode n = pending.back();
            pending.pop_back();
            if (++seen > kMaxYamlNodes)
                r.fail(n.mark(), "",
                       "more than " + std::to_string(kMaxYamlNodes) +
                           " YAML nodes, each alias counted at every use (the node limit)");
            for (const auto& kv : n.entries()) {
                pending.push_back(kv.first);
                pending.push_back(kv.second);
            }
            for (const YamlNode& item : n.items()) pending.push_back(item);
        }
    }

    void read_document(const Reader& r, const YamlNode& root, const fs::path& folder) {
        if (!root.is_defined() || root.is_null()) return;  // an empty file configures nothing
        // limits.138: a file that is no mapping is not a config (an include of /etc/passwd reads
        // as one plain scalar): said with its file and what it holds, never with its content.
        if (!root.is_map())
            r.fail(root.mark(), "",
                   std::string("not a config file: it reads as ") +
                       (root.is_sequence() ? "a YAML sequence" : "one YAML scalar (plain text)") +
                       ", where a config is a mapping of keys such as providers: and models: "
                       "(the file's content is not shown)");
        r.expect_map(root, "",
                     {"include", "plugins", "providers", "stores", "summarizer", "models",
                      "defaults", "mcp_servers"});
        // config.4: each part read on its own, so a problem in one leaves the others checked.
        const auto part = [&](std::string_view key, const auto& read) {
            if (auto n = Reader::get(root, key); Reader::present(n)) r.attempt([&] { read(n); });
        };
        part("plugins", [&](const YamlNode& n) { read_plugins(r, n, folder); });
        part("providers", [&](const YamlNode& n) { read_providers(r, n); });
        part("stores", [&](const YamlNode& n) { read_stores(r, n); });
        part("summarizer", [&](const YamlNode& n) {
            set_once(r, n, "summarizer", config_.summarizer_,
                     read_choice(r, n, "summarizer", true));
        });
        part("models", [&](const YamlNode& n) { read_models(r, n); });
        part("defaults", [&](const YamlNode& n) { read_defaults(r, n); });
        part("mcp_servers",
             [&](const YamlNode& n) { read_mcp_servers(r, n, config_.mcp_servers_); });
        part("include", [&](const YamlNode& n) {
            if (n.is_scalar()) {
                include(r, n, folder, "include");
            } else if (n.is_sequence()) {
                std::size_t i = 0;
                for (const auto& item : n.items())
                    r.attempt([&] { include(r, item, folder, element("include", i++)); });
            } else {
                r.fail(n.mark(), "include",
                       "expected a file name or a list of them, got " + describe(n));
            }
        });
    }

    void include(const Reader& r, const YamlNode& n, const fs::path& folder,
                 const std::string& path) {
        const std::string name = r.string(n, path);
        if (name.empty()) r.fail(n.mark(), path, "required value is empty");
        const fs::path target =
            fs::path(name).is_absolute() ? fs::path(name) : (folder / name).lexically_normal();
        read_file(target, &r, n.mark(), path);
    }

    void read_plugins(const Reader& r, const YamlNode& n, const fs::path& folder) {
        r.expect_map(n, "plugins", {"paths"});
        const YamlNode paths = Reader::get(n, "paths");
        if (!Reader::present(paths)) return;
        if (!paths.is_sequence())
            r.fail(paths.mark(), "plugins.paths", "expected a sequence, got " + describe(paths));
        std::size_t i = 0;
        for (const auto& item : paths.items()) {
            const std::string p = r.string(item, element("plugins.paths", i++));
            if (p.empty()) continue;  // "${EXTRA_PLUGINS:-}" unset: no entry
            const fs::path path(p);
            config_.plugin_paths_.push_back(path.is_absolute()
                                                ? path.lexically_normal()
                                                : fs::absolute(folder / path).lexically_normal());
        }
    }

    void read_providers(const Reader& r, const YamlNode& n) {
        r.expect_map(n, "providers");
        std::set<std::string> seen;  // a repeated key is named by expect_map, and read once
        for (const auto& kv : n.entries())
            if (kv.first.is_scalar() && seen.insert(kv.first.scalar()).second)
                r.attempt([&] { read_provider(r, kv.first, kv.second); });
    }

    void read_provider(const Reader& r, const YamlNode& name, const YamlNode& body) {
        ProviderConfig p;
        p.name = name.scalar();
        provider_names_.push_back(p.name);
        const std::string path = child("providers", p.name);
        const bool valid_name =
            !p.name.empty() && std::all_of(p.name.begin(), p.name.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                       c == '.';
            });
        if (!valid_name)
            r.fail(name.mark(), path, "a provider name is letters, digits, '_', '-' or '.'");
        for (const auto& existing : config_.providers_)
            if (existing.name == p.name)
                r.fail(name.mark(), path,
                       "provider instance defined twice (also at " + provider_where_[p.name] + ")");
        r.expect_map(
            body, path,
            {"plugin", "base_url", "api_key", "credentials", "options", "transport", "isolation"});
        p.plugin = r.plugin_name(body, path);
        p.where = r.where(Reader::get(body, "plugin").mark());
        if (auto v = Reader::get(body, "base_url"); Reader::present(v)) {
            p.base_url = r.string(v, child(path, "base_url"));
            // answers.112: where the base URL was written and the variables it names, for
            // the hint of a 404 at it (expanded again only to see which are looked up).
            p.base_url_where = r.where(v.mark());
            config_internal::expand_env(v.scalar(), [&](std::string_view name) {
                if (std::find(p.base_url_variables.begin(), p.base_url_variables.end(), name) ==
                    p.base_url_variables.end())
                    p.base_url_variables.emplace_back(name);
                return config_internal::process_env(name);
            });
        }
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
        p.process_isolation = read_isolation(r, body, path);
        provider_where_[p.name] = r.where(name.mark());
        config_.providers_.push_back(std::move(p));
    }

    /// limits.101-104: a provider's transport limits, each a positive integer.
    static void read_transport(const Reader& r, const YamlNode& n, const std::string& path,
                               TransportLimits& out) {
        r.expect_map(
            n, path,
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

    /// abi.130: where a plugin's code runs; true for `process`, false for `in-process` or absent.
    static bool read_isolation(const Reader& r, const YamlNode& body, const std::string& path) {
        const YamlNode v = Reader::get(body, "isolation");
        if (!Reader::present(v)) return false;
        const std::string value = r.string(v, child(path, "isolation"));
        if (value != "process" && value != "in-process")
            r.fail(v.mark(), child(path, "isolation"),
                   "expected 'in-process' (the default) or 'process', got '" + value + "'");
        return value == "process";
    }

    /// A store's or the summarizer's choice. abi.133: only the summarizer may run in a helper
    /// process; a store keeps connections and transactions a helper could not hand back, so its
    /// `isolation:` is refused by name rather than as an unknown key.
    PluginChoice read_choice(const Reader& r, const YamlNode& n, const std::string& path,
                             bool may_isolate = false) {
        if (!may_isolate) {
            if (const YamlNode v = Reader::get(n, "isolation"); n.is_map() && Reader::present(v))
                r.fail(v.mark(), child(path, "isolation"),
                       "a store runs in process only (isolation: process is offered to providers "
                       "and the summarizer)");
            r.expect_map(n, path, {"plugin", "options"});
        } else {
            r.expect_map(n, path, {"plugin", "options", "isolation", "deadline_ms"});
        }
        PluginChoice c;
        c.plugin = r.plugin_name(n, path);
        c.options_json = r.options(n, path, c.options_origin);
        c.where = r.where(n.mark());
        if (may_isolate) {
            c.process_isolation = read_isolation(r, n, path);
            if (auto v = Reader::get(n, "deadline_ms"); Reader::present(v))
                c.deadline = std::chrono::milliseconds(r.positive(v, child(path, "deadline_ms")));
        }
        return c;
    }

    void read_stores(const Reader& r, const YamlNode& n) {
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
    void read_defaults(const Reader& r, const YamlNode& n) {
        r.expect_map(n, "defaults", {"depth", "output", "model"});
        if (!set_where_.emplace("defaults", r.where(n.mark())).second)
            r.fail(n.mark(), "defaults", "set twice (also at " + set_where_["defaults"] + ")");
        // config.2: the model a command uses when none is named; a catalog id, checked once
        // every file is read (finish()).
        if (auto v = Reader::get(n, "model"); v.is_defined()) {
            if (!v.is_scalar() || v.scalar().empty())
                r.fail(v.mark(), "defaults.model", "expected a catalog id, got " + describe(v));
            config_.default_model_id_ = v.scalar();
            default_model_where_ = r.where(v.mark());
        }
        if (auto v = Reader::get(n, "depth"); v.is_defined()) {
            const std::string s = v.is_scalar() ? v.scalar() : std::string();
            if (s == "none") {
                config_.defaults_.depth.reset();
            } else if (auto d = parse_depth(s); d && v.is_scalar()) {
                config_.defaults_.depth = *d;
            } else {
                r.fail(v.mark(), "defaults.depth",
                       "expected IMMEDIATE, STANDARD, DEEP or none, got " + describe(v));
            }
        }
        if (auto v = Reader::get(n, "output"); v.is_defined()) {
            const std::string s = v.is_scalar() ? v.scalar() : std::string();
            std::int64_t tokens = 0;
            const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), tokens);
            if (s == "none") {
                config_.defaults_.output.reset();
            } else if (auto rung = parse_output_size(s); rung && v.is_scalar()) {
                config_.defaults_.output = OutputDeclaration{*rung};
            } else if (v.is_scalar() && !s.empty() && ec == std::errc() &&
                       end == s.data() + s.size() && tokens > 0) {
                config_.defaults_.output = OutputDeclaration{tokens};
            } else {
                r.fail(v.mark(), "defaults.output",
                       "expected SHORT, MEDIUM, LONG, EXTENDED, a positive token count or none, "
                       "got " +
                           describe(v));
            }
        }
    }

    void set_once(const Reader& r, const YamlNode& n, const std::string& path,
                  std::optional<PluginChoice>& slot, PluginChoice value) {
        if (slot) r.fail(n.mark(), path, "set twice (also at " + set_where_[path] + ")");
        set_where_[path] = r.where(n.mark());
        slot = std::move(value);
    }

    void read_models(const Reader& r, const YamlNode& n) {
        if (!n.is_sequence()) r.fail(n.mark(), "models", "expected a sequence, got " + describe(n));
        for (const auto& item : n.items()) {
            // Index across files, so "models[5]" names the same entry `nucleo models` lists sixth.
            const std::string path = element("models", model_entries_++);
            r.attempt([&] { read_model(r, item, path); });
        }
    }

    void read_model(const Reader& r, const YamlNode& n, const std::string& path) {
        const std::size_t problems_before = r.problem_count();
        ModelSpec m = config_internal::read_model_record(r, n, path);
        if (!m.id.empty()) {
            if (auto it = model_where_.find(m.id); it != model_where_.end())
                r.fail(Reader::get(n, "id").mark(), child(path, "id"),
                       "duplicate model id " + quote(m.id) + " (also at " + it->second + ")");
            // Known even when the record is refused, so what names it is not refused again.
            model_where_[m.id] = r.where(Reader::get(n, "id").mark());
            model_ids_.push_back(m.id);
        }
        if (!m.provider.empty())
            model_refs_.push_back(
                {r.where(Reader::get(n, "provider").mark()), child(path, "provider"), m.provider});
        if (!m.replacement.empty())
            replacement_refs_.push_back({r.where(Reader::get(n, "replacement").mark()),
                                         child(path, "replacement"), m.replacement});
        if (r.problem_count() == problems_before) models_.push_back(std::move(m));
    }

    struct ModelRef {
        std::string where;
        std::string path;
        std::string provider;
    };

    Config& config_;
    std::vector<fs::path> stack_;
    std::vector<std::string> problems_;        // config.4: every refusal attempt() recorded
    std::vector<std::string> provider_names_;  // every providers: key, also of a refused entry
    std::size_t model_entries_ = 0;            // models: items read, refused ones too
    std::vector<ModelSpec> models_;
    std::vector<std::string> model_ids_;  // every id read, in catalog order
    std::vector<ModelRef> model_refs_;
    std::string default_model_where_;         // FILE:LINE:COLUMN of defaults.model
    std::vector<ModelRef> replacement_refs_;  // catalog.2: each names a catalog id
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
    builder.build([&] { builder.read_file(path, nullptr, YamlMark{}, ""); });
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
    builder.build(
        [&] { builder.read_text(std::string(yaml_text), origin, nullptr, YamlMark{}, ""); });
    return config;
}

}  // namespace nucleo
