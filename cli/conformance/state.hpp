// The state of one Battery and its cases, shared by the battery files (cli/conformance).
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "conformance/kit.hpp"
#include "conformance/support.hpp"
#include "nucleo/plugin.h"

namespace nucleo::conformance {

namespace detail {
struct Case {
    std::string slot;
    std::string name;
    std::string family;  ///< empty: every plugin
    std::function<void(std::vector<Finding>&)> run;
    std::string source;  ///< the corpus file and entry it came from (abi.131), "" for the kit's own
    /// Runs only for a plugin that declares no wire family (abi.131: its answers are still checked
    /// against the normalized form).
    bool familyless_only = false;
};

}  // namespace detail
using namespace detail;  // the kit's own helpers, in every battery file

struct Battery::State {
    using Finding = conformance::Finding;
    Options options;
    void* handle = nullptr;
    const nucleo_plugin_entry* entry = nullptr;
    nucleo_host host{};
    bool deinitialised = false;
    const nucleo_provider_factory* provider = nullptr;
    const nucleo_store_factory* store = nullptr;
    const nucleo_summarizer_factory* summarizer = nullptr;
    std::map<const void*, nucleo_instance*> instances;  ///< factory -> its one instance
    std::optional<std::string> family;                  ///< resolved lazily
    std::string framing = "sse";
    std::vector<detail::Case> cases;
    std::vector<Finding>* findings = nullptr;  ///< the running case's
    std::string current_case;
    std::string current_source;

    void add(std::string slot, std::string expected, std::string got) {
        findings->push_back(
            {std::move(slot), current_case, std::move(expected), std::move(got), current_source});
    }

    /// Checks the error of a failed call (abi.12); true when the call succeeded.
    bool checked(const std::string& slot, int32_t status, const nucleo_error& err) {
        if (auto p = error_problem(status, err); !p.empty())
            add(slot, "a failed call fills its error: code equal to the status, a one-line NUL-terminated message", p);
        return status == NUCLEO_OK;
    }

    nucleo_instance* instance_of(const void* factory, int32_t (*create)(nucleo_string_view, nucleo_instance**, nucleo_error*),
                                 const std::string& config, const std::string& slot) {
        if (auto it = instances.find(factory); it != instances.end()) return it->second;
        nucleo_instance* inst = nullptr;
        nucleo_error err = fresh_error();
        const int32_t status = create(nucleo_sv(config.c_str()), &inst, &err);
        if (!checked(slot + ".create", status, err) || inst == nullptr) {
            add(slot + ".create", "create(" + excerpt(config, 60) + ") gives an instance",
                status == NUCLEO_OK ? "NUCLEO_OK and a NULL instance" : status_name(status) + ": " + error_text(err));
            inst = nullptr;
        }
        instances[factory] = inst;
        return inst;
    }
    nucleo_instance* provider_instance() {
        return instance_of(provider, provider->create, "{}", "provider");
    }

    /// The plugin's wire family: --family, else its capabilities' "wire_family" ("" for none).
    const std::string& wire_family() {
        if (family) return *family;
        family = options.family;
        if (!family->empty() || provider == nullptr) return *family;
        nucleo_instance* inst = provider_instance();
        if (inst == nullptr) return *family;
        std::string out;
        nucleo_error err = fresh_error();
        int32_t status;
        {
            Sink sink(out, "capabilities");
            status = provider->capabilities(inst, sink.get(), &err);
        }
        rapidjson::Document d;
        std::string why;
        if (status == NUCLEO_OK && parse_json(out, d, why) && d.IsObject()) {
            if (d.HasMember("wire_family") && d["wire_family"].IsString()) family = d["wire_family"].GetString();
            if (d.HasMember("stream_framing") && d["stream_framing"].IsString()) framing = d["stream_framing"].GetString();
        }
        return *family;
    }

    // ---- provider calls ---------------------------------------------------------------------
    struct Result {
        int32_t status = NUCLEO_OK;
        nucleo_error err{};
        std::string out;
    };
    Result decode(int32_t http_status, const std::string& headers, std::string_view body) {
        Result r;
        r.err = fresh_error();
        nucleo_instance* inst = provider_instance();
        Sink sink(r.out, "decode");
        r.status = provider->decode(inst, http_status, nucleo_sv(headers.c_str()),
                                    nucleo_string_view{body.data(), body.size()}, sink.get(), &r.err);
        return r;
    }
    Result decode_event(std::string_view name, std::string_view data) {
        Result r;
        r.err = fresh_error();
        Sink sink(r.out, "decode_event");
        r.status = provider->decode_event(provider_instance(), nucleo_string_view{name.data(), name.size()},
                                          nucleo_string_view{data.data(), data.size()}, sink.get(), &r.err);
        return r;
    }
    bool has_decode_event() const {
        return NUCLEO_HAS_SLOT(provider, nucleo_provider_factory, decode_event);
    }
    bool has_encode_parts() const {
        return NUCLEO_HAS_SLOT(provider, nucleo_provider_factory, encode_parts);
    }
    bool has_encode_split() const {
        return NUCLEO_HAS_SLOT(provider, nucleo_provider_factory, encode_split);
    }

    /// A decode whose answer must be a valid normalized answer or one of `allowed` statuses.
    /// Returns the parsed answer when there is one.
    std::optional<rapidjson::Document> answer_or(const std::string& slot, const Result& r,
                                                 const std::vector<int32_t>& allowed, const std::string& expected) {
        if (!checked(slot, r.status, r.err)) {
            if (std::find(allowed.begin(), allowed.end(), r.status) == allowed.end())
                add(slot, expected, status_name(r.status) + ": " + excerpt(error_text(r.err)));
            return std::nullopt;
        }
        rapidjson::Document d;
        std::string why;
        if (!parse_json(r.out, d, why)) {
            add(slot, "a normalized answer (JSON, valid UTF-8)", "output that is not JSON (" + why + "): " + excerpt(r.out));
            return std::nullopt;
        }
        if (auto p = answer_problem(d); !p.empty()) {
            add(slot, "a normalized answer (answers.101, answers.106)", p);
            return std::nullopt;
        }
        return d;
    }
};


void store_cases(Battery::State& s);

}  // namespace nucleo::conformance
