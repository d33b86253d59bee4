// otlp-export: every model call a host makes, as OpenTelemetry spans (obs.101-obs.103).
//
// The host installs one observer (nucleo::set_call_record_observer). Each HTTP attempt's record
// arrives first, then the call's; the call becomes a CLIENT span named `chat <model>` and each
// attempt a child span `attempt <k>`, all with the record's gen_ai.* attributes. A background
// thread posts them to the collector's OTLP/HTTP endpoint (`<collector>/v1/traces`, JSON), so
// the call never waits for the collector.
//
// usage: otlp-export --base-url URL [--api-key KEY] [--wire-model NAME]
//                    --collector URL [--header NAME:VALUE]... QUESTION
// Prints the answer and `exported N spans`. Exit status: 0 when the call answered and every
// batch was accepted, 1 when the call or an export failed, 2 on bad arguments.
#include <curl/curl.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "nucleo/errors.hpp"
#include "nucleo/observability.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/version.hpp"

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

std::string random_hex(std::size_t bytes) {
    static std::mt19937_64 rng{std::random_device{}()};
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    std::string out;
    const char* digits = "0123456789abcdef";
    for (std::size_t i = 0; i < bytes; ++i) {
        const auto b = static_cast<unsigned>(rng() & 0xFF);
        out += digits[b >> 4];
        out += digits[b & 0xF];
    }
    return out;
}

std::uint64_t unix_nanos(std::chrono::system_clock::time_point t) {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

/// One OTLP KeyValue per member of the record's attribute object (strings, integers as the
/// decimal strings OTLP/JSON wants, doubles, arrays of strings).
void write_attributes(Writer& w, const nucleo::CallRecord& record) {
    const std::string json = nucleo::to_otel_attributes_json(record);
    rapidjson::Document d;
    d.Parse(json.c_str());
    w.Key("attributes");
    w.StartArray();
    for (const auto& m : d.GetObject()) {
        w.StartObject();
        w.Key("key");
        w.String(m.name.GetString());
        w.Key("value");
        w.StartObject();
        if (m.value.IsString()) {
            w.Key("stringValue");
            w.String(m.value.GetString());
        } else if (m.value.IsInt64()) {
            w.Key("intValue");
            w.String(std::to_string(m.value.GetInt64()).c_str());
        } else if (m.value.IsNumber()) {
            w.Key("doubleValue");
            w.Double(m.value.GetDouble());
        } else if (m.value.IsArray()) {
            w.Key("arrayValue");
            w.StartObject();
            w.Key("values");
            w.StartArray();
            for (const auto& v : m.value.GetArray()) {
                w.StartObject();
                w.Key("stringValue");
                w.String(v.IsString() ? v.GetString() : "");
                w.EndObject();
            }
            w.EndArray();
            w.EndObject();
        }
        w.EndObject();
        w.EndObject();
    }
    w.EndArray();
}

void write_span(Writer& w, const nucleo::CallRecord& r, const std::string& trace_id,
                const std::string& span_id, const std::string& parent_id,
                std::chrono::system_clock::time_point ended) {
    const auto started = ended - r.latency;
    w.StartObject();
    w.Key("traceId");
    w.String(trace_id.c_str());
    w.Key("spanId");
    w.String(span_id.c_str());
    if (!parent_id.empty()) {
        w.Key("parentSpanId");
        w.String(parent_id.c_str());
    }
    const std::string name = r.kind == nucleo::CallRecord::Kind::kCall
                                 ? "chat " + r.wire_model
                                 : "attempt " + std::to_string(r.attempt);
    w.Key("name");
    w.String(name.c_str());
    w.Key("kind");
    w.Int(3);  // SPAN_KIND_CLIENT
    w.Key("startTimeUnixNano");
    w.String(std::to_string(unix_nanos(started)).c_str());
    w.Key("endTimeUnixNano");
    w.String(std::to_string(unix_nanos(ended)).c_str());
    write_attributes(w, r);
    w.Key("status");
    w.StartObject();
    w.Key("code");
    w.Int(r.status == "ok" ? 1 : 2);  // STATUS_CODE_OK, STATUS_CODE_ERROR
    if (r.status != "ok") {
        w.Key("message");
        w.String(r.error_message.c_str());
    }
    w.EndObject();
    w.EndObject();
}

/// Turns records into OTLP batches (one per call) and posts them from its own thread.
class OtlpExporter {
  public:
    explicit OtlpExporter(std::string collector) : url_(std::move(collector) + "/v1/traces") {
        worker_ = std::thread([this] { post_loop(); });
    }
    ~OtlpExporter() { shutdown(); }
    OtlpExporter(const OtlpExporter&) = delete;
    OtlpExporter& operator=(const OtlpExporter&) = delete;

    /// The observer's body: runs on the calling thread, only builds JSON and queues it.
    void record(const nucleo::CallRecord& r) {
        const auto now = std::chrono::system_clock::now();
        std::lock_guard<std::mutex> lock(mutex_);
        if (r.kind == nucleo::CallRecord::Kind::kAttempt) {
            attempts_.emplace_back(r, now);
            return;
        }
        const std::string trace_id = random_hex(16);
        const std::string call_span = random_hex(8);
        rapidjson::StringBuffer buf;
        Writer w(buf);
        w.StartObject();
        w.Key("resourceSpans");
        w.StartArray();
        w.StartObject();
        w.Key("resource");
        w.StartObject();
        w.Key("attributes");
        w.StartArray();
        w.StartObject();
        w.Key("key");
        w.String("service.name");
        w.Key("value");
        w.StartObject();
        w.Key("stringValue");
        w.String("otlp-export");
        w.EndObject();
        w.EndObject();
        w.EndArray();
        w.EndObject();
        w.Key("scopeSpans");
        w.StartArray();
        w.StartObject();
        w.Key("scope");
        w.StartObject();
        w.Key("name");
        w.String("nucleo");
        w.Key("version");
        w.String(nucleo::version());
        w.EndObject();
        w.Key("spans");
        w.StartArray();
        write_span(w, r, trace_id, call_span, "", now);
        for (const auto& [attempt, ended] : attempts_)
            write_span(w, attempt, trace_id, random_hex(8), call_span, ended);
        spans_ += 1 + attempts_.size();
        attempts_.clear();
        w.EndArray();
        w.EndObject();
        w.EndArray();
        w.EndObject();
        w.EndArray();
        w.EndObject();
        queue_.emplace_back(buf.GetString(), buf.GetSize());
        ready_.notify_one();
    }

    /// Posts what is queued and stops; true when the collector accepted every batch.
    bool shutdown() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
            ready_.notify_one();
        }
        if (worker_.joinable()) worker_.join();
        return failures_ == 0;
    }

    [[nodiscard]] std::size_t spans() const { return spans_; }

  private:
    void post_loop() {
        while (true) {
            std::string body;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
                if (queue_.empty()) return;
                body = std::move(queue_.front());
                queue_.pop_front();
            }
            if (!post(body)) ++failures_;
        }
    }

    bool post(const std::string& body) const {
        CURL* h = curl_easy_init();
        if (h == nullptr) return false;
        curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
        const std::string agent = nucleo::user_agent() + " otlp-export";
        curl_easy_setopt(h, CURLOPT_URL, url_.c_str());
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(h, CURLOPT_USERAGENT, agent.c_str());
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, +[](char*, size_t size, size_t n, void*) { return size * n; });
        const CURLcode code = curl_easy_perform(h);
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        curl_slist_free_all(headers);
        curl_easy_cleanup(h);
        if (code != CURLE_OK || status < 200 || status >= 300) {
            std::cerr << "otlp-export: " << url_ << ": "
                      << (code != CURLE_OK ? curl_easy_strerror(code) : "HTTP " + std::to_string(status))
                      << "\n";
            return false;
        }
        return true;
    }

    std::string url_;
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::string> queue_;
    std::vector<std::pair<nucleo::CallRecord, std::chrono::system_clock::time_point>> attempts_;
    std::size_t spans_ = 0;
    int failures_ = 0;
    bool stopping_ = false;
    std::thread worker_;
};

struct Options {
    std::string base_url, api_key, wire_model = "claude-sonnet-5-5", collector, question;
    nucleo::HttpHeaders headers;
};

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--base-url" && has_value) {
            o.base_url = argv[++i];
        } else if (a == "--api-key" && has_value) {
            o.api_key = argv[++i];
        } else if (a == "--wire-model" && has_value) {
            o.wire_model = argv[++i];
        } else if (a == "--collector" && has_value) {
            o.collector = argv[++i];
        } else if (a == "--header" && has_value) {
            const std::string h = argv[++i];
            const auto colon = h.find(':');
            if (colon == std::string::npos) {
                std::cerr << "otlp-export: --header " << h << ": expected NAME:VALUE\n";
                return false;
            }
            o.headers.emplace_back(h.substr(0, colon), h.substr(colon + 1));
        } else if (!a.starts_with("--") && o.question.empty()) {
            o.question = a;
        } else {
            std::cerr << "otlp-export: unexpected argument '" << a << "'\n";
            return false;
        }
    }
    if (o.base_url.empty() || o.collector.empty() || o.question.empty()) {
        std::cerr << "usage: otlp-export --base-url URL [--api-key KEY] [--wire-model NAME]\n"
                     "                   --collector URL [--header NAME:VALUE]... QUESTION\n";
        return false;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) return 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int status = 0;
    {
        OtlpExporter exporter(o.collector);
        nucleo::set_call_record_observer([&exporter](const nucleo::CallRecord& r) { exporter.record(r); });
        try {
            nucleo::ProviderConfig pc;
            pc.name = "anthropic";
            pc.plugin = "anthropic";
            pc.base_url = o.base_url;
            const char* env_key = std::getenv("ANTHROPIC_API_KEY");
            pc.credentials.api_key = !o.api_key.empty() ? o.api_key : env_key != nullptr ? env_key : "";
            nucleo::ProviderClient client(pc, nucleo::PluginLoader().load(pc.plugin).make_provider());

            nucleo::ModelSpec model;
            model.id = o.wire_model;
            model.provider = pc.name;
            model.wire_model = o.wire_model;
            model.max_context_tokens = 200000;
            model.max_output_tokens = 4096;
            model.output_budget = {{nucleo::OutputSize::kShort, 1024}};
            model.prices = {.input = 3.0, .output = 15.0, .cache_write = 3.75, .cache_read = 0.30};

            nucleo::ConversationContext conversation("otlp-export-conversation", "otlp-user");
            conversation.set_output(nucleo::OutputSize::kShort);
            conversation.set_depth(nucleo::Depth::kImmediate);
            conversation.add_message(nucleo::Message::outgoing_text(o.question));
            nucleo::CallOptions options;
            options.extra_headers = o.headers;
            const nucleo::LLMResponse r = client.call(conversation, model, options);
            for (const auto& block : r.message.blocks)
                if (const auto* t = block.get_if<nucleo::TextBlock>()) std::cout << "answer: " << t->text << "\n";
        } catch (const nucleo::Error& e) {
            std::cerr << "otlp-export: " << e.what() << "\n";
            status = 1;
        }
        nucleo::set_call_record_observer({});
        if (!exporter.shutdown()) status = 1;
        std::cout << "exported " << exporter.spans() << " spans\n";
    }
    curl_global_cleanup();
    return status;
}
