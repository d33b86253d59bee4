#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <thread>

#include "emulator.hpp"
#include "json.hpp"

namespace nucleo::emulator {
namespace {

/// Standard base64 (padding optional, whitespace not allowed); nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view in) {
    std::string out;
    std::uint32_t acc = 0;
    int bits = 0;
    bool padding = false;
    for (const char c : in) {
        int v = -1;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        if (c >= '0' && c <= '9') v = c - '0' + 52;
        if (c == '+') v = 62;
        if (c == '/') v = 63;
        if (c == '=') {
            padding = true;
            continue;
        }
        if (v < 0 || padding) return std::nullopt;
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xFF));
        }
    }
    if (bits >= 6) return std::nullopt;
    return out;
}

}  // namespace

std::string Request::header(std::string_view lower_name) const {
    const auto it = headers.find(std::string(lower_name));
    return it == headers.end() ? std::string() : it->second;
}

bool Request::has_header(std::string_view lower_name) const {
    return headers.count(std::string(lower_name)) != 0;
}

Response json_response(int status, std::string body) {
    Response r;
    r.status = status;
    r.body = std::move(body);
    return r;
}

Response error_response(ErrorClass cls, int status, std::string body) {
    Response r = json_response(status, std::move(body));
    if (cls == ErrorClass::kRateLimited) r.headers.emplace_back("retry-after", "1");
    return r;
}

std::string hex_id(std::uint64_t n, int width) {
    std::string out(static_cast<std::size_t>(width), '0');
    for (int i = width - 1; i >= 0 && n != 0; --i, n >>= 4) {
        out[static_cast<std::size_t>(i)] = "0123456789abcdef"[n & 0xf];
    }
    return out;
}

void record_cache(Stats& stats, const CacheUsage& usage) {
    if (usage.creation > 0) {
        stats.cache_writes++;
        stats.cache_write_tokens += usage.creation;
    }
    if (usage.read > 0) {
        stats.cache_reads++;
        stats.cache_read_tokens += usage.read;
    }
}

void Stats::reset() {
    for (auto* c : {&anthropic, &openai, &bedrock, &bedrock_stream, &count_tokens, &gemini,
                    &responses, &streams, &errors, &faults, &cache_writes, &cache_reads,
                    &cache_write_tokens, &cache_read_tokens, &request_bytes}) {
        c->store(0);
    }
}

Router::Router(Options options, ModelCatalog catalog)
    : anthropic_(make_anthropic()),
      openai_(make_openai()),
      bedrock_(make_bedrock(false)),
      bedrock_stream_(make_bedrock(true)),
      gemini_(make_gemini()),
      responses_(make_responses()) {
    ctx_.options = std::move(options);
    ctx_.catalog = std::move(catalog);
    ctx_.fingerprints.set_capacity(static_cast<std::size_t>(ctx_.options.diagnostics_capacity));
    ctx_.threads.configure(std::chrono::seconds(ctx_.options.thread_ttl_seconds),
                           static_cast<std::size_t>(ctx_.options.thread_capacity));
}

Response Router::handle(const Request& req) {
    if (req.method == "GET" && req.path == "/health")
        return json_response(200, R"({"status":"ok"})");
    if (req.method == "GET" && req.path == "/stats") return stats();
    if (req.method == "POST" && req.path == "/reset") {
        // Forget cached prefixes, fingerprints, threads, fail-first counts and counters: tests
        // start from a clean slate.
        ctx_.cache.clear();
        ctx_.fingerprints.clear();
        ctx_.threads.clear();
        ctx_.fail_first.clear();
        ctx_.stats.reset();
        return json_response(200, R"({"status":"reset"})");
    }
    if (req.method == "POST" && req.path == "/clock") return advance_clock(req);
    if (req.method == "POST") {
        if (req.path == "/v1/messages" || req.path == "/v1/messages/count_tokens") {
            (req.path == "/v1/messages" ? ctx_.stats.anthropic : ctx_.stats.count_tokens)++;
            if (req.path == "/v1/messages")
                ctx_.stats.request_bytes += static_cast<std::int64_t>(req.body.size());
            return provider_call(*anthropic_, req);
        }
        if (req.path == "/v1/chat/completions") {
            ctx_.stats.openai++;
            return provider_call(*openai_, req);
        }
        // responses.30: the Responses API.
        if (req.path == "/v1/responses") {
            ctx_.stats.responses++;
            return provider_call(*responses_, req);
        }
        // gemini.30: /v1beta/models/{model}:generateContent and :streamGenerateContent (also v1).
        for (const std::string_view prefix :
             {std::string_view("/v1beta/models/"), std::string_view("/v1/models/")}) {
            if (!req.path.starts_with(prefix)) continue;
            const std::string rest = req.path.substr(prefix.size());
            const auto colon = rest.rfind(':');
            if (colon == std::string::npos || colon == 0) break;
            const std::string op = rest.substr(colon + 1);
            if (op != "generateContent" && op != "streamGenerateContent") break;
            Request with_model = req;
            with_model.path_params = {rest.substr(0, colon), op};
            ctx_.stats.gemini++;
            return provider_call(*gemini_, with_model);
        }
        // /model/{modelId}/converse and /model/{modelId}/converse-stream
        constexpr std::string_view kModel = "/model/";
        if (req.path.starts_with(kModel)) {
            const std::string rest = req.path.substr(kModel.size());
            const auto slash = rest.rfind('/');
            if (slash != std::string::npos && slash > 0) {
                const std::string op = rest.substr(slash + 1);
                Request with_id = req;
                with_id.path_params = {rest.substr(0, slash)};
                if (op == "converse") {
                    ctx_.stats.bedrock++;
                    return provider_call(*bedrock_, with_id);
                }
                if (op == "converse-stream") {
                    ctx_.stats.bedrock_stream++;
                    return provider_call(*bedrock_stream_, with_id);
                }
            }
        }
    }
    return json_response(
        404, R"({"message":"nucleo-emulator: no route for )" + req.method + " " + req.path + "\"}");
}

/// caching.103, wire.203: `POST /clock {"advance_seconds": N}` moves the emulator's clock forward
/// by N seconds (a non-negative integer), so a test sees a cache entry's or a thread's TTL run out
/// without waiting.
Response Router::advance_clock(const Request& req) {
    const auto refuse = [](const std::string& why) {
        return json_response(
            400, R"({"message":)" + json::quote("nucleo-emulator: POST /clock: " + why) + "}");
    };
    rapidjson::Document doc;
    std::string parse_error;
    if (!json::parse(req.body, doc, parse_error)) return refuse(parse_error);
    const json::Value* by = json::member(doc, "advance_seconds");
    if (by == nullptr || !by->IsInt64() || by->GetInt64() < 0)
        return refuse("advance_seconds must be a non-negative integer");
    const auto offset = ctx_.cache.advance(std::chrono::seconds(by->GetInt64()));
    return json_response(200, R"({"offset_seconds":)" + std::to_string(offset.count()) + "}");
}

Response Router::provider_call(const Dialect& dialect, const Request& req) {
    // channel.104: every provider answer, error or not, carries its request id header.
    Response r = provider_answer(dialect, req);
    r.headers.push_back(dialect.request_id(next_request_id_++));
    return r;
}

Response Router::provider_answer(const Dialect& dialect, const Request& req) {
    if (auto refused = dialect.check_auth(req)) {
        ctx_.stats.errors++;
        return *refused;
    }
    std::string spec = req.header("x-emulator-fault");
    if (const auto q = req.query.find("fault"); q != req.query.end()) {
        spec += spec.empty() ? q->second : "," + q->second;
    }
    Faults faults;
    try {
        faults = Faults::parse(spec);
    } catch (const std::invalid_argument& e) {
        ctx_.stats.errors++;
        return dialect.error(ErrorClass::kInvalidRequest, e.what());
    }
    // A canned answer: the request is checked and served as any call (a refusal is returned as
    // it is), then the reply's body is replaced by the one the client sent, base64-encoded, so a
    // client can test how it reads answers the emulator never writes (an empty content, a
    // refusal, a context-window stop).
    if (req.has_header("x-emulator-reply") && canned_call(req)) {
        const auto canned = base64_decode(req.header("x-emulator-reply"));
        if (!canned) {
            ctx_.stats.errors++;
            return dialect.error(ErrorClass::kInvalidRequest,
                                 "x-emulator-reply: not a base64 body");
        }
        Response served = dialect.serve(req, faults, ctx_);
        if (served.status >= 400) {
            ctx_.stats.errors++;
            return served;
        }
        ctx_.stats.faults++;
        Response r = json_response(200, *canned);
        const std::string type = req.header("x-emulator-reply-type");
        if (!type.empty()) r.content_type = type;
        return r;
    }
    // retry-after=S: the 429 this request gets asks for S seconds instead of 1.
    const auto rate_limited = [&] {
        Response r = dialect.error(ErrorClass::kRateLimited, "");
        if (faults.retry_after_s >= 0) {
            for (auto& [name, value] : r.headers)
                if (name == "retry-after") value = std::to_string(faults.retry_after_s);
        }
        return r;
    };
    const int delay = ctx_.options.latency_ms + faults.delay_ms;
    if (delay > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    if (faults.any()) ctx_.stats.faults++;

    if (faults.fail_first > 0) {
        std::string identity = req.header("x-emulator-request-id");
        if (identity.empty()) {
            PrefixHasher h("fail-first");
            h.append(req.path);
            h.append(req.body);
            identity = "body:" + h.digest();
        }
        if (ctx_.fail_first.next(identity) <= faults.fail_first) {
            ctx_.stats.errors++;
            switch (faults.fail_status) {
                case 429:
                    return rate_limited();
                case 500:
                    return dialect.error(ErrorClass::kServer, "");
                case 529:
                    return dialect.error(ErrorClass::kOverloaded, "");
                default:
                    return dialect.error(dialect.transient_error(), "");
            }
        }
    }
    if (faults.rate_limited) return rate_limited();
    if (faults.overloaded) return dialect.error(ErrorClass::kOverloaded, "");
    if (faults.server_error) return dialect.error(ErrorClass::kServer, "");
    if (faults.malformed) {
        // A success status whose body is cut off mid-document: clients must not crash on it.
        return json_response(200, R"({"id":"emu_malformed","content":[{"type":"text","text":"cut)");
    }
    Response r = dialect.serve(req, faults, ctx_);
    if (r.status >= 400) ctx_.stats.errors++;
    if (r.streamed) ctx_.stats.streams++;
    return r;
}

bool Router::canned_call(const Request& req) {
    const std::string first = req.header("x-emulator-reply-first");
    if (first.empty()) return true;
    std::int64_t n = 0;
    try {
        n = std::stoll(first);
    } catch (const std::exception&) {
        n = 0;  // not a count: no call is canned
    }
    // Counted like fail-first, under its own name: the calls that carry the same
    // x-emulator-request-id (or, without it, the same path and body).
    std::string identity = req.header("x-emulator-request-id");
    if (identity.empty()) {
        PrefixHasher h("reply-first");
        h.append(req.path);
        h.append(req.body);
        identity = h.digest();
    }
    return ctx_.fail_first.next("reply:" + identity) <= n;
}

Response Router::stats() {
    rapidjson::StringBuffer buf;
    json::Writer w(buf);
    const Stats& s = ctx_.stats;
    const auto field = [&w](const char* name, std::int64_t v) {
        w.Key(name);
        w.Int64(v);
    };
    w.StartObject();
    w.Key("requests");
    w.StartObject();
    field("anthropic", s.anthropic);
    field("openai", s.openai);
    field("bedrock", s.bedrock);
    field("bedrock_stream", s.bedrock_stream);
    field("count_tokens", s.count_tokens);
    field("gemini", s.gemini);
    field("responses", s.responses);
    field("total", s.anthropic + s.openai + s.bedrock + s.bedrock_stream + s.count_tokens +
                       s.gemini + s.responses);
    w.EndObject();
    field("streams", s.streams);
    field("errors", s.errors);
    field("faults", s.faults);
    w.Key("cache");
    w.StartObject();
    field("writes", s.cache_writes);
    field("reads", s.cache_reads);
    field("write_tokens", s.cache_write_tokens);
    field("read_tokens", s.cache_read_tokens);
    field("entries", static_cast<std::int64_t>(ctx_.cache.size()));
    w.EndObject();
    // wire.205: what message threads save, and the threads themselves.
    field("request_bytes", s.request_bytes);
    const ThreadStore::Counts threads = ctx_.threads.counts(ctx_.cache.clock());
    w.Key("threads");
    w.StartObject();
    field("live", threads.live);
    field("created", threads.created);
    field("continued", threads.continued);
    w.EndObject();
    w.EndObject();
    return json_response(200, std::string(buf.GetString(), buf.GetSize()));
}

}  // namespace nucleo::emulator
