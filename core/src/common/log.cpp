#include <cstdio>
#include <map>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>

#include "common/log_internal.hpp"

namespace nucleo {
namespace {

spdlog::level::level_enum to_spdlog(log::Level level) {
    switch (level) {
        case log::Level::kTrace: return spdlog::level::trace;
        case log::Level::kDebug: return spdlog::level::debug;
        case log::Level::kInfo: return spdlog::level::info;
        case log::Level::kWarn: return spdlog::level::warn;
        case log::Level::kError: return spdlog::level::err;
        case log::Level::kOff: return spdlog::level::off;
    }
    return spdlog::level::info;
}

log::Level from_spdlog(spdlog::level::level_enum level) {
    switch (level) {
        case spdlog::level::trace: return log::Level::kTrace;
        case spdlog::level::debug: return log::Level::kDebug;
        case spdlog::level::info: return log::Level::kInfo;
        case spdlog::level::warn: return log::Level::kWarn;
        case spdlog::level::err:
        case spdlog::level::critical: return log::Level::kError;
        default: return log::Level::kOff;
    }
}

/// Forwards to the host's sink when one is installed, else writes one line to stderr.
class HostSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
    void set(log::Sink sink) {
        std::lock_guard<std::mutex> lock(mutex_);
        sink_ = std::move(sink);
    }

protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        std::string_view name(msg.logger_name.data(), msg.logger_name.size());
        std::string_view text(msg.payload.data(), msg.payload.size());
        if (sink_) {
            sink_(from_spdlog(msg.level), name, text);
            return;
        }
        const auto level_name = spdlog::level::to_string_view(msg.level);
        if (name == "nucleo") {
            std::fprintf(stderr, "[%.*s] %.*s\n", static_cast<int>(level_name.size()), level_name.data(),
                         static_cast<int>(text.size()), text.data());
        } else {
            std::fprintf(stderr, "[%.*s] %.*s: %.*s\n", static_cast<int>(level_name.size()),
                         level_name.data(), static_cast<int>(name.size()), name.data(),
                         static_cast<int>(text.size()), text.data());
        }
    }
    void flush_() override { std::fflush(stderr); }

private:
    log::Sink sink_;
};

struct LogState {
    std::shared_ptr<HostSink> sink = std::make_shared<HostSink>();
    spdlog::logger logger{"nucleo", sink};
    /// Named loggers ("plugin:<name>") share the sink, so a host sink receives the name itself.
    std::mutex named_mutex;
    std::map<std::string, std::shared_ptr<spdlog::logger>, std::less<>> named;

    spdlog::logger& named_logger(std::string_view name) {
        std::lock_guard<std::mutex> lock(named_mutex);
        auto it = named.find(name);
        if (it == named.end()) {
            auto lg = std::make_shared<spdlog::logger>(std::string(name), sink);
            lg->set_level(spdlog::level::trace);  // the level check is the runtime logger's
            it = named.emplace(std::string(name), std::move(lg)).first;
        }
        return *it->second;
    }
    LogState() {
        logger.set_level(spdlog::level::info);
        if (const char* env = std::getenv("NUCLEO_LOG_LEVEL")) {
            logger.set_level(spdlog::level::from_str(env));
        }
    }
};

LogState& state() {
    static LogState s;
    return s;
}

}  // namespace

namespace internal {
spdlog::logger& logger() { return state().logger; }
}  // namespace internal

namespace log {

void set_level(Level level) { state().logger.set_level(to_spdlog(level)); }
Level level() { return from_spdlog(state().logger.level()); }
void set_sink(Sink sink) { state().sink->set(std::move(sink)); }

void write(Level level, std::string_view logger_name, std::string_view message) {
    auto& lg = state().logger;
    const auto lvl = to_spdlog(level);
    if (!lg.should_log(lvl)) return;
    if (logger_name.empty() || logger_name == "nucleo") {
        lg.log(lvl, "{}", message);
    } else {
        state().named_logger(logger_name).log(lvl, "{}", message);
    }
}

}  // namespace log
}  // namespace nucleo
