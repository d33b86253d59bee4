// Configuration of the runtime: config/nucleo.yaml and the model catalog it includes.
//
// Operators choose providers, stores and summarizers in YAML and swap them without rebuilding.
// This header fixes what the file holds and how it is refused: an
// unknown key, a wrong type or a missing required value is an Error of kind kConfig whose message
// reads `file:line:column: key.path: what was wrong`, and a secret never reaches a log or an
// error message (it is shown as `***`).
//
// String values expand `${VAR}` and `${VAR:-default}` from the environment when the file is
// loaded (the default may itself hold `${...}`; `$${` is a literal `${`). An unset variable
// without a default expands to the empty string, as in a POSIX shell, so a config can name
// ANTHROPIC_API_KEY without every user having set it; whoever needs the value refuses the empty
// string when it is used (a provider without a key), not at load time. Config::unset_variables()
// lists every such reference with its place, and a refusal of a value one left empty names it
// (abi.112). Plugin options are checked against the plugin's schema where the plugin is opened
// (nucleo::check_plugins, Plugin::make_*: abi.109).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/budget.hpp"
#include "nucleo/catalog.hpp"
#include "nucleo/transport.hpp"

namespace nucleo {

/// Credentials of one provider instance. Every field here is secret except `region`: it is
/// masked in Config::redacted() and never quoted in an error. Which fields a provider uses is the
/// provider's business (Anthropic and OpenAI an api_key, Bedrock the AWS fields).
struct ProviderCredentials {
    std::string api_key;            ///< ANTHROPIC_API_KEY / OPENAI_API_KEY
    std::string access_key_id;      ///< AWS_ACCESS_KEY_ID
    std::string secret_access_key;  ///< AWS_SECRET_ACCESS_KEY
    std::string session_token;      ///< AWS_SESSION_TOKEN (temporary credentials)
    std::string region;             ///< AWS_REGION (not secret)
};

/// Where a plugin's `options:` were written, so a refusal of them names the config's file and
/// line (abi.109). Filled by the config loader; empty for options that come from code.
struct OptionsOrigin {
    /// The options' key path in the config: "providers.anthropic.options", "stores.session.options".
    std::string key_path;
    /// "FILE:LINE:COLUMN" of the options mapping, or of the choice when it has no options.
    std::string where;
    /// Option path ("path", "pool.size", "flags[0]") → "FILE:LINE:COLUMN" of its key (of the
    /// item, in a sequence).
    std::map<std::string, std::string> where_of;
    /// Option path → the `${VAR}`s without default its value was written with whose variable
    /// is unset (so it expanded to ""): named in a refusal of that option.
    std::map<std::string, std::vector<std::string>> unset_of;
};

/// A `${VAR}` without default whose variable was unset when the config was loaded: it expanded
/// to "" (a POSIX shell's rule); named with its place so a later refusal can say why a value is
/// empty.
struct UnsetVariable {
    std::string name;      ///< "NUCLEO_SQLITE_PATH"
    std::string where;     ///< "FILE:LINE:COLUMN" of the value that holds it
    std::string key_path;  ///< "stores.persistent.options.path"
};

/// One provider instance of nucleo.yaml `providers:`: a name the catalog's
/// entries refer to, the plugin that speaks its wire format, where it lives and how to sign in.
struct ProviderConfig {
    std::string name;      ///< instance name, e.g. "anthropic", "openai", "bedrock", "emulator"
    std::string plugin;    ///< plugin name as the loader knows it (file nucleo-<plugin>.so)
    std::string base_url;  ///< after ${VAR} expansion; may be empty (the plugin's default)
    ProviderCredentials credentials;
    /// Provider-specific options as a JSON object text ("{}" when none); secrets it holds are
    /// this struct's to keep: never log it, log Config::redacted() instead.
    std::string options_json = "{}";
    /// `transport:` {connect_timeout_ms, idle_timeout_ms, deadline_ms, max_response_bytes}, each a
    /// positive integer; absent keys keep TransportLimits' defaults (limits.101-104).
    TransportLimits transport;
    /// abi.130: `isolation: process` runs the plugin in a helper process (nucleo-plugin-host),
    /// each call bounded by transport.deadline; `in-process` (the default) loads it here.
    bool process_isolation = false;
    /// "FILE:LINE:COLUMN" of its `plugin:` value (empty when not read from a file): what a plugin
    /// that cannot be loaded is reported at.
    std::string where;
    /// Where options_json's keys were written (abi.109).
    OptionsOrigin options_origin;
    /// "FILE:LINE:COLUMN" of its `base_url:` value (empty when not read from a file), and the
    /// environment variables that value names, in text order (`${OPENAI_BASE_URL:-…}` gives
    /// OPENAI_BASE_URL): what a 404 at the base URL tells the user to check (answers.112).
    std::string base_url_where;
    std::vector<std::string> base_url_variables;
};

/// A plugin chosen for a role (session store, persistent store, summarizer) and its options.
struct PluginChoice {
    std::string plugin;               ///< plugin name as the loader knows it
    std::string options_json = "{}";  ///< JSON object text; may hold a store URL with a password
    /// "FILE:LINE:COLUMN" of the choice in the config (empty when not read from a file): what a
    /// refusal to open the plugin names (persistence.106).
    std::string where;
    /// Where options_json's keys were written (abi.109).
    OptionsOrigin options_origin;
    /// abi.133: `isolation: process` (the summarizer's choice only; stores run in process) runs
    /// the plugin in a helper process, each call bounded by `deadline`.
    bool process_isolation = false;
    /// abi.133: `deadline_ms:` of an isolated summarizer's call; 60 s unless set, since the
    /// offline summarizers answer in milliseconds and the model-calling one cannot be isolated.
    std::chrono::milliseconds deadline{60000};
};

/// One MCP server of nucleo.yaml `mcp_servers:` (mcp.40, mcp.48): how to start it over stdio, or
/// the URL of its Streamable HTTP endpoint. Values are `${VAR}`-expanded; `env` and `headers` may
/// hold secrets (never logged; redacted() shows `***`).
struct McpServerConfig {
    std::string name;               ///< the key under mcp_servers: ([A-Za-z0-9_-]{1,32})
    std::string command;            ///< the program (looked up on PATH without a slash); or
    std::string url;                ///< the HTTP endpoint (exactly one of command and url)
    std::vector<std::pair<std::string, std::string>> headers;  ///< sent with every HTTP request
    std::vector<std::string> args;  ///< its arguments
    std::vector<std::pair<std::string, std::string>> env;  ///< added to the host's environment
    std::string where;  ///< "FILE:LINE:COLUMN" of the server's mapping
};

/// The model catalog (config/models.yaml): every ModelSpec the runtime may call, in file order.
/// conversation.20, budget.1: the catalog entry is what translates a seat's rung and
/// depth into tokens; a model that is not in the catalog cannot be called.
class ModelCatalog {
  public:
    ModelCatalog() = default;
    /// Refuses (kConfig) two entries with one id.
    explicit ModelCatalog(std::vector<ModelSpec> models);

    /// The entry with this id; Error kNotFound naming the id and listing the known ids.
    [[nodiscard]] const ModelSpec& find(std::string_view id) const;
    /// The entry with this id, or nullptr.
    [[nodiscard]] const ModelSpec* try_find(std::string_view id) const noexcept;
    [[nodiscard]] const std::vector<ModelSpec>& all() const noexcept { return models_; }
    [[nodiscard]] std::vector<std::string> ids() const;
    [[nodiscard]] bool empty() const noexcept { return models_.empty(); }

  private:
    std::vector<ModelSpec> models_;
};

/// A loaded, validated nucleo.yaml (with its includes). A value type: copy it freely.
///
/// Shape of the file (every key optional unless said otherwise; unknown keys are refused):
/// ```yaml
/// include: models.yaml            # or a list; relative to this file's folder
/// plugins: {paths: [plugins]}     # relative to this file's folder; empty entries dropped
/// providers:
///   anthropic: {plugin: anthropic, base_url: ..., api_key: ..., options: {...}}
///   bedrock: {plugin: bedrock, base_url: ...,
///             credentials: {access_key_id, secret_access_key, session_token, region}}
/// stores:
///   session: {plugin: memory, options: {...}}
///   persistent: {plugin: sqlite, options: {...}}
/// summarizer: {plugin: extractive, options: {...}}
/// models: [ {id, provider, wire_model, grade, ...}, ... ]   # usually in the included file
/// ```
/// An included file has the same shape: its `models` are appended, its `providers` added (a
/// name defined twice is refused), any other key it sets must not be set twice. Every model's
/// `provider` must name a provider instance of the merged config.
class Config {
  public:
    /// Read and validate `path` and what it includes. Error kConfig (file:line:column and key
    /// path) for anything refused; kNotFound naming the file when it or an include is missing.
    static Config load(const std::filesystem::path& path);
    /// Same from text; `origin` names it in messages and anchors relative paths and includes.
    static Config parse(std::string_view yaml_text, const std::filesystem::path& origin);

    /// Where the config is looked for when no --config is given (config.1): NUCLEO_CONFIG if set
    /// and not empty, else the user's $XDG_CONFIG_HOME/nucleo/nucleo.yaml (~/.config when unset)
    /// if it exists, else installed_path(). Never the working folder: a `config/nucleo.yaml` of
    /// whatever folder a command runs in does not silently take over.
    static std::filesystem::path default_path();
    /// The user's config file, whether or not it exists: $XDG_CONFIG_HOME/nucleo/nucleo.yaml when
    /// that variable is an absolute path, else $HOME/.config/nucleo/nucleo.yaml; empty when
    /// neither variable is usable.
    static std::filesystem::path user_path();
    /// The installed config: <datadir>/nucleo/nucleo.yaml found relative to the loaded libnucleo
    /// (an install moved to another prefix reads its own); a libnucleo that runs from its build
    /// tree reads the source tree's config/nucleo.yaml; else NUCLEO_INSTALLED_CONFIG_DIR.
    static std::filesystem::path installed_path();

    /// The file this config was loaded from (the origin given to parse()).
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
    [[nodiscard]] const ModelCatalog& catalog() const noexcept { return catalog_; }
    [[nodiscard]] const std::vector<ProviderConfig>& providers() const noexcept {
        return providers_;
    }
    /// The provider instance with this name; Error kNotFound naming it and the known names.
    [[nodiscard]] const ProviderConfig& provider(std::string_view name) const;
    /// A copy of this config whose provider instance `provider.name` is `provider`: how a program
    /// aims a loaded config's provider elsewhere (`nucleo ask --emulator`, cli.102). Error
    /// kNotFound, as provider() words it, when the config has no instance of that name.
    [[nodiscard]] Config with_provider(ProviderConfig provider) const;
    /// `plugins.paths`, absolute or resolved against the folder of the file that named them.
    [[nodiscard]] const std::vector<std::filesystem::path>& plugin_paths() const noexcept {
        return plugin_paths_;
    }
    [[nodiscard]] const std::optional<PluginChoice>& session_store() const noexcept {
        return session_store_;
    }
    [[nodiscard]] const std::optional<PluginChoice>& persistent_store() const noexcept {
        return persistent_store_;
    }
    [[nodiscard]] const std::optional<PluginChoice>& summarizer() const noexcept {
        return summarizer_;
    }
    /// `mcp_servers:`, in written order (mcp.40).
    [[nodiscard]] const std::vector<McpServerConfig>& mcp_servers() const noexcept {
        return mcp_servers_;
    }
    /// The MCP server with this name; Error kNotFound naming it and the configured names.
    [[nodiscard]] const McpServerConfig& mcp_server(std::string_view name) const;
    /// `defaults:` {depth, output}: the declarations a conversation that declares nothing is
    /// sent with (budget.102): IMMEDIATE and MEDIUM unless the file sets them; `none` leaves
    /// that one undeclared, so such a conversation is refused as budget.2 says (budget.103).
    /// ProviderClient::from_config applies them as the last layer of the chains.
    [[nodiscard]] const BindingDeclarations& defaults() const noexcept { return defaults_; }
    /// `defaults.model`: the catalog id a command uses when none is named, checked against the
    /// catalog at load (config.2); nullopt when the file sets none.
    [[nodiscard]] const std::optional<std::string>& default_model_id() const noexcept {
        return default_model_id_;
    }
    /// The model used when none is named (config.2): NUCLEO_MODEL if set and not empty (Error
    /// kConfig when it names no catalog entry, with the nearest id), else `defaults.model`, else
    /// the catalog's first entry whose provider instance has credentials (an api key or an AWS
    /// access key id), else the catalog's first entry. Error kConfig naming the file when the
    /// catalog is empty.
    [[nodiscard]] const ModelSpec& default_model() const;

    /// Every `${VAR}` without default, in any string value of the file or its includes, whose
    /// variable was unset at load (it expanded to ""), in reading order.
    [[nodiscard]] const std::vector<UnsetVariable>& unset_variables() const noexcept {
        return unset_;
    }

    /// The whole config after expansion and merging, as YAML, with every secret shown as `***`
    /// (credentials, option keys that name a key/secret/token/password, passwords inside URLs).
    /// What the CLI and logs may show.
    [[nodiscard]] std::string redacted() const;

  private:
    friend class ConfigBuilder;
    std::filesystem::path path_;
    ModelCatalog catalog_;
    std::vector<ProviderConfig> providers_;
    std::vector<std::filesystem::path> plugin_paths_;
    std::optional<PluginChoice> session_store_;
    std::optional<PluginChoice> persistent_store_;
    std::optional<PluginChoice> summarizer_;
    std::vector<McpServerConfig> mcp_servers_;
    std::vector<UnsetVariable> unset_;
    BindingDeclarations defaults_{OutputDeclaration{OutputSize::kMedium}, Depth::kImmediate};
    std::optional<std::string> default_model_id_;
};

/// `scheme://user:password@host/...` → `scheme://user:***@host/...` (`scheme://token@host` →
/// `scheme://***@host`), and the value of a `password=` / `secret=` / `token=` query or DSN
/// parameter → `***`. The one helper every URL passes before a log, an error or `nucleo render`
/// shows it (limits.105).
[[nodiscard]] std::string redact_url(std::string_view url);

/// Whether an option key names a secret (api_key, secret, token, password, credentials...): such
/// values are shown as `***` in redacted dumps and never quoted in errors.
[[nodiscard]] bool is_secret_key(std::string_view key) noexcept;

}  // namespace nucleo
