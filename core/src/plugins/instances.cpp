// C++ wrappers of plugin instances (abi.11, abi.12): host-owned sinks in, nucleo::Error out.
//
// A status from a plugin maps onto ErrorKind by plugin.h's rule (status == kind + 1); an unknown
// status is kPlugin. NOT_IMPLEMENTED throws NotImplementedException (persistence.4: an unbuilt
// store surface refuses loudly), UNCORRECTABLE and CONTEXT_OVERFLOW their exception types, so a
// caller can catch them by type. The message names the plugin, the slot and the plugin's text.
#include <mutex>
#include <optional>
#include <set>

#include <rapidjson/document.h>

#include "common/log_internal.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "persistence/boundary.hpp"
#include "plugins/library.hpp"
#include "plugins/options_schema.hpp"
#include "plugins/sinks.hpp"

namespace nucleo {
using plugins_detail::InstanceHandle;
using plugins_detail::Library;

namespace {

constexpr std::size_t kSummarizerV1Size =
    offsetof(nucleo_summarizer_factory, summarize) + sizeof(nucleo_summarizer_factory::summarize);
constexpr std::size_t kProviderV1Size =
    offsetof(nucleo_provider_factory, decode) + sizeof(nucleo_provider_factory::decode);
// A store must at least say what it has built; every other slot may be missing.
constexpr std::size_t kStoreV1MinSize =
    offsetof(nucleo_store_factory, capabilities) + sizeof(nucleo_store_factory::capabilities);

/// limits.143: a body sink refused a write past the request body cap; nothing was sent.
[[noreturn]] void throw_body_over_limit(const InstanceHandle& h, const char* slot) {
    throw Error(ErrorKind::kInvalidArgument,
                "plugin '" + h.library->info.name + "' " + slot +
                    ": the request body passed the cap of " +
                    std::to_string(plugins_detail::BodyLimit::current()) +
                    " bytes while it was written (wire.153, limits.143); raise "
                    "request_body_limit or shorten the conversation");
}

[[noreturn]] void throw_status(const InstanceHandle& h, const char* slot, int32_t status,
                               nucleo_error& err) {
    err.message[sizeof err.message - 1] = '\0';
    std::string text = "plugin '" + h.library->info.name + "'" +
                       (h.where.empty() ? std::string() : " (" + h.where + ")") + " " + slot +
                       " failed";
    if (err.message[0] != '\0') {
        text += ": ";
        text += err.message;
    } else {
        text += " with status " + std::to_string(status) + " and no message";
    }
    if (err.http_status != 0) text += " (HTTP " + std::to_string(err.http_status) + ")";
    if (status == NUCLEO_ERR_NOT_IMPLEMENTED) throw NotImplementedException(text);
    if (status == NUCLEO_ERR_CONTEXT_OVERFLOW) throw ContextOverflowException(text);
    if (status == NUCLEO_ERR_UNCORRECTABLE) throw UncorrectableLLMException(text);
    const bool known = status >= NUCLEO_ERR_INVALID_ARGUMENT && status <= NUCLEO_ERR_INTERNAL;
    throw Error(known ? static_cast<ErrorKind>(status - 1) : ErrorKind::kPlugin, text);
}

/// Calls `fn(sink, err)` and returns what the plugin wrote, or throws the mapped error. The sink
/// refuses writes once this returns (abi.102).
template <class Fn>
std::string collect(const InstanceHandle& h, const char* slot, Fn&& fn) {
    std::string out;
    int32_t status = NUCLEO_OK;
    nucleo_error err;
    nucleo_error_init(&err);
    {
        const plugins_detail::CallSink sink(out, h.library->sinks, h.library->info.name, slot);
        status = fn(sink.get(), &err);
    }
    if (status != NUCLEO_OK) throw_status(h, slot, status, err);
    return out;
}

/// Same, for slots without output.
template <class Fn>
void run(const InstanceHandle& h, const char* slot, Fn&& fn) {
    nucleo_error err;
    nucleo_error_init(&err);
    const int32_t status = fn(&err);
    if (status != NUCLEO_OK) throw_status(h, slot, status, err);
}

// persistence.105: where a store keeps its data, from its config: "file <path>" for a "path",
// the "url" with its password redacted; empty when the config names neither.
std::string store_location(std::string_view config_json) {
    rapidjson::Document doc;
    doc.Parse(config_json.data(), config_json.size());
    if (doc.HasParseError() || !doc.IsObject()) return {};
    if (auto p = doc.FindMember("path"); p != doc.MemberEnd() && p->value.IsString()) {
        return std::string("file ") + p->value.GetString();
    }
    if (auto u = doc.FindMember("url"); u != doc.MemberEnd() && u->value.IsString()) {
        return redact_url(u->value.GetString());
    }
    return {};
}

nucleo_string_view sv(std::string_view s) {
    return {s.data(), s.size()};
}

/// "; ${A} (FILE:LINE:COLUMN) is unset" for every unset variable the options were written with.
std::string unset_note(const OptionsOrigin* origin) {
    if (origin == nullptr) return {};
    std::string note;
    for (const auto& [path, names] : origin->unset_of) {
        const auto at = origin->where_of.find(path);
        const std::string& where = at != origin->where_of.end() ? at->second : origin->where;
        for (const auto& name : names) note += "; ${" + name + "} (" + where + ") is unset";
    }
    return note;
}

template <class Factory>
std::shared_ptr<InstanceHandle> create(const std::shared_ptr<Library>& library, const char* id,
                                       std::size_t min_size, std::string_view config,
                                       const OptionsOrigin* origin, std::string where = {}) {
    const auto* f = static_cast<const Factory*>(library->factory(id, min_size));
    if (f->create == nullptr || f->destroy == nullptr) {
        throw Error(ErrorKind::kPlugin, "cannot load plugin " + library->info.file.string() +
                                            ": factory " + id + " lacks create or destroy");
    }
    auto handle = std::make_shared<InstanceHandle>();
    handle->library = library;
    handle->factory_id = id;
    handle->factory = f;
    handle->where = std::move(where);
    nucleo_instance* made = nullptr;
    try {
        run(*handle, "create",
            [&](nucleo_error* err) { return f->create(sv(config), &made, err); });
    } catch (const Error& e) {
        const std::string note = unset_note(origin);
        if (note.empty()) throw;
        throw Error(e.kind(), e.what() + note);
    }
    if (made == nullptr) {
        throw Error(ErrorKind::kPlugin, "plugin '" + library->info.name + "' create of " + id +
                                            " reported success but returned no instance");
    }
    handle->instance = made;
    handle->destroy = f->destroy;
    return handle;
}

template <class Factory>
const Factory* factory_of(const InstanceHandle& h) {
    return static_cast<const Factory*>(h.factory);
}

/// A required slot the plugin left NULL: the plugin is broken, not the input.
template <class Slot>
Slot require(const InstanceHandle& h, Slot slot, const char* name) {
    if (slot == nullptr) {
        throw Error(ErrorKind::kPlugin, "plugin '" + h.library->info.name + "' (" +
                                            h.library->info.file.string() + ") has no " +
                                            h.factory_id + " slot " + name);
    }
    return slot;
}

/// abi.130: stores run in process only, for now.
void refuse_isolated(const Library& library, const char* id) {
    if (!library.isolation) return;
    throw NotImplementedException("plugin '" + library.info.name + "': isolation: process serves "
                                  "provider instances only, not " + std::string(id));
}

/// The outputs of an isolated call, exactly `n` of them, else the helper is broken.
plugins_detail::Frame outputs(const InstanceHandle& h, const char* slot,
                              plugins_detail::Frame got, std::size_t n) {
    if (got.size() != n)
        throw Error(ErrorKind::kPlugin, "plugin '" + h.library->info.name + "' " + slot +
                                            ": its helper process answered " +
                                            std::to_string(got.size()) + " outputs, not " +
                                            std::to_string(n));
    return got;
}

std::string one_output(const InstanceHandle& h, const char* slot, plugins_detail::Frame args,
                       std::size_t body_limit = 0) {
    return outputs(h, slot, h.isolated->call(slot, args, body_limit), 1)[0];
}

}  // namespace

SummarizerInstance Plugin::make_summarizer(std::string_view config_json,
                                           const OptionsOrigin* origin) const {
    check_options(NUCLEO_FACTORY_SUMMARIZER, config_json, origin);
    if (library_->isolation)
        return SummarizerInstance(create_isolated(NUCLEO_FACTORY_SUMMARIZER, config_json, origin));
    return SummarizerInstance(create<nucleo_summarizer_factory>(
        library_, NUCLEO_FACTORY_SUMMARIZER, kSummarizerV1Size, config_json, origin));
}

ProviderInstance Plugin::make_provider(std::string_view config_json,
                                       const OptionsOrigin* origin) const {
    check_options(NUCLEO_FACTORY_PROVIDER, config_json, origin);
    if (library_->isolation)
        return ProviderInstance(create_isolated(NUCLEO_FACTORY_PROVIDER, config_json, origin));
    return ProviderInstance(create<nucleo_provider_factory>(library_, NUCLEO_FACTORY_PROVIDER,
                                                            kProviderV1Size, config_json, origin));
}

std::shared_ptr<InstanceHandle> Plugin::create_isolated(const char* factory_id,
                                                        std::string_view config_json,
                                                        const OptionsOrigin* origin) const {
    auto handle = std::make_shared<InstanceHandle>();
    handle->library = library_;
    handle->factory_id = factory_id;
    std::unique_ptr<plugins_detail::HelperProcess> spare;
    {
        const std::lock_guard lock(library_->spare_mutex);
        spare = std::move(library_->spare);
    }
    try {
        handle->isolated = std::make_unique<plugins_detail::IsolatedInstance>(
            library_->info.file, library_->info.name, factory_id, std::string(config_json),
            *library_->isolation, std::move(spare));
    } catch (const Error& e) {
        const std::string note = unset_note(origin);
        if (note.empty()) throw;
        throw Error(e.kind(), e.what() + note);
    }
    return handle;
}

StoreInstance Plugin::make_store(std::string_view config_json, const OptionsOrigin* origin) const {
    refuse_isolated(*library_, NUCLEO_FACTORY_STORE);
    check_options(NUCLEO_FACTORY_STORE, config_json, origin);
    return StoreInstance(create<nucleo_store_factory>(library_, NUCLEO_FACTORY_STORE,
                                                      kStoreV1MinSize, config_json, origin,
                                                      store_location(config_json)));
}

std::optional<std::string> Plugin::options_schema(std::string_view factory_id) const {
    if (library_->isolation) {  // abi.130: as the helper reported it
        const auto it = library_->schemas.find(std::string(factory_id));
        if (it == library_->schemas.end()) return std::nullopt;
        return it->second;
    }
    const nucleo_plugin_entry* entry = library_->entry;
    if (!NUCLEO_HAS_SLOT(entry, nucleo_plugin_entry, options_schema)) return std::nullopt;
    const char* schema = entry->options_schema(std::string(factory_id).c_str());
    if (schema == nullptr) return std::nullopt;
    return std::string(schema);
}

namespace {

/// abi.109: true the first time a plugin file is named for publishing no schema in this
/// process, so a library loaded again after it was unloaded is not named again.
bool first_warning(const std::filesystem::path& file) {
    static std::mutex mutex;
    static std::set<std::string> named;
    const std::lock_guard lock(mutex);
    return named.insert(file.string()).second;
}

/// abi.111: options every provider instance takes, read by the host itself (the cache policy
/// and TTLs of caching.md); a provider's schema admits them whether it lists them or not.
constexpr const char* kHostProviderOptions = R"({
  "cache_policy": {"type": "string", "enum": ["seed", "sliding", "automatic"],
                   "description": "where the host places cache breakpoints; sliding when absent"},
  "cache_head_ttl": {"type": "string", "enum": ["5m", "1h"],
                     "description": "TTL of the cached head"},
  "cache_ttl": {"type": "string", "enum": ["5m", "1h"],
                "description": "TTL of every cache entry"},
  "threads": {"type": "boolean",
              "description": "continue the provider's message thread, sending only new turns (wire.211); off when absent"}
})";

}  // namespace

void Plugin::check_options(std::string_view factory_id, std::string_view config_json,
                           const OptionsOrigin* origin) const {
    const std::string& name = library_->info.name;
    if (!serves(factory_id)) return;  // create refuses it, naming the file and the id
    const std::optional<std::string> text = options_schema(factory_id);
    if (!text) {
        if (!library_->warned_no_schema.exchange(true) && first_warning(library_->info.file)) {
            NUCLEO_LOG_WARN(
                "plugin '{}' ({}) publishes no options schema (ABI {}.{}): its options "
                "are passed unchecked",
                name, library_->info.file.string(), library_->info.abi_major,
                library_->info.abi_minor);
        }
        return;
    }
    rapidjson::Document schema;
    schema.Parse<rapidjson::kParseIterativeFlag>(text->data(), text->size());
    if (schema.HasParseError() || !schema.IsObject()) {
        throw Error(ErrorKind::kPlugin, "plugin '" + name + "' (" + library_->info.file.string() +
                                            "): its options schema for " + std::string(factory_id) +
                                            " is not a JSON object");
    }
    if (factory_id == NUCLEO_FACTORY_PROVIDER) {
        auto properties = schema.FindMember("properties");
        if (properties != schema.MemberEnd() && properties->value.IsObject()) {
            rapidjson::Document host;
            host.Parse(kHostProviderOptions);
            for (auto& m : host.GetObject()) {
                if (properties->value.HasMember(m.name)) continue;
                properties->value.AddMember(rapidjson::Value(m.name, schema.GetAllocator()),
                                            rapidjson::Value(m.value, schema.GetAllocator()),
                                            schema.GetAllocator());
            }
        }
    }
    rapidjson::Document options;
    options.Parse<rapidjson::kParseIterativeFlag>(config_json.data(), config_json.size());
    if (config_json.empty()) options.SetObject();
    if (options.HasParseError()) {
        throw Error(ErrorKind::kConfig, "plugin '" + name + "' options: not JSON");
    }
    std::optional<plugins_detail::OptionsIssue> issue;
    try {
        issue = plugins_detail::validate_options(schema, options);
    } catch (const plugins_detail::SchemaError& e) {
        throw Error(ErrorKind::kPlugin, "plugin '" + name + "' (" + library_->info.file.string() +
                                            "): its options schema for " + std::string(factory_id) +
                                            " cannot be read: " + e.message);
    }
    if (!issue) return;
    if (origin == nullptr) {
        throw Error(ErrorKind::kConfig, "plugin '" + name + "' options: " +
                                            (issue->path.empty() ? "" : issue->path + ": ") +
                                            issue->message);
    }
    // The place: the option's own key; for a missing one, the object that lacks it.
    std::string path = issue->path;
    if (issue->missing) {
        const auto dot = path.rfind('.');
        path = dot == std::string::npos ? std::string() : path.substr(0, dot);
    }
    const auto at = origin->where_of.find(path);
    const std::string& where = at != origin->where_of.end() ? at->second : origin->where;
    std::string note;
    if (const auto u = origin->unset_of.find(issue->path); u != origin->unset_of.end()) {
        for (const auto& var : u->second) note += "; ${" + var + "} is unset";
    }
    throw Error(ErrorKind::kConfig,
                (where.empty() ? std::string() : where + ": ") +
                    (origin->key_path.empty() ? std::string("options") : origin->key_path) +
                    (issue->path.empty() ? "" : "." + issue->path) + ": " + issue->message + note +
                    " (plugin " + name + ")");
}

Plugin load_provider_plugin(const PluginLoader& loader, const ProviderConfig& provider) {
    if (!provider.process_isolation) return loader.load(provider.plugin);
    return loader.load_isolated(provider.plugin, provider.transport.deadline,
                                "providers." + provider.name + ".transport.deadline_ms");
}

Plugin load_summarizer_plugin(const PluginLoader& loader, const PluginChoice& choice) {
    if (!choice.process_isolation) return loader.load(choice.plugin);
    return loader.load_isolated(choice.plugin, choice.deadline, "summarizer.deadline_ms");
}

void check_plugins(const Config& config, const PluginLoader& loader) {
    const std::string file = config.path().string();
    auto check = [&](const std::string& plugin, const std::string& where,
                     const std::string& key_path, const char* factory_id,
                     const std::string& options_json, const OptionsOrigin& origin,
                     const ProviderConfig* provider = nullptr,
                     const PluginChoice* summarizer = nullptr) {
        std::optional<Plugin> loaded;
        try {
            if (provider != nullptr)
                loaded.emplace(load_provider_plugin(loader, *provider));
            else if (summarizer != nullptr)
                loaded.emplace(load_summarizer_plugin(loader, *summarizer));
            else
                loaded.emplace(loader.load(plugin));
        } catch (const Error& e) {
            throw Error(e.kind(),
                        (where.empty() ? file : where) + ": " + key_path + ": " + e.what());
        }
        if (!loaded->serves(factory_id)) {
            throw Error(ErrorKind::kPlugin,
                        (where.empty() ? file : where) + ": " + key_path + ": plugin '" + plugin +
                            "' (" + loaded->info().file.string() + ") serves no " + factory_id);
        }
        loaded->check_options(factory_id, options_json, &origin);
    };
    for (const auto& p : config.providers())
        check(p.plugin, p.where, "providers." + p.name + ".plugin", NUCLEO_FACTORY_PROVIDER,
              p.options_json, p.options_origin, &p);
    if (const auto& c = config.persistent_store())
        check(c->plugin, c->where, "stores.persistent", NUCLEO_FACTORY_STORE, c->options_json,
              c->options_origin);
    if (const auto& c = config.session_store())
        check(c->plugin, c->where, "stores.session", NUCLEO_FACTORY_STORE, c->options_json,
              c->options_origin);
    if (const auto& c = config.summarizer())
        check(c->plugin, c->where, "summarizer", NUCLEO_FACTORY_SUMMARIZER, c->options_json,
              c->options_origin, nullptr, &*c);
}

PluginInstance::PluginInstance(std::shared_ptr<InstanceHandle> handle)
    : handle_(std::move(handle)) {}

const PluginInfo& PluginInstance::plugin() const {
    return handle_->library->info;
}

// ---- summarizer ---------------------------------------------------------------------------

std::string SummarizerInstance::summarize(std::string_view request_json) const {
    if (handle_->isolated) return one_output(*handle_, "summarize", {std::string(request_json)});
    auto fn =
        require(*handle_, factory_of<nucleo_summarizer_factory>(*handle_)->summarize, "summarize");
    return collect(*handle_, "summarize", [&](const nucleo_sink* out, nucleo_error* err) {
        return fn(handle_->instance, sv(request_json), out, err);
    });
}

// ---- provider -----------------------------------------------------------------------------

std::string ProviderInstance::capabilities() const {
    if (handle_->isolated) return one_output(*handle_, "capabilities", {});
    auto fn = require(*handle_, factory_of<nucleo_provider_factory>(*handle_)->capabilities,
                      "capabilities");
    return collect(*handle_, "capabilities", [&](const nucleo_sink* out, nucleo_error* err) {
        return fn(handle_->instance, out, err);
    });
}

std::string ProviderInstance::encode(std::string_view prepared_json) const {
    if (handle_->isolated) return one_output(*handle_, "encode", {std::string(prepared_json)});
    auto fn = require(*handle_, factory_of<nucleo_provider_factory>(*handle_)->encode, "encode");
    return collect(*handle_, "encode", [&](const nucleo_sink* out, nucleo_error* err) {
        return fn(handle_->instance, sv(prepared_json), out, err);
    });
}

std::string ProviderInstance::decode(int32_t http_status, std::string_view headers_json,
                                     std::string_view body) const {
    if (handle_->isolated)
        return one_output(*handle_, "decode",
                          {std::to_string(http_status), std::string(headers_json),
                           std::string(body)});
    auto fn = require(*handle_, factory_of<nucleo_provider_factory>(*handle_)->decode, "decode");
    return collect(*handle_, "decode", [&](const nucleo_sink* out, nucleo_error* err) {
        return fn(handle_->instance, http_status, sv(headers_json), sv(body), out, err);
    });
}

bool ProviderInstance::has_decode_event() const {
    if (handle_->isolated) return handle_->isolated->has("decode_event");
    const auto* f = factory_of<nucleo_provider_factory>(*handle_);
    return NUCLEO_HAS_SLOT(f, nucleo_provider_factory, decode_event);
}

std::string ProviderInstance::decode_event(std::string_view event_name,
                                           std::string_view data) const {
    if (handle_->isolated) {
        if (!handle_->isolated->has("decode_event")) return {};
        return one_output(*handle_, "decode_event", {std::string(event_name), std::string(data)});
    }
    const auto* f = factory_of<nucleo_provider_factory>(*handle_);
    if (!NUCLEO_HAS_SLOT(f, nucleo_provider_factory, decode_event)) return {};
    return collect(*handle_, "decode_event", [&](const nucleo_sink* out, nucleo_error* err) {
        return f->decode_event(handle_->instance, sv(event_name), sv(data), out, err);
    });
}

bool ProviderInstance::has_encode_parts() const {
    if (handle_->isolated) return handle_->isolated->has("encode_parts");
    const auto* f = factory_of<nucleo_provider_factory>(*handle_);
    return NUCLEO_HAS_SLOT(f, nucleo_provider_factory, encode_parts);
}

ProviderInstance::EncodedParts ProviderInstance::encode_parts(
    std::string_view prepared_json) const {
    if (handle_->isolated) {
        // limits.143: the helper's sinks refuse a body past this thread's cap.
        auto got = outputs(*handle_, "encode_parts",
                           handle_->isolated->call("encode_parts", {std::string(prepared_json)},
                                                   plugins_detail::BodyLimit::current()),
                           2);
        return EncodedParts{std::move(got[0]), std::move(got[1])};
    }
    const auto* f = factory_of<nucleo_provider_factory>(*handle_);
    if (!NUCLEO_HAS_SLOT(f, nucleo_provider_factory, encode_parts)) {
        throw NotImplementedException("plugin '" + handle_->library->info.name + "' (ABI 1." +
                                      std::to_string(handle_->library->info.abi_minor) +
                                      ") has no encode_parts slot (ABI 1.3): call encode");
    }
    EncodedParts parts;
    nucleo_error err;
    nucleo_error_init(&err);
    int32_t status = NUCLEO_OK;
    bool over = false;
    {
        // abi.102: both sinks refuse writes once the call returned.
        const plugins_detail::CallSink head(parts.head, handle_->library->sinks,
                                            handle_->library->info.name, "encode_parts");
        const plugins_detail::CallSink body(parts.body, handle_->library->sinks,
                                            handle_->library->info.name, "encode_parts",
                                            plugins_detail::BodyLimit::current());
        status =
            f->encode_parts(handle_->instance, sv(prepared_json), head.get(), body.get(), &err);
        over = body.over_limit();
    }
    if (over) throw_body_over_limit(*handle_, "encode_parts");
    if (status != NUCLEO_OK) throw_status(*handle_, "encode_parts", status, err);
    return parts;
}

bool ProviderInstance::has_encode_split() const {
    if (handle_->isolated) return handle_->isolated->has("encode_split");
    const auto* f = factory_of<nucleo_provider_factory>(*handle_);
    return NUCLEO_HAS_SLOT(f, nucleo_provider_factory, encode_split);
}

ProviderInstance::EncodedSplit ProviderInstance::encode_split(
    std::string_view prepared_json) const {
    if (handle_->isolated) {
        auto got = outputs(*handle_, "encode_split",
                           handle_->isolated->call("encode_split", {std::string(prepared_json)},
                                                   plugins_detail::BodyLimit::current()),
                           4);
        return EncodedSplit{std::move(got[0]), std::move(got[1]), std::move(got[2]),
                            std::move(got[3])};
    }
    const auto* f = factory_of<nucleo_provider_factory>(*handle_);
    if (!NUCLEO_HAS_SLOT(f, nucleo_provider_factory, encode_split)) {
        throw NotImplementedException("plugin '" + handle_->library->info.name + "' (ABI 1." +
                                      std::to_string(handle_->library->info.abi_minor) +
                                      ") has no encode_split slot (ABI 1.4): call encode_parts");
    }
    EncodedSplit parts;
    nucleo_error err;
    nucleo_error_init(&err);
    int32_t status = NUCLEO_OK;
    bool over = false;
    {
        // abi.102: every sink refuses writes once the call returned.
        const std::string& name = handle_->library->info.name;
        const plugins_detail::CallSink head(parts.head, handle_->library->sinks, name,
                                            "encode_split");
        const std::size_t limit = plugins_detail::BodyLimit::current();  // limits.143
        const plugins_detail::CallSink open(parts.open, handle_->library->sinks, name,
                                            "encode_split", limit);
        const plugins_detail::CallSink turns(parts.turns, handle_->library->sinks, name,
                                             "encode_split", limit);
        const plugins_detail::CallSink close(parts.close, handle_->library->sinks, name,
                                             "encode_split", limit);
        status = f->encode_split(handle_->instance, sv(prepared_json), head.get(), open.get(),
                                 turns.get(), close.get(), &err);
        over = open.over_limit() || turns.over_limit() || close.over_limit();
    }
    if (over) throw_body_over_limit(*handle_, "encode_split");
    if (status != NUCLEO_OK) throw_status(*handle_, "encode_split", status, err);
    return parts;
}

// ---- store --------------------------------------------------------------------------------

namespace {

// persistence.104: every store call meets one rule at the boundary, before any plugin sees it.
void check_ids(std::string_view principal, std::string_view id, const char* slot) {
    internal::check_store_id(principal, "user id", slot);
    internal::check_store_id(id, "conversation id", slot);
}

}  // namespace

// A slot outside the store's struct_size or NULL is an unbuilt surface: NotImplementedException.
#define NUCLEO_STORE_SLOT(slot)                                              \
    ([&] {                                                                   \
        const auto* f = factory_of<nucleo_store_factory>(*handle_);          \
        if (!NUCLEO_HAS_SLOT(f, nucleo_store_factory, slot)) {               \
            throw NotImplementedException("store plugin '" + plugin().name + \
                                          "' does not implement " #slot);    \
        }                                                                    \
        return f->slot;                                                      \
    }())

std::string StoreInstance::capabilities() const {
    auto fn = NUCLEO_STORE_SLOT(capabilities);
    return collect(*handle_, "capabilities", [&](const nucleo_sink* out, nucleo_error* err) {
        return fn(handle_->instance, out, err);
    });
}

std::string StoreInstance::create_conversation(std::string_view principal, std::string_view id,
                                               std::string_view request_json) const {
    check_ids(principal, id, "create_conversation");
    internal::check_store_text(request_json, "the create request", id);
    auto fn = NUCLEO_STORE_SLOT(create_conversation);
    return collect(*handle_, "create_conversation", [&](const nucleo_sink* out, nucleo_error* e) {
        return fn(handle_->instance, sv(principal), sv(id), sv(request_json), out, e);
    });
}

std::string StoreInstance::update_conversation(std::string_view principal, std::string_view id,
                                               std::string_view request_json) const {
    check_ids(principal, id, "update_conversation");
    internal::check_store_text(request_json, "the update request", id);
    auto fn = NUCLEO_STORE_SLOT(update_conversation);
    return collect(*handle_, "update_conversation", [&](const nucleo_sink* out, nucleo_error* e) {
        return fn(handle_->instance, sv(principal), sv(id), sv(request_json), out, e);
    });
}

std::string StoreInstance::load_conversation(std::string_view principal,
                                             std::string_view id) const {
    check_ids(principal, id, "load_conversation");
    auto fn = NUCLEO_STORE_SLOT(load_conversation);
    return collect(*handle_, "load_conversation", [&](const nucleo_sink* out, nucleo_error* e) {
        return fn(handle_->instance, sv(principal), sv(id), out, e);
    });
}

void StoreInstance::delete_conversation(std::string_view principal, std::string_view id) const {
    check_ids(principal, id, "delete_conversation");
    auto fn = NUCLEO_STORE_SLOT(delete_conversation);
    run(*handle_, "delete_conversation",
        [&](nucleo_error* e) { return fn(handle_->instance, sv(principal), sv(id), e); });
}

std::string StoreInstance::list_conversations(std::string_view principal,
                                              std::string_view query_json) const {
    internal::check_store_id(principal, "user id", "list_conversations");
    auto fn = NUCLEO_STORE_SLOT(list_conversations);
    return collect(*handle_, "list_conversations", [&](const nucleo_sink* out, nucleo_error* e) {
        return fn(handle_->instance, sv(principal), sv(query_json), out, e);
    });
}

std::string StoreInstance::version_history(std::string_view principal, std::string_view id) const {
    check_ids(principal, id, "version_history");
    auto fn = NUCLEO_STORE_SLOT(version_history);
    return collect(*handle_, "version_history", [&](const nucleo_sink* out, nucleo_error* e) {
        return fn(handle_->instance, sv(principal), sv(id), out, e);
    });
}

std::string StoreInstance::load_version(std::string_view principal, std::string_view id,
                                        std::string_view version) const {
    check_ids(principal, id, "load_version");
    auto fn = NUCLEO_STORE_SLOT(load_version);
    return collect(*handle_, "load_version", [&](const nucleo_sink* out, nucleo_error* e) {
        return fn(handle_->instance, sv(principal), sv(id), sv(version), out, e);
    });
}

std::optional<std::string> StoreInstance::session_get(std::string_view principal,
                                                      std::string_view id) const {
    check_ids(principal, id, "session_get");
    auto fn = NUCLEO_STORE_SLOT(session_get);
    try {
        return collect(*handle_, "session_get", [&](const nucleo_sink* out, nucleo_error* e) {
            return fn(handle_->instance, sv(principal), sv(id), out, e);
        });
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::kNotFound) return std::nullopt;  // a miss, not a failure
        throw;
    }
}

void StoreInstance::session_put(std::string_view principal, std::string_view id,
                                std::string_view snapshot_json, int64_t ttl_ms) const {
    check_ids(principal, id, "session_put");
    internal::check_store_text(snapshot_json, "the session entry", id);
    auto fn = NUCLEO_STORE_SLOT(session_put);
    run(*handle_, "session_put", [&](nucleo_error* e) {
        return fn(handle_->instance, sv(principal), sv(id), sv(snapshot_json), ttl_ms, e);
    });
}

void StoreInstance::session_invalidate(std::string_view principal, std::string_view id) const {
    check_ids(principal, id, "session_invalidate");
    auto fn = NUCLEO_STORE_SLOT(session_invalidate);
    run(*handle_, "session_invalidate",
        [&](nucleo_error* e) { return fn(handle_->instance, sv(principal), sv(id), e); });
}

bool StoreInstance::session_apply(std::string_view principal, std::string_view id,
                                  std::string_view request_json, int64_t ttl_ms) const {
    check_ids(principal, id, "session_apply");
    internal::check_store_text(request_json, "the session delta", id);
    auto fn = NUCLEO_STORE_SLOT(session_apply);
    try {
        run(*handle_, "session_apply", [&](nucleo_error* e) {
            return fn(handle_->instance, sv(principal), sv(id), sv(request_json), ttl_ms, e);
        });
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::kNotFound) return false;  // a miss, not a failure
        throw;
    }
    return true;
}

bool StoreInstance::has_session_apply() const {
    const auto* f = factory_of<nucleo_store_factory>(*handle_);
    return NUCLEO_HAS_SLOT(f, nucleo_store_factory, session_apply);
}

std::string StoreInstance::latest_version(std::string_view principal, std::string_view id) const {
    check_ids(principal, id, "latest_version");
    auto fn = NUCLEO_STORE_SLOT(latest_version);
    return collect(*handle_, "latest_version", [&](const nucleo_sink* out, nucleo_error* e) {
        return fn(handle_->instance, sv(principal), sv(id), out, e);
    });
}

bool StoreInstance::has_latest_version() const {
    const auto* f = factory_of<nucleo_store_factory>(*handle_);
    return NUCLEO_HAS_SLOT(f, nucleo_store_factory, latest_version);
}

std::string StoreInstance::lease(std::string_view principal, std::string_view id,
                                 std::string_view request_json) const {
    check_ids(principal, id, "lease");
    auto fn = NUCLEO_STORE_SLOT(lease);
    return collect(*handle_, "lease", [&](const nucleo_sink* out, nucleo_error* e) {
        return fn(handle_->instance, sv(principal), sv(id), sv(request_json), out, e);
    });
}

#undef NUCLEO_STORE_SLOT

}  // namespace nucleo
