// The batteries of the conformance kit (abi.120-abi.127). Decisions where the ABI is silent:
//  - A plugin is loaded with dlopen(RTLD_NOW | RTLD_LOCAL) straight through its entry, not through
//    the host's loader, so the kit sees the raw slots; a failure before the first case is bad input.
//  - One instance per factory serves every case of the process (created by the first case that
//    needs it with the config "{}", or Options::store_config for a store); its create is a case.
//  - Cases of another wire family than the plugin's (declared, or --family) do not apply and are
//    not counted; a plugin without a family gets the generic cases only.
//  - A documented answer passes when decode's answer carries every member the corpus expects
//    (more members are allowed) or when decode fails with the expected kind; a hostile answer
//    passes on a valid normalized answer or NUCLEO_ERR_PROTOCOL, never on a crash.
#include "conformance/kit.hpp"

#include <dlfcn.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "conformance/state.hpp"
#include "conformance/support.hpp"
#include "nucleo/wire/contract.hpp"
#include "nucleo/plugin.h"

namespace nucleo::conformance {
namespace fs = std::filesystem;
using namespace detail;

namespace {

constexpr std::size_t kEntryV1Size = offsetof(nucleo_plugin_entry, get_factory) + sizeof(nucleo_plugin_entry::get_factory);
constexpr std::size_t kEntryMajorSize = offsetof(nucleo_plugin_entry, abi_major) + sizeof(nucleo_plugin_entry::abi_major);
constexpr std::size_t kProviderV1Size =
    offsetof(nucleo_provider_factory, decode) + sizeof(nucleo_provider_factory::decode);
constexpr std::size_t kStoreV1Size = offsetof(nucleo_store_factory, lease) + sizeof(nucleo_store_factory::lease);
constexpr std::size_t kSummarizerV1Size =
    offsetof(nucleo_summarizer_factory, summarize) + sizeof(nucleo_summarizer_factory::summarize);

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + p.string());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string plugin_name_of(const fs::path& file) {
    const std::string f = file.filename().string();
    if (f.size() <= 10 || f.rfind("nucleo-", 0) != 0 || f.compare(f.size() - 3, 3, ".so") != 0) return {};
    return f.substr(7, f.size() - 10);
}

void host_log(void*, int32_t, nucleo_string_view) {}
const nucleo_host_log kHostLog{sizeof(nucleo_host_log), &host_log};
const void* host_extension(const nucleo_host*, const char* id) {
    return id != nullptr && std::string_view(id) == NUCLEO_EXT_HOST_LOG ? &kHostLog : nullptr;
}

/// The status a documented error kind maps to (docs/provider-abi-documents.md).
int32_t status_of_kind(std::string_view kind) {
    static const std::map<std::string, int32_t, std::less<>> m{
        {"invalid_argument", NUCLEO_ERR_INVALID_ARGUMENT}, {"not_found", NUCLEO_ERR_NOT_FOUND},
        {"config", NUCLEO_ERR_CONFIG},                     {"rate_limited", NUCLEO_ERR_RATE_LIMITED},
        {"overloaded", NUCLEO_ERR_OVERLOADED},             {"protocol", NUCLEO_ERR_PROTOCOL},
        {"context_overflow", NUCLEO_ERR_CONTEXT_OVERFLOW}, {"uncorrectable", NUCLEO_ERR_UNCORRECTABLE}};
    const auto it = m.find(kind);
    return it == m.end() ? NUCLEO_ERR_PLUGIN : it->second;
}

/// The events of a server-sent-event body: (event name, data lines joined by "\n").
std::vector<std::pair<std::string, std::string>> sse_events(std::string_view body) {
    std::vector<std::pair<std::string, std::string>> events;
    std::string name, data;
    bool has_data = false;
    const auto flush = [&] {
        if (has_data) events.emplace_back(name, data);
        name.clear();
        data.clear();
        has_data = false;
    };
    std::size_t pos = 0;
    while (pos <= body.size()) {
        std::size_t nl = body.find('\n', pos);
        if (nl == std::string_view::npos) nl = body.size();
        std::string_view line = body.substr(pos, nl - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        pos = nl + 1;
        if (line.empty()) {
            flush();
            continue;
        }
        const auto value = [&](std::size_t n) {
            std::string_view v = line.substr(n);
            if (!v.empty() && v.front() == ' ') v.remove_prefix(1);
            return std::string(v);
        };
        if (line.rfind("event:", 0) == 0) name = value(6);
        else if (line.rfind("data:", 0) == 0) {
            data += (has_data ? "\n" : "") + value(5);
            has_data = true;
        }
    }
    flush();
    return events;
}

}  // namespace

fs::path default_corpus_dir(const fs::path& executable_dir) {
    const fs::path installed = (executable_dir / NUCLEO_CONFORMANCE_FROM_BINDIR).lexically_normal();
    if (fs::is_directory(installed)) return installed;
    const fs::path source = NUCLEO_CONFORMANCE_SOURCE_DIR;
    if (fs::is_directory(source)) return source;
    throw std::runtime_error("no conformance corpus: neither the installed " + installed.string() +
                             " nor the source tree's " + source.string() + " exists");
}

namespace {

// ---- the batteries --------------------------------------------------------------------------

void abi_cases(Battery::State& s) {
    s.cases.push_back({"abi", "entry", "", [&s](std::vector<Finding>&) {
        const nucleo_plugin_entry* e = s.entry;
        if (e->struct_size < kEntryV1Size)
            s.add("entry", "struct_size at least the ABI 1.0 size " + std::to_string(kEntryV1Size),
                  "struct_size " + std::to_string(e->struct_size));
        if (e->abi_minor > NUCLEO_PLUGIN_ABI_MINOR)
            s.add("entry", "abi_minor at most the kit's " + std::to_string(NUCLEO_PLUGIN_ABI_MINOR) +
                               " (the kit checks only the slots it knows)",
                  "abi_minor " + std::to_string(e->abi_minor));
        const std::string expected = plugin_name_of(s.options.plugin);
        if (!expected.empty() && expected != e->name)
            s.add("entry", "name '" + expected + "' as the file nucleo-" + expected + ".so says (abi.103)",
                  "name '" + std::string(e->name) + "'");
        if (e->version == nullptr || e->version[0] == '\0') s.add("entry", "a version string", "none");
        if (e->description == nullptr) s.add("entry", "a description string", "NULL");
        // Thread rule: any thread, the same pointer every time.
        auto fn = reinterpret_cast<nucleo_plugin_entry_fn>(::dlsym(s.handle, NUCLEO_PLUGIN_ENTRY_SYMBOL));
        const nucleo_plugin_entry* again = fn();
        const nucleo_plugin_entry* other = nullptr;
        std::thread([&] { other = fn(); }).join();
        if (again != e || other != e)
            s.add("entry", "nucleo_plugin_entry_v1() returns the same pointer on every call and thread",
                  "another pointer");
    }});
    s.cases.push_back({"abi", "exports", "", [&s](std::vector<Finding>&) {
        std::vector<std::string> names;
        try {
            names = exported_symbols(s.options.plugin.string());
        } catch (const std::exception& e) {
            s.add("exports", "a readable ELF symbol table", e.what());
            return;
        }
        std::string extra;
        for (const auto& n : names)
            if (n != NUCLEO_PLUGIN_ENTRY_SYMBOL) extra += (extra.empty() ? "" : ", ") + n;
        if (!extra.empty())
            s.add("exports", "exactly one exported symbol, " NUCLEO_PLUGIN_ENTRY_SYMBOL " (abi.1)",
                  "also " + excerpt(extra, 200));
    }});
    s.cases.push_back({"abi", "factories", "", [&s](std::vector<Finding>&) {
        for (const char* unknown : {"nucleo.unknown/1", "nucleo.provider/99", ""})
            if (s.entry->get_factory(unknown) != nullptr)
                s.add("get_factory", "NULL for the unknown id \"" + std::string(unknown) + "\" (abi.10)", "a factory");
        if (s.provider == nullptr && s.store == nullptr && s.summarizer == nullptr)
            s.add("get_factory", "at least one factory of " NUCLEO_FACTORY_PROVIDER ", " NUCLEO_FACTORY_STORE
                                 ", " NUCLEO_FACTORY_SUMMARIZER,
                  "none");
        const auto check = [&](const char* id, const void* f, std::size_t v1, bool slots) {
            if (f == nullptr) return;
            if (s.entry->get_factory(id) != f)
                s.add("get_factory", std::string("the same factory for ") + id + " every time", "another pointer");
            const auto size = *static_cast<const uint32_t*>(f);
            if (size < v1)
                s.add(id, "struct_size at least the ABI 1.0 size " + std::to_string(v1), "struct_size " + std::to_string(size));
            else if (!slots)
                s.add(id, "every ABI 1.0 slot of the factory set (create, destroy and the kind's calls)", "a NULL slot");
        };
        check(NUCLEO_FACTORY_PROVIDER, s.provider,
              kProviderV1Size, s.provider == nullptr || (s.provider->create && s.provider->destroy &&
                                                         s.provider->capabilities && s.provider->encode && s.provider->decode));
        check(NUCLEO_FACTORY_SUMMARIZER, s.summarizer, kSummarizerV1Size,
              s.summarizer == nullptr || (s.summarizer->create && s.summarizer->destroy && s.summarizer->summarize));
        check(NUCLEO_FACTORY_STORE, s.store, kStoreV1Size,
              s.store == nullptr || (s.store->create && s.store->destroy && s.store->capabilities));
    }});
    s.cases.push_back({"abi", "create_refuses_bad_config", "", [&s](std::vector<Finding>&) {
        const auto probe = [&](const char* id, int32_t (*create)(nucleo_string_view, nucleo_instance**, nucleo_error*),
                               void (*destroy)(nucleo_instance*)) {
            for (const char* config : {"[1,2]", "{\"schema_version\":"}) {
                nucleo_instance* inst = nullptr;
                nucleo_error err = fresh_error();
                const int32_t status = create(nucleo_sv(config), &inst, &err);
                if (s.checked(std::string(id) + ".create", status, err)) {
                    destroy(inst);
                } else if (inst != nullptr) {
                    s.add(std::string(id) + ".create", "*out left NULL on failure", "an instance");
                }
            }
        };
        if (s.provider) probe(NUCLEO_FACTORY_PROVIDER, s.provider->create, s.provider->destroy);
        if (s.summarizer) probe(NUCLEO_FACTORY_SUMMARIZER, s.summarizer->create, s.summarizer->destroy);
        if (s.store) probe(NUCLEO_FACTORY_STORE, s.store->create, s.store->destroy);
    }});
}

void capabilities_case(Battery::State& s) {
    s.cases.push_back({"capabilities", "document", "", [&s](std::vector<Finding>&) {
        nucleo_instance* inst = s.provider_instance();
        if (inst == nullptr) return;
        Battery::State::Result r;
        r.err = fresh_error();
        {
            Sink sink(r.out, "capabilities");
            r.status = s.provider->capabilities(inst, sink.get(), &r.err);
        }
        if (!s.checked("capabilities", r.status, r.err)) {
            s.add("capabilities", "NUCLEO_OK", status_name(r.status) + ": " + error_text(r.err));
            return;
        }
        rapidjson::Document d;
        std::string why;
        if (!parse_json(r.out, d, why) || !d.IsObject()) {
            s.add("capabilities", "a JSON object", why.empty() ? excerpt(r.out) : why);
            return;
        }
        if (!d.HasMember("schema_version") || !d["schema_version"].IsInt() || d["schema_version"].GetInt() != 1)
            s.add("capabilities", "\"schema_version\": 1 (abi.14)", excerpt(r.out));
        if (d.HasMember("wire_family") &&
            (!d["wire_family"].IsString() ||
             contract::wire_family_from_name(d["wire_family"].GetString()) == contract::WireFamily::kUnknown))
            s.add("capabilities",
                  "\"wire_family\" one of anthropic-messages, openai-chat, bedrock-converse, "
                  "gemini-generate, openai-responses, or absent",
                  to_json(d["wire_family"]));
        if (d.HasMember("stream_framing") &&
            (!d["stream_framing"].IsString() || (std::string_view(d["stream_framing"].GetString()) != "sse" &&
                                                 std::string_view(d["stream_framing"].GetString()) != "aws-eventstream")))
            s.add("capabilities", "\"stream_framing\" sse or aws-eventstream", to_json(d["stream_framing"]));
    }});
}

void encode_cases(Battery::State& s) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(s.options.corpus / "encode"))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
        s.cases.push_back(
            {"encode", file.stem().string(), "",
             [&s, file](std::vector<Finding>&) {
                 nucleo_instance* inst = s.provider_instance();
                 if (inst == nullptr) return;
                 const std::string prepared = read_file(file);
                 Battery::State::Result r;
                 r.err = fresh_error();
                 {
                     Sink sink(r.out, "encode");
                     r.status = s.provider->encode(
                         inst, nucleo_string_view{prepared.data(), prepared.size()}, sink.get(),
                         &r.err);
                 }
                 if (!s.checked("encode", r.status, r.err)) {
                     // A request the dialect cannot express is refused, naming what and where.
                     if (r.status != NUCLEO_ERR_INVALID_ARGUMENT)
                         s.add("encode",
                               "an HTTP request, or NUCLEO_ERR_INVALID_ARGUMENT for a request the "
                               "dialect cannot express",
                               status_name(r.status) + ": " + excerpt(error_text(r.err)));
                     return;
                 }
                 rapidjson::Document doc;
                 std::string why;
                 if (!parse_json(r.out, doc, why) || !doc.IsObject()) {
                     s.add("encode", "the HTTP request document (a JSON object)",
                           why.empty() ? excerpt(r.out) : why);
                     return;
                 }
                 if (!doc.HasMember("schema_version") || !doc["schema_version"].IsInt() ||
                     doc["schema_version"].GetInt() != 1)
                     s.add("encode", "\"schema_version\": 1", excerpt(r.out, 80));
                 if (!doc.HasMember("path") || !doc["path"].IsString()) {
                     s.add("encode", "a \"path\" string", excerpt(r.out, 80));
                     return;
                 }
                 std::vector<std::pair<std::string, std::string>> headers;
                 if (doc.HasMember("headers")) {
                     if (!doc["headers"].IsObject()) {
                         s.add("encode", "\"headers\" an object of strings",
                               to_json(doc["headers"]));
                         return;
                     }
                     for (const auto& m : doc["headers"].GetObject()) {
                         if (!m.value.IsString()) {
                             s.add("encode", "\"headers\" an object of strings",
                                   std::string("header ") + m.name.GetString() + " is " +
                                       to_json(m.value));
                             return;
                         }
                         headers.emplace_back(m.name.GetString(), m.value.GetString());
                     }
                 }
                 std::string body;
                 if (doc.HasMember("body"))
                     body = doc["body"].IsString() ? doc["body"].GetString() : to_json(doc["body"]);
                 // The call plan the core would have made for this request.
                 rapidjson::Document req;
                 parse_json(prepared, req, why);
                 contract::CallPlan plan;
                 if (req.HasMember("max_tokens") && req["max_tokens"].IsInt64())
                     plan.max_tokens = req["max_tokens"].GetInt64();
                 const auto& p = req["prepared"];
                 if (p.HasMember("cache_plan") && p["cache_plan"].IsObject()) {
                     const auto& cp = p["cache_plan"];
                     plan.breakpoints =
                         (cp.HasMember("system_block") && cp["system_block"].IsUint() ? 1U : 0U) +
                         (cp.HasMember("turn_anchors") && cp["turn_anchors"].IsArray()
                              ? cp["turn_anchors"].Size()
                              : 0U) +
                         (cp.HasMember("automatic") && cp["automatic"].IsTrue() ? 1U : 0U);
                 }
                 if (p.HasMember("system_blocks") && p["system_blocks"].IsArray())
                     for (const auto& b : p["system_blocks"].GetArray())
                         if (b.IsObject() && b.HasMember("type") &&
                             std::string_view(b["type"].GetString()) == "text" &&
                             b.HasMember("text") && b["text"].IsString())
                             plan.system_texts.emplace_back(b["text"].GetString());
                 if (!s.options.save_requests.empty()) {
                     std::ofstream saved(s.options.save_requests / (file.stem().string() + ".json"),
                                         std::ios::binary);
                     saved << body;
                 }
                 const std::string method = doc.HasMember("method") && doc["method"].IsString()
                                                ? doc["method"].GetString()
                                                : "POST";
                 contract::OutgoingRequest out;
                 out.method = method;
                 out.path = doc["path"].GetString();
                 out.headers = &headers;
                 out.body = body;
                 const auto family = contract::wire_family_from_name(s.wire_family());
                 if (auto v = contract::audit_request(family, out, plan))
                     s.add("encode",
                           family == contract::WireFamily::kUnknown
                               ? std::string(
                                     "a request keeping the generic rules (wire.150-wire.153)")
                               : "a request keeping the rule book of " +
                                     std::string(contract::wire_family_name(family)) +
                                     " (wire.101-wire.163)",
                           v->line());
                 if (!s.has_encode_parts()) return;
                 // abi.106: encode_parts writes the same request, its body byte for byte as sent.
                 Battery::State::Result head;
                 std::string parts_body;
                 head.err = fresh_error();
                 {
                     Sink hs(head.out, "encode_parts head");
                     Sink bs(parts_body, "encode_parts body");
                     head.status = s.provider->encode_parts(
                         inst, nucleo_string_view{prepared.data(), prepared.size()}, hs.get(),
                         bs.get(), &head.err);
                 }
                 if (!s.checked("encode_parts", head.status, head.err)) {
                     s.add("encode_parts", "the request encode gave",
                           status_name(head.status) + ": " + excerpt(error_text(head.err)));
                     return;
                 }
                 rapidjson::Document a, b;
                 if (!parse_json(parts_body, a, why)) {
                     if (parts_body != body)
                         s.add("encode_parts", "the body encode gave", excerpt(parts_body));
                     return;
                 }
                 parse_json(body, b, why);
                 if (!(a == b))
                     s.add("encode_parts", "the body encode gave (abi.106)", excerpt(parts_body));
                 if (!s.has_encode_split()) return;
                 // abi.108: encode_split of the whole request cuts encode_parts' body in three,
                 // open + turns + close byte for byte, under the same head.
                 Battery::State::Result split;
                 std::string open, turns, close;
                 split.err = fresh_error();
                 {
                     Sink hs(split.out, "encode_split head");
                     Sink os(open, "encode_split open");
                     Sink ts(turns, "encode_split turns");
                     Sink cs(close, "encode_split close");
                     split.status = s.provider->encode_split(
                         inst, nucleo_string_view{prepared.data(), prepared.size()}, hs.get(),
                         os.get(), ts.get(), cs.get(), &split.err);
                 }
                 if (!s.checked("encode_split", split.status, split.err)) {
                     s.add("encode_split", "the request encode_parts gave",
                           status_name(split.status) + ": " + excerpt(error_text(split.err)));
                     return;
                 }
                 if (split.out != head.out)
                     s.add("encode_split", "the head encode_parts gave (abi.108)",
                           excerpt(split.out));
                 if (open + turns + close != parts_body)
                     s.add("encode_split",
                           "open + turns + close equal to the body encode_parts gave (abi.108)",
                           excerpt(open + "|" + turns + "|" + close));
             },
             "encode/" + file.filename().string()});
    }
    // Thread rule and purity (plugin.h): encode is callable concurrently on one instance and
    // keeps no state between calls, so 4 threads encoding one request agree with a lone call.
    if (!files.empty()) {
        const fs::path file = files.front();
        s.cases.push_back({"encode", "concurrent_calls_agree", "", [&s, file](std::vector<Finding>&) {
            nucleo_instance* inst = s.provider_instance();
            if (inst == nullptr) return;
            const std::string prepared = read_file(file);
            const auto once = [&]() {
                Battery::State::Result r;
                r.err = fresh_error();
                Sink sink(r.out, "encode");
                r.status = s.provider->encode(inst, nucleo_string_view{prepared.data(), prepared.size()}, sink.get(), &r.err);
                return r;
            };
            const Battery::State::Result first = once();
            constexpr int kThreads = 4;
            constexpr int kCalls = 25;
            std::vector<std::string> differing(kThreads);
            std::vector<std::thread> threads;
            for (int t = 0; t < kThreads; ++t) {
                threads.emplace_back([&, t] {
                    for (int i = 0; i < kCalls && differing[t].empty(); ++i) {
                        const auto r = once();
                        if (r.status != first.status || r.out != first.out)
                            differing[t] = r.status != first.status ? status_name(r.status) : excerpt(r.out, 120);
                    }
                });
            }
            for (auto& t : threads) t.join();
            for (const std::string& d : differing) {
                if (d.empty()) continue;
                s.add("encode", "the same request for the same input from every thread and call (" +
                                    file.stem().string() + ": " + excerpt(first.out, 120) + ")",
                      d);
                break;
            }
        }});
    }
    for (const auto& [name, input] : std::vector<std::pair<std::string, std::string>>{
             {"refuses_not_json", "this is not JSON"}, {"refuses_an_array", "[1,2,3]"}, {"refuses_no_prepared", "{\"schema_version\":1}"}}) {
        s.cases.push_back({"encode", name, "", [&s, input = input](std::vector<Finding>&) {
            nucleo_instance* inst = s.provider_instance();
            if (inst == nullptr) return;
            Battery::State::Result r;
            r.err = fresh_error();
            {
                Sink sink(r.out, "encode");
                r.status = s.provider->encode(inst, nucleo_string_view{input.data(), input.size()}, sink.get(), &r.err);
            }
            if (s.checked("encode", r.status, r.err))
                s.add("encode", "NUCLEO_ERR_INVALID_ARGUMENT for the input " + excerpt(input, 40), "NUCLEO_OK");
            else if (r.status != NUCLEO_ERR_INVALID_ARGUMENT)
                s.add("encode", "NUCLEO_ERR_INVALID_ARGUMENT for the input " + excerpt(input, 40),
                      status_name(r.status) + ": " + excerpt(error_text(r.err)));
        }});
    }
}

void decode_generic_cases(Battery::State& s) {
    const std::string error_body = R"({"error":{"type":"error","message":"refused by the kit"}})";
    struct Mapping {
        int32_t http;
        std::vector<int32_t> statuses;
    };
    for (const Mapping& m : std::vector<Mapping>{{429, {NUCLEO_ERR_RATE_LIMITED}},
                                                 {500, {NUCLEO_ERR_OVERLOADED}},
                                                 {503, {NUCLEO_ERR_OVERLOADED}},
                                                 {529, {NUCLEO_ERR_OVERLOADED}},
                                                 {401, {NUCLEO_ERR_CONFIG}},
                                                 {403, {NUCLEO_ERR_CONFIG}},
                                                 {404, {NUCLEO_ERR_NOT_FOUND}},
                                                 {400, {NUCLEO_ERR_INVALID_ARGUMENT, NUCLEO_ERR_CONTEXT_OVERFLOW}}}) {
        s.cases.push_back({"decode", "http_" + std::to_string(m.http), "", [&s, m, error_body](std::vector<Finding>&) {
            if (s.provider_instance() == nullptr) return;
            const auto r = s.decode(m.http, "{\"content-type\":\"application/json\"}", error_body);
            std::string expected;
            for (int32_t st : m.statuses) expected += (expected.empty() ? "" : " or ") + status_name(st);
            expected += " with err.http_status " + std::to_string(m.http);
            if (s.checked("decode", r.status, r.err)) {
                s.add("decode", expected, "NUCLEO_OK: " + excerpt(r.out));
                return;
            }
            if (std::find(m.statuses.begin(), m.statuses.end(), r.status) == m.statuses.end() || r.err.http_status != m.http)
                s.add("decode", expected,
                      status_name(r.status) + " with err.http_status " + std::to_string(r.err.http_status));
        }});
    }
    struct Hostile {
        std::string name;
        std::string body;
        bool must_fail;
    };
    std::vector<Hostile> hostile{
        {"empty_body", "", true},
        {"not_json", "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", true},
        {"cut_off", "{\"id\":\"msg_1\",\"content\":[{\"type\":\"text\",\"text\":\"Hel", true},
        {"deep_array_nesting", std::string(200000, '['), true},
        {"deep_object_nesting", [] {
             std::string b;
             for (int i = 0; i < 100000; ++i) b += "{\"a\":";
             return b;
         }(), true},
        {"invalid_utf8", "{\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe\xc3\"}],\"choices\":[],\"output\":{}}", false},
        {"wrong_types", "{\"content\":5,\"choices\":\"x\",\"output\":[],\"usage\":\"12\",\"stop_reason\":7,\"stopReason\":7}", false},
        {"negative_counts", "{\"usage\":{\"input_tokens\":-5,\"output_tokens\":-1,\"prompt_tokens\":-5,\"completion_tokens\":-1,"
                            "\"inputTokens\":-5,\"outputTokens\":-1}}", false},
        {"unknown_members", "{\"kit\":\"an object of members no wire has\"}", false},
    };
    for (const Hostile& h : hostile) {
        s.cases.push_back({"decode", "hostile_" + h.name, "", [&s, h](std::vector<Finding>&) {
            if (s.provider_instance() == nullptr) return;
            const auto r = s.decode(200, "{\"content-type\":\"application/json\"}", h.body);
            if (h.must_fail && r.status == NUCLEO_OK) {
                s.add("decode", "NUCLEO_ERR_PROTOCOL for a 2xx body that is no answer", "NUCLEO_OK: " + excerpt(r.out));
                return;
            }
            s.answer_or("decode", r, {NUCLEO_ERR_PROTOCOL}, "a normalized answer or NUCLEO_ERR_PROTOCOL");
        }});
    }
}

/// decode_event over every event, whole and cut at every byte: nothing, an error, or valid
/// deltas, and the text deltas of the whole events add up to `answer_text`.
void check_events(Battery::State& s, const std::vector<std::pair<std::string, std::string>>& events,
                  const std::string& answer_text) {
    std::string streamed_text;
    for (const auto& [event, data] : events) {
        for (std::size_t k = 0; k <= data.size() && s.findings->empty(); ++k) {
            const auto r = s.decode_event(event, std::string_view(data).substr(0, k));
            if (!s.checked("decode_event", r.status, r.err) || r.out.empty()) continue;
            rapidjson::Document d;
            std::string why;
            if (!parse_json(r.out, d, why)) {
                s.add("decode_event", "a deltas document or nothing", "output that is not JSON (" + why + ")");
            } else if (auto p = deltas_problem(d); !p.empty()) {
                s.add("decode_event", "deltas as plugin.h lists them", p);
            } else if (k == data.size() && d.HasMember("deltas")) {
                for (const auto& delta : d["deltas"].GetArray())
                    if (std::string_view(delta["type"].GetString()) == "text") streamed_text += delta["text"].GetString();
            }
        }
    }
    if (!s.findings->empty()) return;
    if (streamed_text != answer_text)
        s.add("decode_event", "text deltas that add up to the answer's text \"" + excerpt(answer_text, 60) + "\"",
              "\"" + excerpt(streamed_text, 60) + "\"");
}

/// Hostile events for decode_event, whatever the family: never a crash; nothing, an error, or
/// valid deltas.
void decode_event_hostile_cases(Battery::State& s) {
    s.cases.push_back({"decode_event", "hostile_events", "", [&s](std::vector<Finding>&) {
        if (s.provider_instance() == nullptr || !s.has_decode_event()) return;
        const std::vector<std::pair<std::string, std::string>> events{
            {"message_start", std::string(100000, '[')},
            {"content_block_delta", "{\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"text_delta\",\"text\":5}}"},
            {"content_block_start", "{\"type\":\"content_block_start\",\"index\":\"0\",\"content_block\":[]}"},
            {"message_delta", "{\"type\":\"message_delta\",\"usage\":{\"output_tokens\":-7}}"},
            {"", "{\"choices\":[{\"index\":-2,\"delta\":{\"content\":[1],\"tool_calls\":{}}}],\"usage\":\"x\"}"},
            {"contentBlockDelta", "{\"contentBlockIndex\":-3,\"delta\":{\"text\":7,\"toolUse\":[]}}"},
            {"metadata", "{\"usage\":{\"inputTokens\":-1,\"outputTokens\":\"2\"}}"},
            {"content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\xff\xfe\"}}"},
            {"", "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xc3\x28\"}}]}"},
            {"contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"\xe2\x82\"}}"},
            {"", ""},
        };
        for (const auto& [event, data] : events) {
            const auto r = s.decode_event(event, data);
            if (!s.checked("decode_event", r.status, r.err) || r.out.empty()) continue;
            rapidjson::Document d;
            std::string why;
            if (!parse_json(r.out, d, why)) {
                s.add("decode_event", "nothing, an error or valid deltas for the event " + excerpt(data, 60),
                      "output that is not JSON (" + why + ")");
            } else if (auto p = deltas_problem(d); !p.empty()) {
                s.add("decode_event", "nothing, an error or valid deltas for the event " + excerpt(data, 60), p);
            }
        }
    }});
}

/// The wire families whose documented answers the corpus holds (corpus/decode/FAMILY.json).
constexpr const char* kDocumentedFamilies[] = {
    "anthropic-messages", "openai-chat", "bedrock-converse", "gemini-generate", "openai-responses"};

/// The documented answers of `family` (corpus/decode/FAMILY.json), or null when it has none.
std::shared_ptr<rapidjson::Document> decode_corpus(const Battery::State& s, const char* family,
                                                   fs::path& file) {
    file = s.options.corpus / "decode" / (std::string(family) + ".json");
    if (!fs::exists(file)) return nullptr;
    auto corpus = std::make_shared<rapidjson::Document>();
    std::string why;
    if (!parse_json(read_file(file), *corpus, why) || !corpus->IsArray())
        throw std::runtime_error("the corpus file " + file.string() +
                                 " is not a JSON array: " + why);
    return corpus;
}

void decode_family_cases(Battery::State& s) {
    for (const char* family : kDocumentedFamilies) {
        fs::path file;
        const auto corpus = decode_corpus(s, family, file);
        if (!corpus) continue;
        for (rapidjson::SizeType i = 0; i < corpus->Size(); ++i) {
            const auto& c = (*corpus)[i];
            const std::string name = c["name"].GetString();
            // abi.131: a finding names the corpus file and entry it came from.
            const std::string source = "decode/" + file.filename().string() + " entry " +
                                       std::to_string(i) + " (" + name + ")";
            if (c.HasMember("events")) {
                // Events as the host frames them (any framing): decode_event only.
                s.cases.push_back(
                    {"decode_event", std::string(family) + "/" + name, family,
                     [&s, corpus, i](std::vector<Finding>&) {
                         const auto& c = (*corpus)[i];
                         if (s.provider_instance() == nullptr || !s.has_decode_event() ||
                             s.framing != c["framing"].GetString())
                             return;
                         std::vector<std::pair<std::string, std::string>> events;
                         for (const auto& e : c["events"].GetArray())
                             events.emplace_back(e["event"].GetString(), e["data"].GetString());
                         check_events(s, events, c["expect_text"].GetString());
                     },
                     source});
                continue;
            }
            const bool stream = c.HasMember("stream") && c["stream"].IsTrue();
            const bool expect = c.HasMember("expect");
            s.cases.push_back(
                {"decode", std::string(family) + "/" + name, family,
                 [&s, corpus, i](std::vector<Finding>&) {
                     if (s.provider_instance() == nullptr) return;
                     const auto& c = (*corpus)[i];
                     const std::string headers = to_json(c["headers"]);
                     const auto r = s.decode(c["status"].GetInt(), headers, c["body"].GetString());
                     if (c.HasMember("error")) {
                         const int32_t want = status_of_kind(c["error"]["kind"].GetString());
                         if (s.checked("decode", r.status, r.err)) {
                             s.add("decode", status_name(want), "NUCLEO_OK: " + excerpt(r.out));
                         } else if (r.status != want) {
                             s.add("decode", status_name(want),
                                   status_name(r.status) + ": " + excerpt(error_text(r.err)));
                         }
                         return;
                     }
                     const auto answer = s.answer_or("decode", r, {}, "the documented answer");
                     if (!answer) return;
                     if (auto d = subset_difference(c["expect"], *answer, ""); !d.empty())
                         s.add("decode", "the documented answer's normalized form", d);
                 },
                 source});
            if (!expect || c["status"].GetInt() / 100 != 2) continue;
            // Truncated at every byte: never a crash; a JSON answer cut short is a protocol error.
            s.cases.push_back(
                {"decode", std::string(family) + "/" + name + "/cut_at_every_byte", family,
                 [&s, corpus, i, stream](std::vector<Finding>&) {
                     if (s.provider_instance() == nullptr) return;
                     const auto& c = (*corpus)[i];
                     const std::string headers = to_json(c["headers"]);
                     const std::string_view body = c["body"].GetString();
                     for (std::size_t k = 0; k < body.size() && s.findings->empty(); ++k) {
                         const auto r = s.decode(200, headers, body.substr(0, k));
                         if (!stream && r.status == NUCLEO_OK) {
                             s.add("decode",
                                   "NUCLEO_ERR_PROTOCOL for the answer cut after " +
                                       std::to_string(k) + " bytes",
                                   "NUCLEO_OK: " + excerpt(r.out));
                             break;
                         }
                         s.answer_or("decode", r, {NUCLEO_ERR_PROTOCOL},
                                     "a normalized answer or NUCLEO_ERR_PROTOCOL for the stream "
                                     "cut after " +
                                         std::to_string(k) + " bytes");
                     }
                 },
                 source});
            if (!stream) continue;
            // decode_event over every event, whole and cut at every byte.
            s.cases.push_back({"decode_event", std::string(family) + "/" + name, family,
                               [&s, corpus, i](std::vector<Finding>&) {
                                   if (s.provider_instance() == nullptr || !s.has_decode_event() ||
                                       s.framing != "sse")
                                       return;
                                   const auto& c = (*corpus)[i];
                                   std::string answer_text;
                                   for (const auto& b : c["expect"]["blocks"].GetArray())
                                       if (std::string_view(b["type"].GetString()) == "text")
                                           answer_text += b["text"].GetString();
                                   check_events(s, sse_events(c["body"].GetString()), answer_text);
                               },
                               source});
        }
    }
}

void familyless_decode_cases(Battery::State& s) {
    // abi.131: a plugin that declares no wire family gets no documented answer of its own, so
    // each family's documented 2xx answers stand in: it may refuse them (any error), but an answer
    // it gives must be normalized (stop reasons, non-negative counts, block shapes).
    for (const char* family : kDocumentedFamilies) {
        fs::path file;
        const auto corpus = decode_corpus(s, family, file);
        if (!corpus) continue;
        for (rapidjson::SizeType i = 0; i < corpus->Size(); ++i) {
            const auto& c = (*corpus)[i];
            if (c.HasMember("events") || !c.HasMember("expect") || c["status"].GetInt() / 100 != 2)
                continue;
            const std::string name = c["name"].GetString();
            Case one{"decode", "any_wire/" + std::string(family) + "/" + name, "",
                     [&s, corpus, i](std::vector<Finding>&) {
                         if (s.provider_instance() == nullptr) return;
                         const auto& c = (*corpus)[i];
                         const auto r = s.decode(c["status"].GetInt(), to_json(c["headers"]),
                                                 c["body"].GetString());
                         if (!s.checked("decode", r.status, r.err)) return;  // refused: its right
                         rapidjson::Document d;
                         std::string why;
                         if (!parse_json(r.out, d, why)) {
                             s.add("decode", "a normalized answer (JSON, valid UTF-8)",
                                   "output that is not JSON (" + why + "): " + excerpt(r.out));
                         } else if (auto p = answer_problem(d); !p.empty()) {
                             s.add("decode", "a normalized answer (answers.101, answers.106)", p);
                         }
                     },
                     "decode/" + file.filename().string() + " entry " + std::to_string(i) + " (" +
                         name + ")"};
            one.familyless_only = true;
            s.cases.push_back(std::move(one));
        }
    }
}

void summarizer_cases(Battery::State& s) {
    std::string text;
    for (int i = 1; i <= 40; ++i)
        text += "Step " + std::to_string(i) + ": the build of module m" + std::to_string(i) +
                " failed in src/m" + std::to_string(i) + ".cpp at line " + std::to_string(10 * i) +
                ", and we decided to retry it after fixing the include. ";
    const auto summarize = [&s](const std::string& request, Battery::State::Result& r) {
        nucleo_instance* inst = s.instance_of(s.summarizer, s.summarizer->create, "{}", "summarizer");
        if (inst == nullptr) return false;
        r.err = fresh_error();
        Sink sink(r.out, "summarize");
        r.status = s.summarizer->summarize(inst, nucleo_string_view{request.data(), request.size()}, sink.get(), &r.err);
        return true;
    };
    const auto size_contract = [&s, summarize, text](const std::string& request) {
        Battery::State::Result r;
        if (!summarize(request, r)) return;
        if (!s.checked("summarize", r.status, r.err)) {
            // A summarizer that needs the host's model-call service says so (the kit has none).
            if (r.status != NUCLEO_ERR_NOT_IMPLEMENTED)
                s.add("summarize", "a summary", status_name(r.status) + ": " + excerpt(error_text(r.err)));
            return;
        }
        rapidjson::Document d;
        std::string why;
        if (!parse_json(r.out, d, why) || !d.IsObject() || !d.HasMember("summary") || !d["summary"].IsString()) {
            s.add("summarize", "{\"schema_version\":1, \"summary\":\"...\", \"summary_tokens\":N}", why.empty() ? excerpt(r.out) : why);
            return;
        }
        if (!d.HasMember("summary_tokens") || !d["summary_tokens"].IsInt64() || d["summary_tokens"].GetInt64() < 0)
            s.add("summarize", "\"summary_tokens\" a non-negative integer", excerpt(r.out, 80));
        const std::size_t length = d["summary"].GetStringLength();
        if (length >= text.size())
            s.add("summarize", "a summary shorter than the " + std::to_string(text.size()) + "-byte text it replaces (compaction.104)",
                  std::to_string(length) + " bytes");
        else if (d.HasMember("summary_tokens") && d["summary_tokens"].IsInt64() && d["summary_tokens"].GetInt64() > 120)
            s.add("summarize", "\"summary_tokens\" within the target of 120 (compaction.42)",
                  std::to_string(d["summary_tokens"].GetInt64()));
    };
    const auto request_of = [text](bool segments) {
        rapidjson::Document d(rapidjson::kObjectType);
        auto& a = d.GetAllocator();
        d.AddMember("schema_version", 1, a);
        if (segments) {
            rapidjson::Value list(rapidjson::kArrayType);
            list.PushBack(rapidjson::Value(text.substr(0, text.size() / 2).c_str(), a), a);
            list.PushBack(rapidjson::Value(text.substr(text.size() / 2).c_str(), a), a);
            d.AddMember("segments", list, a);
        } else {
            d.AddMember("text", rapidjson::Value(text.c_str(), a), a);
        }
        d.AddMember("target_tokens", 120, a);
        return to_json(d);
    };
    s.cases.push_back({"summarize", "size_contract_text", "", [size_contract, request_of](std::vector<Finding>&) {
        size_contract(request_of(false));
    }});
    s.cases.push_back({"summarize", "size_contract_segments", "", [size_contract, request_of](std::vector<Finding>&) {
        size_contract(request_of(true));
    }});
    for (const auto& [name, input] : std::vector<std::pair<std::string, std::string>>{
             {"refuses_not_json", "not JSON"}, {"refuses_no_text", "{\"schema_version\":1,\"target_tokens\":10}"}}) {
        s.cases.push_back({"summarize", name, "", [&s, summarize, input = input](std::vector<Finding>&) {
            Battery::State::Result r;
            if (!summarize(input, r)) return;
            if (s.checked("summarize", r.status, r.err))
                s.add("summarize", "NUCLEO_ERR_INVALID_ARGUMENT for " + excerpt(input, 40), "NUCLEO_OK: " + excerpt(r.out));
            else if (r.status != NUCLEO_ERR_INVALID_ARGUMENT)
                s.add("summarize", "NUCLEO_ERR_INVALID_ARGUMENT for " + excerpt(input, 40),
                      status_name(r.status) + ": " + excerpt(error_text(r.err)));
        }});
    }
}

}  // namespace

/// abi.131: the create() config a store gets when the command names none: a database file in the
/// run's scratch folder when the store's options schema has a "path", else {}.
std::string default_store_config(Battery::State& s) {
    constexpr std::size_t kSchemaSlotEnd =
        offsetof(nucleo_plugin_entry, options_schema) + sizeof(nucleo_plugin_entry::options_schema);
    if (s.store == nullptr || s.options.scratch.empty() || s.entry->struct_size < kSchemaSlotEnd ||
        s.entry->options_schema == nullptr)
        return "{}";
    const char* schema = s.entry->options_schema(NUCLEO_FACTORY_STORE);
    rapidjson::Document d;
    std::string why;
    if (schema == nullptr || !parse_json(schema, d, why) || !d.IsObject() ||
        !d.HasMember("properties") || !d["properties"].IsObject() ||
        !d["properties"].HasMember("path"))
        return "{}";
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    const std::string path = (s.options.scratch / "kit.db").string();
    w.StartObject();
    w.Key("path");
    w.String(path.c_str(), static_cast<rapidjson::SizeType>(path.size()));
    w.EndObject();
    return buf.GetString();
}

Battery::Battery(Options options) : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.options = std::move(options);
    const fs::path& file = s.options.plugin;
    const std::string where = "plugin " + file.string() + ": ";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) throw BadPlugin(where + "no such file");
    ::dlerror();
    s.handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (s.handle == nullptr) {
        std::string why = ::dlerror() != nullptr ? "not a loadable shared object" : "cannot be loaded";
        std::ifstream in(file, std::ios::binary);
        char magic[4] = {};
        in.read(magic, 4);
        if (in.gcount() != 4 || std::string_view(magic, 4) != "\x7f" "ELF") why = "not a shared object (no ELF header)";
        throw BadPlugin(where + why + ", not a plugin");
    }
    auto fn = reinterpret_cast<nucleo_plugin_entry_fn>(::dlsym(s.handle, NUCLEO_PLUGIN_ENTRY_SYMBOL));
    if (fn == nullptr)
        throw BadPlugin(where + "no entry symbol " NUCLEO_PLUGIN_ENTRY_SYMBOL
                                " (not a Nucleo plugin, or built for another ABI major)");
    s.entry = fn();
    if (s.entry == nullptr) throw BadPlugin(where + NUCLEO_PLUGIN_ENTRY_SYMBOL "() returned NULL");
    if (s.entry->struct_size < kEntryMajorSize)
        throw BadPlugin(where + "entry struct_size " + std::to_string(s.entry->struct_size) + " is too small to hold its ABI version");
    if (s.entry->abi_major != NUCLEO_PLUGIN_ABI_MAJOR)
        throw BadPlugin(where + "built for ABI major " + std::to_string(s.entry->abi_major) + "; this kit checks major " +
                        std::to_string(NUCLEO_PLUGIN_ABI_MAJOR));
    if (s.entry->struct_size < kEntryV1Size || s.entry->get_factory == nullptr || s.entry->name == nullptr)
        throw BadPlugin(where + "the entry lacks ABI 1.0 slots (struct_size " + std::to_string(s.entry->struct_size) +
                        ", name and get_factory required)");
    s.host = {sizeof(nucleo_host), NUCLEO_PLUGIN_ABI_MAJOR, NUCLEO_PLUGIN_ABI_MINOR, &s, &host_extension};
    if (s.entry->init != nullptr) {
        nucleo_error err = fresh_error();
        const int32_t status = s.entry->init(&s.host, &err);
        if (status != NUCLEO_OK) {
            s.deinitialised = true;  // a refused init is not followed by deinit
            throw BadPlugin(where + "init failed with " + status_name(status) + ": " + excerpt(error_text(err)));
        }
    }
    s.provider = static_cast<const nucleo_provider_factory*>(s.entry->get_factory(NUCLEO_FACTORY_PROVIDER));
    s.store = static_cast<const nucleo_store_factory*>(s.entry->get_factory(NUCLEO_FACTORY_STORE));
    s.summarizer = static_cast<const nucleo_summarizer_factory*>(s.entry->get_factory(NUCLEO_FACTORY_SUMMARIZER));
    const auto usable = [](const void* f, std::size_t v1) { return f != nullptr && *static_cast<const uint32_t*>(f) >= v1; };

    abi_cases(s);
    if (usable(s.provider, kProviderV1Size) && s.provider->create && s.provider->encode && s.provider->decode &&
        s.provider->capabilities) {
        capabilities_case(s);
        encode_cases(s);
        decode_generic_cases(s);
        decode_event_hostile_cases(s);
        decode_family_cases(s);
        familyless_decode_cases(s);
    }
    if (s.options.store_config.empty()) s.options.store_config = default_store_config(s);
    if (usable(s.summarizer, kSummarizerV1Size) && s.summarizer->create && s.summarizer->summarize) summarizer_cases(s);
    if (usable(s.store, kStoreV1Size) && s.store->create && s.store->capabilities) store_cases(s);
    s.cases.push_back({"abi", "deinit", "", [&s](std::vector<Finding>&) {
        for (auto& [factory, inst] : s.instances) {
            if (inst == nullptr) continue;
            if (factory == s.provider) s.provider->destroy(inst);
            else if (factory == s.store) s.store->destroy(inst);
            else if (factory == s.summarizer) s.summarizer->destroy(inst);
        }
        s.instances.clear();
        if (s.entry->deinit != nullptr) s.entry->deinit();
        s.deinitialised = true;
    }});
}

Battery::~Battery() {
    State& s = *state_;
    if (!s.deinitialised && s.entry != nullptr) {
        for (auto& [factory, inst] : s.instances) {
            if (inst == nullptr) continue;
            if (factory == s.provider) s.provider->destroy(inst);
            else if (factory == s.store) s.store->destroy(inst);
            else if (factory == s.summarizer) s.summarizer->destroy(inst);
        }
        if (s.entry->deinit != nullptr) s.entry->deinit();
    }
    if (s.handle != nullptr) ::dlclose(s.handle);
}

std::size_t Battery::size() const noexcept { return state_->cases.size(); }
const std::string& Battery::slot(std::size_t i) const { return state_->cases.at(i).slot; }
const std::string& Battery::name(std::size_t i) const { return state_->cases.at(i).name; }

bool Battery::applies(std::size_t i) {
    const Case& c = state_->cases.at(i);
    const std::string& family = state_->wire_family();
    // A family with no documented answers of its own in the corpus counts as none (abi.131).
    if (c.familyless_only)
        return family.empty() ||
               !fs::exists(state_->options.corpus / "decode" / (family + ".json"));
    return c.family.empty() || c.family == family;
}

std::vector<Finding> Battery::run(std::size_t i) {
    State& s = *state_;
    Case& c = s.cases.at(i);
    std::vector<Finding> findings;
    s.findings = &findings;
    s.current_case = c.slot + "/" + c.name;
    s.current_source = c.source;
    take_late_writes();
    try {
        c.run(findings);
    } catch (const std::exception& e) {
        s.add(c.slot, "the case to run", std::string("the kit failed: ") + e.what());
    }
    // abi.124: a write to a sink after its call returned, seen during this case.
    for (const std::string& slot : take_late_writes())
        s.add("sink", "no write to a sink after its call returned (abi.102)", "a write to the sink of " + slot + " was refused");
    s.findings = nullptr;
    return findings;
}

}  // namespace nucleo::conformance
