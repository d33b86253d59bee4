// The plugin loader and the C++ face of plugin instances (docs/spec/plugin-abi.md).
//
// A plugin is a shared object nucleo-<name>.so exporting nucleo_plugin_entry_v1 (plugin.h). The
// loader finds it on the search path, loads it with Boost.DLL (rtld_now | rtld_local), checks the
// entry and calls its init, and refuses anything else with a nucleo::Error of kind kPlugin whose
// message is one line naming the file and the reason. Instances keep their library loaded: the
// core never unloads a library while an instance of it lives (abi.22).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo {

struct OptionsOrigin;  // nucleo/config.hpp
struct ProviderConfig;
struct PluginChoice;
class Config;

namespace plugins_detail {
struct Library;
struct InstanceHandle;
}  // namespace plugins_detail

/// What a loaded plugin says of itself (`nucleo plugins` prints this).
struct PluginInfo {
    std::string name;         ///< entry->name, the <name> of nucleo-<name>.so
    std::string version;      ///< entry->version
    std::string description;  ///< entry->description
    uint32_t abi_major = 0;   ///< the ABI the plugin was built against
    uint32_t abi_minor = 0;
    std::vector<std::string> factories;  ///< ids it serves among those this host knows
    std::filesystem::path file;          ///< the canonical path it was loaded from
};

class SummarizerInstance;
class ProviderInstance;
class StoreInstance;

/// A loaded, initialised plugin library. Shared: every Plugin and every instance made from it
/// holds the library; it is deinitialised and unloaded when the last of them goes. Loading the
/// same file twice in one process yields the same library (init runs once).
class Plugin {
  public:
    [[nodiscard]] const PluginInfo& info() const;
    /// True when the plugin serves `factory_id` ("nucleo.summarizer/1", ...).
    [[nodiscard]] bool serves(std::string_view factory_id) const;

    /// Creates an instance from its configuration (a JSON object; "{}" for none), first checked
    /// by check_options (abi.109). Throws nucleo::Error kPlugin when the plugin does not serve
    /// the factory (one line naming the file and the id), kConfig when the options do not match
    /// the plugin's schema, or the kind mapped from the plugin's status when create fails (then,
    /// with an origin, the message ends naming the unset `${VAR}`s the options were written with).
    [[nodiscard]] SummarizerInstance make_summarizer(std::string_view config_json = "{}",
                                                     const OptionsOrigin* origin = nullptr) const;
    [[nodiscard]] ProviderInstance make_provider(std::string_view config_json = "{}",
                                                 const OptionsOrigin* origin = nullptr) const;
    [[nodiscard]] StoreInstance make_store(std::string_view config_json = "{}",
                                           const OptionsOrigin* origin = nullptr) const;

    /// ABI 1.4: the JSON Schema of the options of `factory_id`'s create, or nullopt when the
    /// plugin publishes none (built before 1.4, or its slot answers NULL).
    [[nodiscard]] std::optional<std::string> options_schema(std::string_view factory_id) const;

    /// abi.109: checks `config_json` against the plugin's schema for `factory_id` (a provider's
    /// schema also admits the host's own provider options, abi.111). A mismatch is Error kConfig,
    /// one line: with an origin "FILE:LINE:COLUMN: providers.x.options.key: what, expected what
    /// (plugin NAME)", else "plugin 'NAME' options: key: ...". An unset `${VAR}` the value was
    /// written with is named. A schema that is not a JSON Schema the host reads is Error kPlugin.
    /// A plugin without a schema passes unchecked, and is named once in a warning.
    void check_options(std::string_view factory_id, std::string_view config_json,
                       const OptionsOrigin* origin = nullptr) const;

    /// abi.130: true when the plugin is served by helper processes (PluginLoader::load_isolated).
    [[nodiscard]] bool isolated() const;

    explicit Plugin(std::shared_ptr<plugins_detail::Library> library);

  private:
    [[nodiscard]] std::shared_ptr<plugins_detail::InstanceHandle> create_isolated(
        const char* factory_id, std::string_view config_json, const OptionsOrigin* origin) const;

    std::shared_ptr<plugins_detail::Library> library_;
};

/// Where plugins are looked for and how they are loaded. Search order (abi.21, abi.104): the
/// paths given (config `plugins.paths`), then the build tree's plugin folder when this libnucleo
/// runs from its build tree, then the installed plugin folder, then NUCLEO_PLUGIN_PATH
/// (colon-separated). The first file of a name wins; its entry must name the plugin of its file
/// name (abi.103).
class PluginLoader {
  public:
    explicit PluginLoader(std::vector<std::filesystem::path> paths = {});

    /// The folders searched, in order (existing or not).
    [[nodiscard]] std::vector<std::filesystem::path> search_path() const;

    /// Loads by name ("extractive" finds nucleo-extractive.so on the search path) or by path
    /// (anything containing '/' or ending in ".so"). Throws nucleo::Error kPlugin, one line naming
    /// the file (or the name and the folders searched) and the reason: missing file, not a shared
    /// object, missing entry symbol, NULL entry, wrong ABI major, struct too small, init failure.
    [[nodiscard]] Plugin load(std::string_view name_or_path) const;

    /// The file load() would open for `name_or_path`, found as load() finds it; throws as load()
    /// does when there is none.
    [[nodiscard]] std::filesystem::path locate(std::string_view name_or_path) const;

    /// abi.130 (`isolation: process`): the plugin loaded in a helper process
    /// (nucleo-plugin-host) and none of its code in this one. Its info and options schemas are
    /// what the helper reported; each provider instance made from it runs in a helper of its
    /// own, every call bounded by `deadline` (`deadline_key`, the config key that set it, is
    /// named when a call passes it); so does each summarizer instance (make_summarizer), whose
    /// plugin gets no model-call service there. Stores are refused (NotImplementedException). Throws Error kPlugin as load() does, and when the helper
    /// crashes or passes the deadline while loading the plugin (its init), naming that.
    [[nodiscard]] Plugin load_isolated(std::string_view name_or_path,
                                       std::chrono::milliseconds deadline,
                                       std::string deadline_key = {}) const;

    /// Every nucleo-*.so file on the search path, first of each name only, in search order.
    [[nodiscard]] std::vector<std::filesystem::path> discover() const;

  private:
    std::vector<std::filesystem::path> paths_;
};

/// abi.112: every plugin the config names (each provider instance's, the stores', the
/// summarizer's) loads, and its options match its schema: the whole config checked before any
/// instance is created. The first problem is an Error: a plugin that cannot be loaded is kPlugin
/// starting with "FILE:LINE:COLUMN: providers.NAME.plugin: " and the loader's reason; options
/// are refused as Plugin::check_options says.
void check_plugins(const Config& config, const PluginLoader& loader);

/// The plugin of a provider instance as its config says to run it: loaded here, or with
/// `isolation: process` in a helper process whose calls end at its transport deadline (abi.130).
/// Throws as PluginLoader::load and load_isolated do.
[[nodiscard]] Plugin load_provider_plugin(const PluginLoader& loader, const ProviderConfig& provider);

/// The summarizer's plugin as its config choice says to run it: loaded here, or with
/// `isolation: process` in a helper process whose calls end at its `deadline_ms` (abi.133).
/// Throws as PluginLoader::load and load_isolated do.
[[nodiscard]] Plugin load_summarizer_plugin(const PluginLoader& loader, const PluginChoice& choice);

/// Common part of the instance wrappers: copyable handles sharing one plugin instance, which is
/// destroyed (and may let its library unload) when the last copy goes.
class PluginInstance {
  public:
    [[nodiscard]] const PluginInfo& plugin() const;

  protected:
    explicit PluginInstance(std::shared_ptr<plugins_detail::InstanceHandle> handle);
    std::shared_ptr<plugins_detail::InstanceHandle> handle_;
};

/// A "nucleo.summarizer/1" instance. Thread rule: summarize() may be called concurrently.
class SummarizerInstance : public PluginInstance {
  public:
    /// request: {"schema_version":1, "text" | "segments", "target_tokens"}; returns the plugin's
    /// answer document. A failure status becomes nucleo::Error with the mapped kind and a message
    /// naming the plugin, the slot and the plugin's own message.
    [[nodiscard]] std::string summarize(std::string_view request_json) const;

  private:
    friend class Plugin;
    using PluginInstance::PluginInstance;
};

/// A "nucleo.provider/1" instance. Thread rule: every method may be called concurrently.
class ProviderInstance : public PluginInstance {
  public:
    [[nodiscard]] std::string capabilities() const;
    /// PreparedConversation JSON in, HTTP request JSON out.
    [[nodiscard]] std::string encode(std::string_view prepared_json) const;
    /// Answer in, normalized response JSON out. A provider error answer throws the mapped kind
    /// (kRateLimited, kOverloaded, ...) with the HTTP status in the message.
    [[nodiscard]] std::string decode(int32_t http_status, std::string_view headers_json,
                                     std::string_view body) const;
    /// ABI 1.2: true when the plugin offers decode_event (a 1.0/1.1 plugin does not).
    [[nodiscard]] bool has_decode_event() const;
    /// ABI 1.2 decode_event: the deltas document of one streamed event (plugin.h); empty when
    /// the plugin has no such slot or the event carries nothing to show.
    [[nodiscard]] std::string decode_event(std::string_view event_name,
                                           std::string_view data) const;
    /// The two outputs of encode_parts.
    struct EncodedParts {
        std::string head;  ///< {"schema_version":1, "method", "path", "headers"}
        std::string body;  ///< the body bytes as they are sent
    };
    /// ABI 1.3: true when the plugin offers encode_parts (a 1.0-1.2 plugin does not).
    [[nodiscard]] bool has_encode_parts() const;
    /// ABI 1.3 encode_parts (abi.106): encode with the head and the body apart. A plugin without
    /// the slot is refused with kNotImplemented (call encode instead).
    [[nodiscard]] EncodedParts encode_parts(std::string_view prepared_json) const;
    /// The four outputs of encode_split: the body is open + turns + close.
    struct EncodedSplit {
        std::string head;   ///< as encode_parts' head
        std::string open;   ///< the body before the turns' wire messages
        std::string turns;  ///< the turns' wire messages, comma-separated
        std::string close;  ///< the body after them
    };
    /// ABI 1.4: true when the plugin offers encode_split.
    [[nodiscard]] bool has_encode_split() const;
    /// ABI 1.4 encode_split (abi.108). A plugin without the slot is refused with kNotImplemented.
    [[nodiscard]] EncodedSplit encode_split(std::string_view prepared_json) const;

  private:
    friend class Plugin;
    using PluginInstance::PluginInstance;
};

/// A "nucleo.store/1" instance. Every conversation-addressed call takes the acting principal.
/// A slot the store has not built throws NotImplementedException (kNotImplemented).
/// Thread rule: every method may be called concurrently.
class StoreInstance : public PluginInstance {
  public:
    [[nodiscard]] std::string capabilities() const;
    std::string create_conversation(std::string_view principal, std::string_view id,
                                    std::string_view request_json) const;
    std::string update_conversation(std::string_view principal, std::string_view id,
                                    std::string_view request_json) const;
    [[nodiscard]] std::string load_conversation(std::string_view principal,
                                                std::string_view id) const;
    void delete_conversation(std::string_view principal, std::string_view id) const;
    [[nodiscard]] std::string list_conversations(std::string_view principal,
                                                 std::string_view query_json = "{}") const;
    [[nodiscard]] std::string version_history(std::string_view principal,
                                              std::string_view id) const;
    [[nodiscard]] std::string load_version(std::string_view principal, std::string_view id,
                                           std::string_view version) const;
    /// nullopt on a miss (the store answered not found); other failures throw.
    [[nodiscard]] std::optional<std::string> session_get(std::string_view principal,
                                                         std::string_view id) const;
    void session_put(std::string_view principal, std::string_view id,
                     std::string_view snapshot_json, int64_t ttl_ms) const;
    void session_invalidate(std::string_view principal, std::string_view id) const;
    /// abi.128: applies one save's changes to the entry mirroring its base version
    /// (request_json as plugin.h's session_apply). False on a miss (the store dropped whatever
    /// entry it kept); NotImplementedException when the plugin has no such slot (built before
    /// ABI 1.5): see has_session_apply().
    bool session_apply(std::string_view principal, std::string_view id,
                       std::string_view request_json, int64_t ttl_ms) const;
    [[nodiscard]] bool has_session_apply() const;
    /// abi.135: the latest version and fencing token (the answer of plugin.h's
    /// latest_version). NotImplementedException when the plugin has no such slot (built before
    /// ABI 1.7): see has_latest_version().
    [[nodiscard]] std::string latest_version(std::string_view principal, std::string_view id) const;
    [[nodiscard]] bool has_latest_version() const;
    std::string lease(std::string_view principal, std::string_view id,
                      std::string_view request_json) const;

  private:
    friend class Plugin;
    using PluginInstance::PluginInstance;
};

}  // namespace nucleo
