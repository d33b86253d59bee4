// One structured record per model call and per HTTP attempt (obs.101-obs.103) and the progress
// of a waiting call (obs.104).
#include "llm/call_records.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <mutex>
#include <utility>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/cost.hpp"
#include "common/log_internal.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/version.hpp"

namespace nucleo {
namespace {

struct Observers {
    std::mutex mutex;
    CallRecordObserver records;
    CallProgressObserver progress;
};

Observers& observers() {
    static Observers o;
    return o;
}

thread_local internal::CallObservation* tl_current = nullptr;

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

/// The GenAI system name of a provider plugin (the semantic conventions' well-known values).
std::string genai_system(std::string_view plugin) {
    if (plugin == "bedrock" || plugin == "converse" || plugin == "bedrock-converse")
        return "aws.bedrock";
    return std::string(plugin);
}

/// One line of `text` (newlines as spaces), at most 300 bytes.
std::string one_line(std::string_view text) {
    std::string out(text.substr(0, 300));
    for (char& c : out)
        if (c == '\n' || c == '\r') c = ' ';
    return text.size() > 300 ? out + "..." : out;
}

/// Calls the observer installed in `slot` (copied under the lock, called outside it); a throw is
/// logged, never passed to the call.
template <typename Observer, typename Value>
void notify(Observer Observers::*slot, const Value& value) {
    Observer observer;
    {
        std::lock_guard<std::mutex> lock(observers().mutex);
        observer = observers().*slot;
    }
    if (!observer) return;
    try {
        observer(value);
    } catch (const std::exception& e) {
        NUCLEO_LOG_WARN("a call observer threw (ignored): {}", e.what());
    } catch (...) {
        NUCLEO_LOG_WARN("a call observer threw (ignored)");
    }
}

void publish(const CallRecord& record) {
    // obs.102: logged at info, then handed to the host's observer.
    if (internal::logger().should_log(spdlog::level::info))
        log::write_with_attributes(log::Level::kInfo, "nucleo", to_log_text(record),
                                   to_otel_attributes_json(record));
    notify(&Observers::records, record);
}

std::string seconds_text(std::chrono::milliseconds d) {
    char buf[32];
    if (d.count() < 10000 && d.count() % 1000 != 0) {
        std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(d.count()) / 1000.0);
    } else {
        std::snprintf(buf, sizeof buf, "%lld s", static_cast<long long>((d.count() + 999) / 1000));
    }
    return buf;
}

}  // namespace

std::string to_otel_attributes_json(const CallRecord& r) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    const auto str = [&](const char* key, std::string_view value) {
        w.Key(key);
        w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
    };
    const auto num = [&](const char* key, std::int64_t value) {
        w.Key(key);
        w.Int64(value);
    };
    w.StartObject();
    str("gen_ai.operation.name", "chat");
    str("gen_ai.provider.name", r.provider_system);
    str("gen_ai.request.model", r.wire_model);
    if (!r.response_model.empty()) str("gen_ai.response.model", r.response_model);
    if (!r.conversation_id.empty()) str("gen_ai.conversation.id", r.conversation_id);
    if (r.kind == CallRecord::Kind::kCall) {
        if (!r.stop_reason.empty()) {
            w.Key("gen_ai.response.finish_reasons");
            w.StartArray();
            w.String(r.stop_reason.data(), static_cast<rapidjson::SizeType>(r.stop_reason.size()));
            w.EndArray();
        }
        num("gen_ai.usage.input_tokens",
            r.input_tokens + r.cache_read_tokens + r.cache_write_tokens);
        num("gen_ai.usage.output_tokens", r.output_tokens);
        num("gen_ai.usage.cache_read.input_tokens", r.cache_read_tokens);
        num("gen_ai.usage.cache_creation.input_tokens", r.cache_write_tokens);
    }
    if (r.http_status != 0) num("http.response.status_code", r.http_status);
    if (r.status != "ok") str("error.type", r.error_type.empty() ? "error" : r.error_type);
    str("nucleo.record", r.kind == CallRecord::Kind::kCall ? "call" : "attempt");
    str("nucleo.provider.instance", r.provider);
    str("nucleo.model.id", r.model);
    str("nucleo.status", r.status);
    if (!r.error_message.empty()) str("nucleo.error.message", r.error_message);
    num(r.kind == CallRecord::Kind::kCall ? "nucleo.attempts" : "nucleo.attempt", r.attempt);
    num("nucleo.max_attempts", r.max_attempts);
    num("nucleo.latency_ms", r.latency.count());
    if (!r.request_id.empty()) str("nucleo.provider.request_id", r.request_id);
    if (r.kind == CallRecord::Kind::kCall) {
        w.Key("nucleo.cost.usd");
        w.Double(internal::rounded_usd(r.cost));  // obs.109
        if (!r.cache_miss_reason.empty()) {
            str("nucleo.cache.miss_reason", r.cache_miss_reason);
            if (r.cache_missed_input_tokens >= 0)
                num("nucleo.cache.missed_input_tokens", r.cache_missed_input_tokens);
        }
        if (!r.cache_plan_moved.empty()) str("nucleo.cache.plan_moved", r.cache_plan_moved);
        if (!r.thread.empty()) str("nucleo.thread", r.thread);  // wire.211
        if (r.provider_blocks_dropped > 0)
            num("nucleo.provider_blocks.dropped",
                static_cast<std::int64_t>(r.provider_blocks_dropped));
    }
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::string to_log_text(const CallRecord& r) {
    std::string line = r.kind == CallRecord::Kind::kCall ? "gen_ai call" : "gen_ai attempt";
    const auto add = [&](std::string_view key, const std::string& value) {
        line += ' ';
        line += key;
        line += '=';
        const bool quote = value.empty() || value.find_first_of(" \"=") != std::string::npos;
        line += quote ? "\"" + value + "\"" : value;
    };
    add("status", r.status);
    if (r.status != "ok") add("error.type", r.error_type);
    add("gen_ai.provider.name", r.provider_system);
    add("nucleo.provider.instance", r.provider);
    add("gen_ai.request.model", r.wire_model);
    if (!r.conversation_id.empty()) add("gen_ai.conversation.id", r.conversation_id);
    add(r.kind == CallRecord::Kind::kCall ? "attempts" : "attempt", std::to_string(r.attempt));
    if (r.http_status != 0) add("http.response.status_code", std::to_string(r.http_status));
    add("latency_ms", std::to_string(r.latency.count()));
    if (!r.request_id.empty()) add("request_id", r.request_id);
    if (r.kind == CallRecord::Kind::kCall) {
        if (!r.stop_reason.empty()) add("gen_ai.response.finish_reasons", r.stop_reason);
        add("gen_ai.usage.input_tokens",
            std::to_string(r.input_tokens + r.cache_read_tokens + r.cache_write_tokens));
        add("gen_ai.usage.output_tokens", std::to_string(r.output_tokens));
        add("cache_read", std::to_string(r.cache_read_tokens));
        add("cache_write", std::to_string(r.cache_write_tokens));
        char cost[32];
        std::snprintf(cost, sizeof cost, "%.6f", r.cost);
        add("cost_usd", cost);
        if (!r.cache_miss_reason.empty()) {
            add("cache_miss", r.cache_miss_reason);
            if (r.cache_missed_input_tokens >= 0)
                add("cache_missed_tokens", std::to_string(r.cache_missed_input_tokens));
        }
        if (!r.cache_plan_moved.empty()) add("plan_moved", r.cache_plan_moved);
        if (!r.thread.empty()) add("thread", r.thread);  // wire.211
        if (r.provider_blocks_dropped > 0)
            add("provider_blocks_dropped", std::to_string(r.provider_blocks_dropped));
    }
    if (!r.error_message.empty()) add("error", r.error_message);
    return line;
}

CallRecordObserver set_call_record_observer(CallRecordObserver observer) {
    std::lock_guard<std::mutex> lock(observers().mutex);
    return std::exchange(observers().records, std::move(observer));
}

CallProgressObserver set_call_progress_observer(CallProgressObserver observer) {
    std::lock_guard<std::mutex> lock(observers().mutex);
    return std::exchange(observers().progress, std::move(observer));
}

std::string describe(const CallProgress& p) {
    switch (p.kind) {
        case CallProgress::Kind::kConnecting:
            return "connecting to " + p.provider + " (" + p.model + ")" +
                   (p.attempt > 1 ? ", attempt " + std::to_string(p.attempt) + " of " +
                                        std::to_string(p.max_attempts)
                                  : "");
        case CallProgress::Kind::kRateLimitWait:
            return "rate limit of " + p.model + ": waiting " + seconds_text(p.wait);
        case CallProgress::Kind::kRetryWait: {
            std::string why;
            if (p.http_status == 429) {
                why = "rate limited (429)";
            } else if (p.http_status != 0) {
                why = "the provider answered " + std::to_string(p.http_status);
            } else {
                why = "no answer (" + p.error + ")";
            }
            return why + ": retry " + std::to_string(p.attempt) + " of " +
                   std::to_string(p.max_attempts) + " in " + seconds_text(p.wait);
        }
    }
    return "waiting";
}

std::string user_agent() {
    return std::string("nucleo/") + version();
}

namespace internal {

CallObservation::CallObservation(std::string provider, std::string plugin, const ModelSpec& model,
                                 std::string conversation_id, int max_attempts,
                                 const std::vector<CallAttempt>& billed)
    : billed_(billed),
      billed_before_(billed.size()),
      started_(std::chrono::steady_clock::now()),
      outer_(tl_current) {
    base_.provider = std::move(provider);
    base_.provider_system = genai_system(plugin);
    base_.model = model.id;
    base_.wire_model = model.wire_model.empty() ? model.id : model.wire_model;
    base_.conversation_id = std::move(conversation_id);
    base_.max_attempts = std::max(1, max_attempts);
    tl_current = this;
}

CallObservation::~CallObservation() {
    tl_current = outer_;
}

void CallObservation::emit_call(const std::string& status, std::string error_type,
                                std::string error_message, std::string_view response_model) {
    CallRecord r = base_;
    r.kind = CallRecord::Kind::kCall;
    r.status = status;
    r.error_type = std::move(error_type);
    r.error_message = std::move(error_message);
    r.response_model = std::string(response_model);
    r.http_status = last_status_;
    r.request_id = last_request_id_;
    r.attempt = std::max(1, attempts_);
    r.latency = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started_);
    if (billed_.size() > billed_before_) {
        const CallAttempt& a = billed_.back();
        r.stop_reason = a.stop_reason;
        r.input_tokens = a.usage.input_tokens;
        r.output_tokens = a.usage.output_tokens;
        r.cache_read_tokens = a.usage.cache_read_tokens;
        r.cache_write_tokens = a.usage.cache_write_tokens;
        r.cost = a.cost;
        if (status != "ok" && r.error_type.empty()) {
            if (a.status == CallStatus::kTruncated) r.error_type = "truncated";
            if (a.status == CallStatus::kContextWindowExceeded)
                r.error_type = "context_window_exceeded";
        }
    }
    publish(r);
}

void CallObservation::succeeded(std::string_view response_model, const CacheMiss& cache_miss,
                                std::size_t provider_blocks_dropped, std::string_view thread) {
    base_.thread = thread;
    base_.cache_miss_reason = cache_miss.reason;
    base_.cache_missed_input_tokens = cache_miss.missed_input_tokens;
    base_.cache_plan_moved = cache_miss.plan_moved;
    base_.provider_blocks_dropped = provider_blocks_dropped;
    emit_call("ok", "", "", response_model);
}

// A call refused before any request went out (a missing key, a cancelled rate-limit wait) gives
// no record: nothing reached the provider (obs.101).

void CallObservation::failed(const std::exception& e) {
    if (started_attempts_ == 0) return;
    std::string type = "exception";
    if (const auto* err = dynamic_cast<const Error*>(&e)) type = to_string(err->kind());
    if (billed_.size() > billed_before_) {
        const CallStatus s = billed_.back().status;
        if (s == CallStatus::kTruncated) type = "truncated";
        if (s == CallStatus::kContextWindowExceeded) type = "context_window_exceeded";
    }
    emit_call("error", std::move(type), one_line(e.what()), "");
}

void CallObservation::attempt_started(int attempt, int max_attempts) {
    ++started_attempts_;
    CallProgress p;
    p.kind = CallProgress::Kind::kConnecting;
    p.provider = base_.provider;
    p.model = base_.model;
    p.attempt = attempt;
    p.max_attempts = max_attempts;
    notify(&Observers::progress, p);
}

void CallObservation::attempt_ended(int attempt, int max_attempts, long status,
                                    const HttpHeaders& headers, std::chrono::milliseconds latency,
                                    std::string_view error) {
    attempts_ = attempt;
    last_status_ = status;
    last_request_id_ = provider_request_id(headers);
    CallRecord r = base_;
    r.kind = CallRecord::Kind::kAttempt;
    r.attempt = attempt;
    r.max_attempts = max_attempts;
    r.http_status = status;
    r.latency = latency;
    r.request_id = last_request_id_;
    if (!error.empty() || status == 0) {
        r.status = "error";
        r.error_type = "transport";
        r.error_message = one_line(error);
    } else if (status >= 400) {
        r.status = "error";
        r.error_type = std::to_string(status);
    }
    publish(r);
}

void CallObservation::waiting(CallProgress progress) {
    progress.provider = base_.provider;
    progress.model = base_.model;
    notify(&Observers::progress, progress);
}

void attempt_started(int attempt, int max_attempts) {
    if (tl_current != nullptr) tl_current->attempt_started(attempt, max_attempts);
}

void attempt_ended(int attempt, int max_attempts, long status, const HttpHeaders& headers,
                   std::chrono::milliseconds latency, std::string_view error) {
    if (tl_current != nullptr)
        tl_current->attempt_ended(attempt, max_attempts, status, headers, latency, error);
}

void retry_waiting(int next_attempt, int max_attempts, long status, std::string_view error,
                   std::chrono::milliseconds wait) {
    if (tl_current == nullptr) return;
    CallProgress p;
    p.kind = CallProgress::Kind::kRetryWait;
    p.attempt = next_attempt;
    p.max_attempts = max_attempts;
    p.http_status = status;
    p.error = std::string(error);
    p.wait = wait;
    tl_current->waiting(std::move(p));
}

void rate_limit_waiting(std::chrono::milliseconds wait) {
    if (tl_current == nullptr) return;
    CallProgress p;
    p.kind = CallProgress::Kind::kRateLimitWait;
    p.wait = wait;
    tl_current->waiting(std::move(p));
}

std::string provider_request_id(const HttpHeaders& headers) {
    for (const char* name : {"request-id", "x-request-id", "x-amzn-requestid"}) {
        for (const auto& [k, v] : headers)
            if (iequals(k, name)) return v;
    }
    return {};
}

}  // namespace internal
}  // namespace nucleo
