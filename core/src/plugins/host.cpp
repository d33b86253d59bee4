// The host side handed to plugins at init (plugin.h nucleo_host): extensions by id.
// abi.15: plugins log through "nucleo.host.log/1", never to stdout; the records land in
// nucleo::log under the logger "plugin:<name>".
#include <cstring>
#include <string_view>

#include "compaction/host_tokens_internal.hpp"
#include "compaction/model_call_internal.hpp"
#include "nucleo/log.hpp"
#include "plugins/library.hpp"

namespace nucleo::plugins_detail {
namespace {

log::Level to_level(int32_t level) noexcept {
    // An unknown level from a newer or careless plugin is filed, not dropped: clamp it.
    if (level <= NUCLEO_LOG_LEVEL_TRACE) return log::Level::kTrace;
    switch (level) {
        case NUCLEO_LOG_LEVEL_DEBUG:
            return log::Level::kDebug;
        case NUCLEO_LOG_LEVEL_INFO:
            return log::Level::kInfo;
        case NUCLEO_LOG_LEVEL_WARN:
            return log::Level::kWarn;
        default:
            return log::Level::kError;
    }
}

void host_log(void* host_ctx, int32_t level, nucleo_string_view message) {
    // Thread rule (plugin.h): any thread, concurrently; nucleo::log::write is thread-safe and
    // the Library is immutable after init. No exception may leave: this is a C slot.
    if (host_ctx == nullptr) return;
    const auto* library = static_cast<const Library*>(host_ctx);
    try {
        std::string_view text =
            message.data != nullptr ? std::string_view(message.data, message.size) : "";
        log::write(to_level(level), library->logger, text);
    } catch (...) {
        // Logging must never take the plugin down; a lost record is the lesser harm.
    }
}

const nucleo_host_log kLogExtension = {sizeof(nucleo_host_log), &host_log};

int32_t host_model_call(void* /*host_ctx*/, nucleo_string_view request, const nucleo_sink* out,
                        nucleo_error* err) {
    // Thread rule (plugin.h): any thread, concurrently. The service is the compaction concern's
    // (set_model_call_handler); this slot only crosses the boundary. No exception may leave.
    try {
        std::string answer;
        const std::string_view text =
            request.data != nullptr ? std::string_view(request.data, request.size) : "";
        const auto [status, message] = internal::call_model_handler(text, answer);
        if (status != NUCLEO_OK) return nucleo_error_set(err, status, 0, message.c_str());
        return nucleo_sink_write(out, answer.data(), answer.size());
    } catch (...) {
        return nucleo_error_set(err, NUCLEO_ERR_INTERNAL, 0, "model call: internal error");
    }
}

const nucleo_host_model_call kModelCallExtension = {sizeof(nucleo_host_model_call),
                                                    &host_model_call};

int32_t host_count_tokens(void* /*host_ctx*/, nucleo_string_view counter, nucleo_string_view text,
                          int64_t* tokens, nucleo_error* err) {
    // compaction.111: the counter a request named; thread rule (plugin.h): any thread. No
    // exception may leave (count_with_leased never throws).
    if (tokens == nullptr) {
        return nucleo_error_set(err, NUCLEO_ERR_INVALID_ARGUMENT, 0, "tokens: no out pointer");
    }
    const std::string_view id =
        counter.data != nullptr ? std::string_view(counter.data, counter.size) : "";
    const std::string_view body =
        text.data != nullptr ? std::string_view(text.data, text.size) : "";
    const auto n = internal::count_with_leased(id, body);
    if (!n) {
        return nucleo_error_set(err, NUCLEO_ERR_NOT_FOUND, 0,
                                "tokens: no counter by that name (the request is over)");
    }
    *tokens = *n;
    return NUCLEO_OK;
}

const nucleo_host_tokens kTokensExtension = {sizeof(nucleo_host_tokens), &host_count_tokens};

const void* get_extension(const nucleo_host* /*host*/, const char* id) {
    if (id == nullptr) return nullptr;
    if (std::strcmp(id, NUCLEO_EXT_HOST_LOG) == 0) return &kLogExtension;
    if (std::strcmp(id, NUCLEO_EXT_HOST_MODEL_CALL) == 0) return &kModelCallExtension;
    if (std::strcmp(id, NUCLEO_EXT_HOST_TOKENS) == 0) return &kTokensExtension;
    return nullptr;  // plugin.h: an unknown id answers NULL
}

}  // namespace

nucleo_host make_host(Library* library) noexcept {
    nucleo_host host{};
    host.struct_size = sizeof(nucleo_host);
    host.abi_major = NUCLEO_PLUGIN_ABI_MAJOR;
    host.abi_minor = NUCLEO_PLUGIN_ABI_MINOR;
    host.host_ctx = library;
    host.get_extension = &get_extension;
    return host;
}

std::recursive_mutex& lifecycle_mutex() noexcept {
    static std::recursive_mutex m;
    return m;
}

}  // namespace nucleo::plugins_detail
