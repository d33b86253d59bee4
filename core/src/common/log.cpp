#include <atomic>
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

/// The attributes of the record being written on this thread (write_with_attributes).
thread_local std::string_view tl_attributes;

std::string json_quoted(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", u);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

/// Forwards to the host's sink when one is installed, else writes one line to stderr.
class HostSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
    void set(log::Sink sink) {
        std::lock_guard<std::mutex> lock(mutex_);
        sink_ = std::move(sink);
    }

    std::atomic<log::Format> log_format{log::Format::kText};

protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        std::string_view name(msg.logger_name.data(), msg.logger_name.size());
        std::string_view text(msg.payload.data(), msg.payload.size());
        if (sink_) {
            sink_(from_spdlog(msg.level), name, text);
            return;
        }
        const auto level_name = spdlog::level::to_string_view(msg.level);
        if (log_format.load() == log::Format::kJson) {
            // obs.106: one object per line; a record's attributes stand beside its message.
            std::string line = "{\"level\":" + json_quoted(std::string_view(level_name.data(), level_name.size())) +
                               ",\"logger\":" + json_quoted(name) + ",\"message\":" + json_quoted(text);
            if (tl_attributes.size() > 2 && tl_attributes.front() == '{') {
                line += ",";
                line.append(tl_attributes.substr(1));
            } else {
                line += "}";
            }
            std::fprintf(stderr, "%s\n", line.c_str());
            return;
        }
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
        // config.3: warn unless NUCLEO_LOG_LEVEL says otherwise, for a host as for the CLI: a
        // library must not write a line per model call to its host's stderr unasked.
        logger.set_level(spdlog::level::warn);
        // obs.108: an unknown name keeps warn (spdlog would read it as off, silencing the log);
        // Config::load and the CLI refuse it.
        if (const char* env = std::getenv("NUCLEO_LOG_LEVEL")) {
            if (const auto level = log::parse_level(env)) logger.set_level(to_spdlog(*level));
        }
        if (const char* env = std::getenv("NUCLEO_LOG_FORMAT")) {
            if (auto f = log::parse_format(env)) sink->log_format = *f;
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

std::optional<Level> parse_level(std::string_view name) {
    if (name == "trace") return Level::kTrace;
    if (name == "debug") return Level::kDebug;
    if (name == "info") return Level::kInfo;
    if (name == "warn" || name == "warning") return Level::kWarn;
    if (name == "error" || name == "err" || name == "critical") return Level::kError;
    if (name == "off") return Level::kOff;
    return std::nullopt;
}

std::string level_variable_problem() {
    const char* level = std::getenv("NUCLEO_LOG_LEVEL");
    if (level == nullptr || parse_level(level)) return "";
    return std::string("NUCLEO_LOG_LEVEL: unknown level '") + level +
           "' (expected trace, debug, info, warn, error, critical or off)";
}
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

void set_format(Format format) { state().sink->log_format = format; }
Format format() { return state().sink->log_format.load(); }

std::optional<Format> parse_format(std::string_view text) {
    if (text == "text") return Format::kText;
    if (text == "json") return Format::kJson;
    return std::nullopt;
}

void write_with_attributes(Level level, std::string_view logger_name, std::string_view message,
                           std::string_view attributes_json) {
    if (!state().logger.should_log(to_spdlog(level))) return;
    struct Scope {
        explicit Scope(std::string_view a) { tl_attributes = a; }
        ~Scope() { tl_attributes = {}; }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
    } scope(attributes_json);
    write(level, logger_name, message);
}

}  // namespace log
}  // namespace nucleo
