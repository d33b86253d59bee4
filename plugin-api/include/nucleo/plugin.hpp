// nucleo/plugin.hpp -- header-only C++ helper for plugin authors (docs/spec/plugin-abi.md).
//
// A C++ plugin derives from nucleo::plugin::Summarizer, Provider or Store, implements the slots it
// serves, and defines its entry with NUCLEO_PLUGIN_ENTRY:
//
//     class Mine final : public nucleo::plugin::Summarizer {
//     public:
//         explicit Mine(std::string_view config_json) { ... }
//         void summarize(std::string_view request_json, nucleo::plugin::Sink& out) override {...}
//     };
//     NUCLEO_PLUGIN_ENTRY("mine", "1.0.0", "What it does",
//                         nucleo::plugin::summarizer_factory<Mine>())
//
// The helper generates the C structs of plugin.h and noexcept trampolines that catch every
// exception: nucleo::plugin::Failure carries its own status; std::invalid_argument maps to
// NUCLEO_ERR_INVALID_ARGUMENT, std::bad_alloc to NUCLEO_ERR_INTERNAL, anything else to
// NUCLEO_ERR_PLUGIN with what() as the message. No standard library type crosses the boundary:
// only the C structs of plugin.h do. Slots a Store does not override answer
// NUCLEO_ERR_NOT_IMPLEMENTED (persistence.4: an unbuilt store surface never returns an empty
// result).
//
// Everything here lives in the plugin's own binary (plugins are built with hidden visibility),
// so two plugins built from different versions of this header never collide.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "nucleo/plugin.h"

namespace nucleo::plugin {

/// An error with a plugin.h status, thrown by plugin code and turned into a nucleo_error by the
/// trampolines. http_status is set when an HTTP answer is the cause (provider decode).
class Failure : public std::runtime_error {
  public:
    Failure(int32_t status, const std::string& message, int32_t http_status = 0)
        : std::runtime_error(message), status_(status), http_status_(http_status) {}
    [[nodiscard]] int32_t status() const noexcept { return status_; }
    [[nodiscard]] int32_t http_status() const noexcept { return http_status_; }

  private:
    int32_t status_;
    int32_t http_status_;
};

/// The host-owned output of a call. write() appends; a refusal by the host (out of memory)
/// throws Failure with the host's status, which the trampoline returns.
class Sink {
  public:
    explicit Sink(const nucleo_sink* sink) noexcept : sink_(sink) {}
    void write(std::string_view bytes) {
        const int32_t status = nucleo_sink_write(sink_, bytes.data(), bytes.size());
        if (status != NUCLEO_OK) throw Failure(status, "the host's output sink refused a write");
    }
    Sink& operator<<(std::string_view bytes) {
        write(bytes);
        return *this;
    }

  private:
    const nucleo_sink* sink_;
};

/// The output document of decode_event (ABI 1.2, plugin.h): collects deltas and writes
/// {"schema_version":1,"deltas":[...]}, escaping strings itself so a plugin needs no JSON library
/// for it. Nothing is written when no delta was added.
class StreamDeltas {
  public:
    void text(std::size_t index, std::string_view text) { piece("text", index, "text", text); }
    void thinking(std::size_t index, std::string_view thinking) {
        piece("thinking", index, "thinking", thinking);
    }
    void tool_use(std::size_t index, std::string_view id, std::string_view name) {
        open("tool_use", index);
        key_string("id", id);
        key_string("name", name);
        items_ += '}';
    }
    void tool_input(std::size_t index, std::string_view partial_json) {
        piece("tool_input", index, "partial_json", partial_json);
    }
    /// Normalized usage (input_tokens uncached, as decode reports it).
    void usage(int64_t input, int64_t output, int64_t cache_read, int64_t cache_write) {
        if (!items_.empty()) items_ += ',';
        items_ += R"({"type":"usage","usage":{"input_tokens":)" + std::to_string(input) +
                  R"(,"output_tokens":)" + std::to_string(output) +
                  R"(,"cache_read_tokens":)" + std::to_string(cache_read) +
                  R"(,"cache_write_tokens":)" + std::to_string(cache_write) + "}}";
    }
    [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
    void write(Sink& out) const {
        if (items_.empty()) return;
        out << R"({"schema_version":1,"deltas":[)" << items_ << "]}";
    }

  private:
    void open(std::string_view type, std::size_t index) {
        if (!items_.empty()) items_ += ',';
        items_ += R"({"type":")";
        items_ += type;
        items_ += R"(","index":)" + std::to_string(index);
    }
    void piece(std::string_view type, std::size_t index, std::string_view key,
               std::string_view value) {
        if (value.empty()) return;  // an empty delta shows nothing
        open(type, index);
        key_string(key, value);
        items_ += '}';
    }
    void key_string(std::string_view key, std::string_view value) {
        items_ += ",\"";
        items_ += key;
        items_ += "\":\"";
        for (const char c : value) {
            const auto u = static_cast<unsigned char>(c);
            if (c == '"' || c == '\\') {
                items_ += '\\';
                items_ += c;
            } else if (u < 0x20) {
                static const char* hex = "0123456789abcdef";
                items_ += "\\u00";
                items_ += hex[u >> 4U];
                items_ += hex[u & 0xFU];
            } else {
                items_ += c;
            }
        }
        items_ += '"';
    }
    std::string items_;
};

/// The host as the plugin sees it after init: its log extension. Thread rule: log() is callable
/// from any thread (the host's log extension is).
class Host {
  public:
    /// Logs through "nucleo.host.log/1"; a no-op before init, after deinit, or when the host does
    /// not offer the extension. Plugins never write to stdout.
    static void log(int32_t level, std::string_view message) noexcept {
        const State& s = state();
        if (s.host == nullptr || !NUCLEO_HAS_SLOT(s.log, nucleo_host_log, log)) return;
        s.log->log(s.host->host_ctx, level, nucleo_string_view{message.data(), message.size()});
    }
    static void info(std::string_view message) noexcept { log(NUCLEO_LOG_LEVEL_INFO, message); }
    static void warn(std::string_view message) noexcept { log(NUCLEO_LOG_LEVEL_WARN, message); }
    static void error(std::string_view message) noexcept { log(NUCLEO_LOG_LEVEL_ERROR, message); }

    /// Tokens of `text` by the host's counter named `counter` (a request's "token_counter",
    /// "nucleo.host.tokens/1"), or -1 when the host has no such service or no longer knows the
    /// counter: the caller then estimates on its own.
    static int64_t count_tokens(std::string_view counter, std::string_view text) noexcept {
        const State& s = state();
        if (s.host == nullptr || counter.empty() ||
            !NUCLEO_HAS_SLOT(s.tokens, nucleo_host_tokens, count)) {
            return -1;
        }
        int64_t tokens = -1;
        if (s.tokens->count(s.host->host_ctx, nucleo_string_view{counter.data(), counter.size()},
                            nucleo_string_view{text.data(), text.size()}, &tokens,
                            nullptr) != NUCLEO_OK) {
            return -1;
        }
        return tokens;
    }

    /// The raw host (NULL outside init..deinit), for extensions this helper does not wrap.
    static const nucleo_host* raw() noexcept { return state().host; }

    // Called by the generated init/deinit only.
    static void attach(const nucleo_host* host) noexcept {
        State& s = state();
        s.host = host;
        s.log = nullptr;
        s.tokens = nullptr;
        if (NUCLEO_HAS_SLOT(host, nucleo_host, get_extension)) {
            s.log =
                static_cast<const nucleo_host_log*>(host->get_extension(host, NUCLEO_EXT_HOST_LOG));
            s.tokens = static_cast<const nucleo_host_tokens*>(
                host->get_extension(host, NUCLEO_EXT_HOST_TOKENS));
        }
    }
    static void detach() noexcept { state() = State{}; }

  private:
    struct State {
        const nucleo_host* host = nullptr;
        const nucleo_host_log* log = nullptr;
        const nucleo_host_tokens* tokens = nullptr;
    };
    static State& state() noexcept {
        static State s;
        return s;
    }
};

/// Base of every instance: instances are destroyed through this virtual destructor.
class Instance {
  public:
    Instance() = default;
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;
    virtual ~Instance() = default;
};

/// "nucleo.summarizer/1". Thread rule: summarize() is called concurrently on one instance.
class Summarizer : public Instance {
  public:
    virtual void summarize(std::string_view request_json, Sink& out) = 0;
};

/// "nucleo.provider/1": pure functions of their input. Thread rule: every method is called
/// concurrently on one instance.
class Provider : public Instance {
  public:
    virtual void capabilities(Sink& out) = 0;
    virtual void encode(std::string_view prepared_json, Sink& out) = 0;
    virtual void decode(int32_t http_status, std::string_view headers_json, std::string_view body,
                        Sink& out) = 0;
    /// ABI 1.2 decode_event: the deltas of one streamed event (plugin.h). Default: none.
    virtual void decode_event(std::string_view /*event_name*/, std::string_view /*data*/,
                              Sink& /*out*/) {}
    // ABI 1.3 encode_parts (abi.106) is offered when the derived class defines
    //     void encode_parts(std::string_view prepared_json, Sink& head, Sink& body);
    // writing encode's document without "body" to head and the body bytes to body. Without it
    // the slot stays NULL and the host calls encode.
    // ABI 1.4 encode_split (abi.108) is offered when the derived class defines
    //     void encode_split(std::string_view prepared_json, Sink& head, Sink& open, Sink& turns,
    //                       Sink& close);
    // writing encode_parts' head, and its body cut around the turns' wire messages.
};

/// True when Impl defines encode_parts (ABI 1.3) as described in Provider.
template <class Impl>
inline constexpr bool kEncodesParts =
    requires(Impl& impl, std::string_view prepared, Sink& head, Sink& body) {
        impl.encode_parts(prepared, head, body);
    };

/// True when Impl defines encode_split (ABI 1.4) as described in Provider.
template <class Impl>
inline constexpr bool kEncodesSplit =
    requires(Impl& impl, std::string_view prepared, Sink& head, Sink& open, Sink& turns, Sink& close) {
        impl.encode_split(prepared, head, open, turns, close);
    };

/// "nucleo.store/1". Every method not overridden answers NUCLEO_ERR_NOT_IMPLEMENTED.
/// Thread rule: every method is called concurrently on one instance.
class Store : public Instance {
  public:
    virtual void capabilities(Sink& out) = 0;
    virtual void create_conversation(std::string_view /*principal*/, std::string_view /*id*/,
                                     std::string_view /*request_json*/, Sink& /*out*/) {
        unbuilt("create_conversation");
    }
    virtual void update_conversation(std::string_view /*principal*/, std::string_view /*id*/,
                                     std::string_view /*request_json*/, Sink& /*out*/) {
        unbuilt("update_conversation");
    }
    virtual void load_conversation(std::string_view /*principal*/, std::string_view /*id*/,
                                   Sink& /*out*/) {
        unbuilt("load_conversation");
    }
    virtual void delete_conversation(std::string_view /*principal*/, std::string_view /*id*/) {
        unbuilt("delete_conversation");
    }
    virtual void list_conversations(std::string_view /*principal*/, std::string_view /*query_json*/,
                                    Sink& /*out*/) {
        unbuilt("list_conversations");
    }
    virtual void version_history(std::string_view /*principal*/, std::string_view /*id*/,
                                 Sink& /*out*/) {
        unbuilt("version_history");
    }
    virtual void load_version(std::string_view /*principal*/, std::string_view /*id*/,
                              std::string_view /*version*/, Sink& /*out*/) {
        unbuilt("load_version");
    }
    virtual void session_get(std::string_view /*principal*/, std::string_view /*id*/,
                             Sink& /*out*/) {
        unbuilt("session_get");
    }
    virtual void session_put(std::string_view /*principal*/, std::string_view /*id*/,
                             std::string_view /*snapshot_json*/, int64_t /*ttl_ms*/) {
        unbuilt("session_put");
    }
    virtual void session_invalidate(std::string_view /*principal*/, std::string_view /*id*/) {
        unbuilt("session_invalidate");
    }
    virtual void lease(std::string_view /*principal*/, std::string_view /*id*/,
                       std::string_view /*request_json*/, Sink& /*out*/) {
        unbuilt("lease");
    }
    // ABI 1.5 session_apply (abi.128) is offered when the derived class defines
    //     void session_apply(std::string_view principal, std::string_view id,
    //                        std::string_view request_json, int64_t ttl_ms);
    // applying a save's changes to the entry mirroring its base version, or dropping the entry
    // and throwing Failure(NUCLEO_ERR_NOT_FOUND) on a miss. Without it the slot stays NULL and
    // the host puts the whole entry.
    // ABI 1.7 latest_version (abi.135) is offered when the derived class defines
    //     void latest_version(std::string_view principal, std::string_view id, Sink& out);
    // writing {"schema_version":1, "version":"<id>"|null, "saved_at":"...", "fencing_token":N?}
    // without reading every version. Without it the slot stays NULL and the host reads the
    // whole version_history.

  protected:
    [[noreturn]] static void unbuilt(const char* slot) {
        throw Failure(NUCLEO_ERR_NOT_IMPLEMENTED,
                      std::string("this store does not implement ") + slot);
    }
};

namespace detail {

inline std::string_view view(nucleo_string_view v) noexcept {
    return v.data != nullptr ? std::string_view(v.data, v.size) : std::string_view();
}

/// Runs fn, turning every exception into a status and a filled error. The one place where C++
/// exceptions stop.
template <class Fn>
int32_t guarded(nucleo_error* err, Fn&& fn) noexcept {
    try {
        fn();
        return NUCLEO_OK;
    } catch (const Failure& e) {
        const int32_t status = e.status() != NUCLEO_OK ? e.status() : NUCLEO_ERR_PLUGIN;
        return nucleo_error_set(err, status, e.http_status(), e.what());
    } catch (const std::invalid_argument& e) {
        return nucleo_error_set(err, NUCLEO_ERR_INVALID_ARGUMENT, 0, e.what());
    } catch (const std::bad_alloc&) {
        return nucleo_error_set(err, NUCLEO_ERR_INTERNAL, 0, "out of memory in the plugin");
    } catch (const std::exception& e) {
        return nucleo_error_set(err, NUCLEO_ERR_PLUGIN, 0, e.what());
    } catch (...) {
        return nucleo_error_set(err, NUCLEO_ERR_PLUGIN, 0, "unknown exception in the plugin");
    }
}

template <class Impl>
Impl* self(nucleo_instance* instance) noexcept {
    // Every instance handed out by create() below is an Impl* in disguise.
    return reinterpret_cast<Impl*>(instance);
}

template <class Impl, class Base>
struct Lifecycle {
    static int32_t create(nucleo_string_view config, nucleo_instance** out,
                          nucleo_error* err) noexcept {
        if (out == nullptr) {
            return nucleo_error_set(err, NUCLEO_ERR_INVALID_ARGUMENT, 0, "create: out is NULL");
        }
        *out = nullptr;
        return guarded(err, [&] {
            auto made = std::make_unique<Impl>(view(config));
            static_assert(std::is_base_of_v<Base, Impl>, "Impl must derive from the kind's base");
            *out = reinterpret_cast<nucleo_instance*>(made.release());
        });
    }
    static void destroy(nucleo_instance* instance) noexcept {
        // Ownership came back from the host: the unique_ptr deletes it (noexcept destructor).
        std::unique_ptr<Impl> owned(self<Impl>(instance));
    }
};

}  // namespace detail

/// One factory an entry serves: its id, its static C struct and the JSON Schema of the options
/// its create accepts (ABI 1.4; NULL for none).
struct FactoryRef {
    const char* id;
    const void* factory;
    const char* options_schema = nullptr;
};

/// ABI 1.4: Impl's options schema is `static constexpr const char* kOptionsSchema` when it
/// declares one (a JSON Schema document; docs/plugin-authoring.md lists the keywords the host
/// reads), else NULL and the host passes its options unchecked.
template <class Impl>
constexpr const char* options_schema_of() noexcept {
    if constexpr (requires { Impl::kOptionsSchema; }) {
        return Impl::kOptionsSchema;
    } else {
        return nullptr;
    }
}

/// The "nucleo.summarizer/1" factory for Impl (derives from Summarizer, constructible from the
/// config JSON as std::string_view).
template <class Impl>
FactoryRef summarizer_factory() noexcept {
    using L = detail::Lifecycle<Impl, Summarizer>;
    static const nucleo_summarizer_factory table = {
        sizeof(nucleo_summarizer_factory), &L::create, &L::destroy,
        [](nucleo_instance* inst, nucleo_string_view req, const nucleo_sink* out,
           nucleo_error* err) noexcept -> int32_t {
            return detail::guarded(err, [&] {
                Sink sink(out);
                detail::self<Impl>(inst)->summarize(detail::view(req), sink);
            });
        }};
    return {NUCLEO_FACTORY_SUMMARIZER, &table, options_schema_of<Impl>()};
}

/// The encode_parts slot for Impl: its trampoline, or NULL when Impl does not define it.
template <class Impl>
constexpr auto encode_parts_slot() noexcept {
    using Slot = decltype(nucleo_provider_factory::encode_parts);
    if constexpr (kEncodesParts<Impl>) {
        return static_cast<Slot>([](nucleo_instance* inst, nucleo_string_view req,
                                    const nucleo_sink* head, const nucleo_sink* body,
                                    nucleo_error* err) noexcept -> int32_t {
            return detail::guarded(err, [&] {
                Sink head_sink(head);
                Sink body_sink(body);
                detail::self<Impl>(inst)->encode_parts(detail::view(req), head_sink, body_sink);
            });
        });
    } else {
        return static_cast<Slot>(nullptr);
    }
}

/// The encode_split slot for Impl: its trampoline, or NULL when Impl does not define it.
template <class Impl>
constexpr auto encode_split_slot() noexcept {
    using Slot = decltype(nucleo_provider_factory::encode_split);
    if constexpr (kEncodesSplit<Impl>) {
        return static_cast<Slot>([](nucleo_instance* inst, nucleo_string_view req,
                                    const nucleo_sink* head, const nucleo_sink* open,
                                    const nucleo_sink* turns, const nucleo_sink* close,
                                    nucleo_error* err) noexcept -> int32_t {
            return detail::guarded(err, [&] {
                Sink head_sink(head);
                Sink open_sink(open);
                Sink turns_sink(turns);
                Sink close_sink(close);
                detail::self<Impl>(inst)->encode_split(detail::view(req), head_sink, open_sink,
                                                       turns_sink, close_sink);
            });
        });
    } else {
        return static_cast<Slot>(nullptr);
    }
}

/// The "nucleo.provider/1" factory for Impl (derives from Provider).
template <class Impl>
FactoryRef provider_factory() noexcept {
    using L = detail::Lifecycle<Impl, Provider>;
    static const nucleo_provider_factory table = {
        sizeof(nucleo_provider_factory),
        &L::create,
        &L::destroy,
        [](nucleo_instance* inst, const nucleo_sink* out, nucleo_error* err) noexcept -> int32_t {
            return detail::guarded(err, [&] {
                Sink sink(out);
                detail::self<Impl>(inst)->capabilities(sink);
            });
        },
        [](nucleo_instance* inst, nucleo_string_view req, const nucleo_sink* out,
           nucleo_error* err) noexcept -> int32_t {
            return detail::guarded(err, [&] {
                Sink sink(out);
                detail::self<Impl>(inst)->encode(detail::view(req), sink);
            });
        },
        [](nucleo_instance* inst, int32_t http_status, nucleo_string_view headers,
           nucleo_string_view body, const nucleo_sink* out, nucleo_error* err) noexcept -> int32_t {
            return detail::guarded(err, [&] {
                Sink sink(out);
                detail::self<Impl>(inst)->decode(http_status, detail::view(headers),
                                                 detail::view(body), sink);
            });
        },
        [](nucleo_instance* inst, nucleo_string_view name, nucleo_string_view data,
           const nucleo_sink* out, nucleo_error* err) noexcept -> int32_t {
            return detail::guarded(err, [&] {
                Sink sink(out);
                detail::self<Impl>(inst)->decode_event(detail::view(name), detail::view(data), sink);
            });
        },
        encode_parts_slot<Impl>(),
        encode_split_slot<Impl>()};
    return {NUCLEO_FACTORY_PROVIDER, &table, options_schema_of<Impl>()};
}

/// True when Impl defines session_apply (ABI 1.5) as described in Store.
template <class Impl>
inline constexpr bool kAppliesSessionDelta =
    requires(Impl& impl, std::string_view sv, int64_t ttl) { impl.session_apply(sv, sv, sv, ttl); };

/// The session_apply slot for Impl: its trampoline, or NULL when Impl does not define it.
template <class Impl>
constexpr auto session_apply_slot() noexcept {
    using Slot = decltype(nucleo_store_factory::session_apply);
    if constexpr (kAppliesSessionDelta<Impl>) {
        return static_cast<Slot>([](nucleo_instance* inst, nucleo_string_view who,
                                    nucleo_string_view id, nucleo_string_view req, int64_t ttl_ms,
                                    nucleo_error* err) noexcept -> int32_t {
            return detail::guarded(err, [&] {
                detail::self<Impl>(inst)->session_apply(detail::view(who), detail::view(id),
                                                        detail::view(req), ttl_ms);
            });
        });
    } else {
        return static_cast<Slot>(nullptr);
    }
}

/// True when Impl defines latest_version (ABI 1.7) as described in Store.
template <class Impl>
inline constexpr bool kAnswersLatestVersion = requires(Impl& impl, std::string_view sv, Sink& out) {
    impl.latest_version(sv, sv, out);
};

/// The latest_version slot for Impl: its trampoline, or NULL when Impl does not define it.
template <class Impl>
constexpr auto latest_version_slot() noexcept {
    using Slot = decltype(nucleo_store_factory::latest_version);
    if constexpr (kAnswersLatestVersion<Impl>) {
        return static_cast<Slot>([](nucleo_instance* inst, nucleo_string_view who,
                                    nucleo_string_view id, const nucleo_sink* out,
                                    nucleo_error* err) noexcept -> int32_t {
            return detail::guarded(err, [&] {
                Sink s(out);
                detail::self<Impl>(inst)->latest_version(detail::view(who), detail::view(id), s);
            });
        });
    } else {
        return static_cast<Slot>(nullptr);
    }
}

/// The "nucleo.store/1" factory for Impl (derives from Store).
template <class Impl>
FactoryRef store_factory() noexcept {
    using L = detail::Lifecycle<Impl, Store>;
    using detail::guarded;
    using detail::self;
    using detail::view;
    using SV = nucleo_string_view;
    using I = nucleo_instance;
    using E = nucleo_error;
    using O = const nucleo_sink*;
    static const nucleo_store_factory table = {
        sizeof(nucleo_store_factory),
        &L::create,
        &L::destroy,
        [](I* in, O out, E* err) noexcept -> int32_t {
            return guarded(err, [&] {
                Sink s(out);
                self<Impl>(in)->capabilities(s);
            });
        },
        [](I* in, SV who, SV id, SV req, O out, E* err) noexcept -> int32_t {
            return guarded(err, [&] {
                Sink s(out);
                self<Impl>(in)->create_conversation(view(who), view(id), view(req), s);
            });
        },
        [](I* in, SV who, SV id, SV req, O out, E* err) noexcept -> int32_t {
            return guarded(err, [&] {
                Sink s(out);
                self<Impl>(in)->update_conversation(view(who), view(id), view(req), s);
            });
        },
        [](I* in, SV who, SV id, O out, E* err) noexcept -> int32_t {
            return guarded(err, [&] {
                Sink s(out);
                self<Impl>(in)->load_conversation(view(who), view(id), s);
            });
        },
        [](I* in, SV who, SV id, E* err) noexcept -> int32_t {
            return guarded(err, [&] { self<Impl>(in)->delete_conversation(view(who), view(id)); });
        },
        [](I* in, SV who, SV query, O out, E* err) noexcept -> int32_t {
            return guarded(err, [&] {
                Sink s(out);
                self<Impl>(in)->list_conversations(view(who), view(query), s);
            });
        },
        [](I* in, SV who, SV id, O out, E* err) noexcept -> int32_t {
            return guarded(err, [&] {
                Sink s(out);
                self<Impl>(in)->version_history(view(who), view(id), s);
            });
        },
        [](I* in, SV who, SV id, SV version, O out, E* err) noexcept -> int32_t {
            return guarded(err, [&] {
                Sink s(out);
                self<Impl>(in)->load_version(view(who), view(id), view(version), s);
            });
        },
        [](I* in, SV who, SV id, O out, E* err) noexcept -> int32_t {
            return guarded(err, [&] {
                Sink s(out);
                self<Impl>(in)->session_get(view(who), view(id), s);
            });
        },
        [](I* in, SV who, SV id, SV snapshot, int64_t ttl_ms, E* err) noexcept -> int32_t {
            return guarded(err, [&] {
                self<Impl>(in)->session_put(view(who), view(id), view(snapshot), ttl_ms);
            });
        },
        [](I* in, SV who, SV id, E* err) noexcept -> int32_t {
            return guarded(err, [&] { self<Impl>(in)->session_invalidate(view(who), view(id)); });
        },
        [](I* in, SV who, SV id, SV req, O out, E* err) noexcept -> int32_t {
            return guarded(err, [&] {
                Sink s(out);
                self<Impl>(in)->lease(view(who), view(id), view(req), s);
            });
        },
        session_apply_slot<Impl>(),
        latest_version_slot<Impl>()};
    return {NUCLEO_FACTORY_STORE, &table, options_schema_of<Impl>()};
}

namespace detail {

/// The factories of this plugin, filled once by the generated entry function.
struct Registry {
    static constexpr int kMax = 8;
    FactoryRef refs[kMax] = {};
    int count = 0;
};
inline Registry& registry() noexcept {
    static Registry r;
    return r;
}

inline int32_t init(const nucleo_host* host, nucleo_error* err) noexcept {
    if (NUCLEO_HAS_FIELD(host, nucleo_host, abi_major) &&
        host->abi_major != NUCLEO_PLUGIN_ABI_MAJOR) {
        return nucleo_error_set(err, NUCLEO_ERR_PLUGIN, 0, "host speaks another ABI major");
    }
    Host::attach(host);
    return NUCLEO_OK;
}
inline void deinit() noexcept {
    Host::detach();
}

inline const void* get_factory(const char* id) noexcept {
    if (id == nullptr) return nullptr;
    const Registry& r = registry();
    for (int i = 0; i < r.count; ++i) {
        if (std::strcmp(r.refs[i].id, id) == 0) return r.refs[i].factory;
    }
    return nullptr;
}

inline const char* options_schema(const char* id) noexcept {
    if (id == nullptr) return nullptr;
    const Registry& r = registry();
    for (int i = 0; i < r.count; ++i) {
        if (std::strcmp(r.refs[i].id, id) == 0) return r.refs[i].options_schema;
    }
    return nullptr;
}

template <class... Refs>
const nucleo_plugin_entry* make_entry(const char* name, const char* version,
                                      const char* description, Refs... refs) noexcept {
    static_assert(sizeof...(Refs) <= Registry::kMax, "too many factories for one plugin");
    // Function-local statics: initialised once, thread-safely, on the first call.
    static const bool filled = [&] {
        Registry& r = registry();
        for (const FactoryRef& ref : {refs...}) r.refs[r.count++] = ref;
        return true;
    }();
    (void)filled;
    static const nucleo_plugin_entry entry = {sizeof(nucleo_plugin_entry),
                                              NUCLEO_PLUGIN_ABI_MAJOR,
                                              NUCLEO_PLUGIN_ABI_MINOR,
                                              name,
                                              version,
                                              description,
                                              &init,
                                              &deinit,
                                              &get_factory,
                                              &options_schema};
    return &entry;
}

}  // namespace detail
}  // namespace nucleo::plugin

/// Defines nucleo_plugin_entry_v1 for a C++ plugin: name (the <name> of nucleo-<name>.so),
/// version and description as string literals, then one FactoryRef per factory served
/// (nucleo::plugin::summarizer_factory<Impl>(), provider_factory<Impl>(), store_factory<Impl>()).
#define NUCLEO_PLUGIN_ENTRY(NAME, VERSION, DESCRIPTION, ...)                                       \
    NUCLEO_PLUGIN_EXTERN_C NUCLEO_PLUGIN_EXPORT const nucleo_plugin_entry* nucleo_plugin_entry_v1( \
        void) {                                                                                    \
        return ::nucleo::plugin::detail::make_entry(NAME, VERSION, DESCRIPTION, __VA_ARGS__);      \
    }
