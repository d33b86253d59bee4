// C++ wrappers of plugin instances (abi.11, abi.12): host-owned sinks in, nucleo::Error out.
//
// A status from a plugin maps onto ErrorKind by plugin.h's rule (status == kind + 1); an unknown
// status is kPlugin. NOT_IMPLEMENTED throws NotImplementedException (persistence.4: an unbuilt
// store surface refuses loudly), UNCORRECTABLE and CONTEXT_OVERFLOW their exception types, so a
// caller can catch them by type. The message names the plugin, the slot and the plugin's text.
#include <optional>

#include <rapidjson/document.h>

#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "persistence/boundary.hpp"
#include "plugins/library.hpp"
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

template <class Factory>
std::shared_ptr<InstanceHandle> create(const std::shared_ptr<Library>& library, const char* id,
                                       std::size_t min_size, std::string_view config,
                                       std::string where = {}) {
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
    run(*handle, "create", [&](nucleo_error* err) { return f->create(sv(config), &made, err); });
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

}  // namespace

SummarizerInstance Plugin::make_summarizer(std::string_view config_json) const {
    return SummarizerInstance(create<nucleo_summarizer_factory>(library_, NUCLEO_FACTORY_SUMMARIZER,
                                                                kSummarizerV1Size, config_json));
}

ProviderInstance Plugin::make_provider(std::string_view config_json) const {
    return ProviderInstance(create<nucleo_provider_factory>(library_, NUCLEO_FACTORY_PROVIDER,
                                                            kProviderV1Size, config_json));
}

StoreInstance Plugin::make_store(std::string_view config_json) const {
    return StoreInstance(create<nucleo_store_factory>(library_, NUCLEO_FACTORY_STORE,
                                                      kStoreV1MinSize, config_json,
                                                      store_location(config_json)));
}

PluginInstance::PluginInstance(std::shared_ptr<InstanceHandle> handle)
    : handle_(std::move(handle)) {}

const PluginInfo& PluginInstance::plugin() const {
    return handle_->library->info;
}

// ---- summarizer ---------------------------------------------------------------------------

std::string SummarizerInstance::summarize(std::string_view request_json) const {
    auto fn =
        require(*handle_, factory_of<nucleo_summarizer_factory>(*handle_)->summarize, "summarize");
    return collect(*handle_, "summarize", [&](const nucleo_sink* out, nucleo_error* err) {
        return fn(handle_->instance, sv(request_json), out, err);
    });
}

// ---- provider -----------------------------------------------------------------------------

std::string ProviderInstance::capabilities() const {
    auto fn = require(*handle_, factory_of<nucleo_provider_factory>(*handle_)->capabilities,
                      "capabilities");
    return collect(*handle_, "capabilities", [&](const nucleo_sink* out, nucleo_error* err) {
        return fn(handle_->instance, out, err);
    });
}

std::string ProviderInstance::encode(std::string_view prepared_json) const {
    auto fn = require(*handle_, factory_of<nucleo_provider_factory>(*handle_)->encode, "encode");
    return collect(*handle_, "encode", [&](const nucleo_sink* out, nucleo_error* err) {
        return fn(handle_->instance, sv(prepared_json), out, err);
    });
}

std::string ProviderInstance::decode(int32_t http_status, std::string_view headers_json,
                                     std::string_view body) const {
    auto fn = require(*handle_, factory_of<nucleo_provider_factory>(*handle_)->decode, "decode");
    return collect(*handle_, "decode", [&](const nucleo_sink* out, nucleo_error* err) {
        return fn(handle_->instance, http_status, sv(headers_json), sv(body), out, err);
    });
}

bool ProviderInstance::has_decode_event() const {
    const auto* f = factory_of<nucleo_provider_factory>(*handle_);
    return NUCLEO_HAS_SLOT(f, nucleo_provider_factory, decode_event);
}

std::string ProviderInstance::decode_event(std::string_view event_name,
                                           std::string_view data) const {
    const auto* f = factory_of<nucleo_provider_factory>(*handle_);
    if (!NUCLEO_HAS_SLOT(f, nucleo_provider_factory, decode_event)) return {};
    return collect(*handle_, "decode_event", [&](const nucleo_sink* out, nucleo_error* err) {
        return f->decode_event(handle_->instance, sv(event_name), sv(data), out, err);
    });
}

bool ProviderInstance::has_encode_parts() const {
    const auto* f = factory_of<nucleo_provider_factory>(*handle_);
    return NUCLEO_HAS_SLOT(f, nucleo_provider_factory, encode_parts);
}

ProviderInstance::EncodedParts ProviderInstance::encode_parts(std::string_view prepared_json) const {
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
    {
        // abi.102: both sinks refuse writes once the call returned.
        const plugins_detail::CallSink head(parts.head, handle_->library->sinks,
                                            handle_->library->info.name, "encode_parts");
        const plugins_detail::CallSink body(parts.body, handle_->library->sinks,
                                            handle_->library->info.name, "encode_parts");
        status = f->encode_parts(handle_->instance, sv(prepared_json), head.get(), body.get(), &err);
    }
    if (status != NUCLEO_OK) throw_status(*handle_, "encode_parts", status, err);
    return parts;
}

bool ProviderInstance::has_encode_split() const {
    const auto* f = factory_of<nucleo_provider_factory>(*handle_);
    return NUCLEO_HAS_SLOT(f, nucleo_provider_factory, encode_split);
}

ProviderInstance::EncodedSplit ProviderInstance::encode_split(std::string_view prepared_json) const {
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
    {
        // abi.102: every sink refuses writes once the call returned.
        const std::string& name = handle_->library->info.name;
        const plugins_detail::CallSink head(parts.head, name, "encode_split");
        const plugins_detail::CallSink open(parts.open, name, "encode_split");
        const plugins_detail::CallSink turns(parts.turns, name, "encode_split");
        const plugins_detail::CallSink close(parts.close, name, "encode_split");
        status = f->encode_split(handle_->instance, sv(prepared_json), head.get(), open.get(), turns.get(),
                                 close.get(), &err);
    }
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
