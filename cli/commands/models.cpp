// `nucleo models [--json] [--config FILE]`: the model catalog of the config.
// The table is for people; --json is for scripts: {"schema_version": 1, "config": path,
// "models": [every field of each catalog entry]}, compact on one line (docs/cli-json.md).
#include <rapidjson/writer.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "config_loading.hpp"
#include "nucleo/thinking.hpp"

namespace nucleo::cli {
namespace {

/// A price as people write it: at least two decimals, up to four ("3.00", "0.075").
std::string price(double usd_per_million) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", usd_per_million);
    std::string s = buf;
    while (s.size() > 1 && s.back() == '0' && s[s.size() - 3] != '.') s.pop_back();
    return s;
}

/// catalog.2: "active", "deprecated until 2027-01-14", "retired 2026-11-30 -> X".
std::string status_text(const ModelSpec& m) {
    switch (m.status) {
        case ModelStatus::kActive:
            return "active";
        case ModelStatus::kDeprecated:
            return "deprecated until " + m.shutdown;
        case ModelStatus::kRetired:
            return "retired " + m.retired_on + " -> " + m.replacement;
    }
    return "?";
}

/// catalog.5: what the three depths send, "between_tools/medium/high" ("-" for nothing).
std::string thinking_text(const ModelSpec& m) {
    std::string out;
    for (Depth d : {Depth::kImmediate, Depth::kStandard, Depth::kDeep}) {
        const DepthThinking t = m.thinking_at(d);
        std::string word = "-";
        if (t.kind == DepthThinking::Kind::kDisabled) word = "disabled";
        if (t.kind == DepthThinking::Kind::kBetweenTools) word = "between_tools";
        if (t.kind == DepthThinking::Kind::kBudget) word = std::to_string(m.thinking_budget_for(d));
        if (t.kind == DepthThinking::Kind::kEffort) word = t.effort;
        out += (out.empty() ? "" : "/") + word;
    }
    return m.thinking.always ? out + " (always)" : out;
}

/// catalog.7: "> 272000" for each tier, or "-".
std::string tiers_text(const ModelSpec& m) {
    std::string out;
    for (const PriceTier& t : m.price_tiers) out += (out.empty() ? "> " : ", > ") + std::to_string(t.above_prompt_tokens);
    return out.empty() ? "-" : out;
}

void print_table(const ModelCatalog& catalog) {
    const std::vector<std::string> header = {"ID",      "PROVIDER", "WIRE MODEL", "GRADE",   "STATUS",
                                             "THINKING (IMMEDIATE/STANDARD/DEEP)", "CONTEXT", "MAX OUT",
                                             "IN $/M",  "OUT $/M",  "CACHE W",    "CACHE R", "TIERS"};
    std::vector<std::vector<std::string>> rows = {header};
    for (const auto& m : catalog.all()) {
        rows.push_back({m.id, m.provider, m.wire_model, to_string(m.grade), status_text(m), thinking_text(m),
                        std::to_string(m.max_context_tokens), std::to_string(m.max_output_tokens),
                        price(m.prices.input), price(m.prices.output), price(m.prices.cache_write),
                        price(m.prices.cache_read), tiers_text(m)});
    }
    std::vector<std::size_t> width(header.size(), 0);
    for (const auto& row : rows)
        for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            const bool numeric = i >= 6 && i + 1 < row.size();  // right-align the numbers
            const std::string pad(width[i] - row[i].size(), ' ');
            line += numeric ? pad + row[i] : row[i] + pad;
            if (i + 1 < row.size()) line += "  ";
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::cout << line << "\n";
    }
}

using JsonOut = rapidjson::Writer<rapidjson::StringBuffer>;

void write_strings(JsonOut& w, const std::vector<std::string>& items) {
    w.StartArray();
    for (const std::string& s : items) w.String(s);
    w.EndArray();
}

void write_rates(JsonOut& w, const Prices& p) {
    w.Key("input");
    w.Double(p.input);
    w.Key("output");
    w.Double(p.output);
    w.Key("cache_write");
    w.Double(p.cache_write);
    w.Key("cache_read");
    w.Double(p.cache_read);
    w.Key("cache_write_1h");
    w.Double(p.cache_write_1h_price());
}

/// catalog.1-catalog.6: status, source, thinking, refusals and caching, as the record says them.
void write_record(JsonOut& w, const ModelSpec& m) {
    w.Key("status");
    w.String(to_string(m.status));
    w.Key("shutdown");
    m.shutdown.empty() ? w.Null() : w.String(m.shutdown);
    w.Key("retired_on");
    m.retired_on.empty() ? w.Null() : w.String(m.retired_on);
    w.Key("replacement");
    m.replacement.empty() ? w.Null() : w.String(m.replacement);
    w.Key("source");
    w.StartObject();
    w.Key("urls");
    write_strings(w, m.source.urls);
    w.Key("read");
    w.String(m.source.read);
    w.Key("third_party");
    w.String(m.source.third_party);
    w.EndObject();
    w.Key("thinking");
    w.StartObject();
    w.Key("forms");
    w.StartArray();
    for (ThinkingForm f : m.thinking.forms) w.String(to_string(f));
    w.EndArray();
    w.Key("always");
    w.Bool(m.thinking.always);
    w.Key("efforts");
    write_strings(w, m.thinking.efforts);
    w.Key("default_effort");
    w.String(m.thinking.default_effort);
    w.Key("display");
    write_strings(w, m.thinking.display);
    w.Key("bound_to_prefix");
    w.Bool(m.thinking.bound_to_prefix);
    w.Key("depth");
    w.StartObject();
    for (Depth d : {Depth::kImmediate, Depth::kStandard, Depth::kDeep}) {
        const ThinkingRequest r = thinking_request(m, d);
        w.Key(to_string(d));
        w.StartObject();
        w.Key("form");
        w.String(r.form);
        w.Key("effort");
        w.String(r.effort);
        w.Key("thinks");
        w.Bool(thinking_active(m, d));
        w.EndObject();
    }
    w.EndObject();
    w.EndObject();
    w.Key("refuses");
    w.StartArray();
    if (m.refuses_sampling) w.String("sampling");
    if (m.refuses_prefill) w.String("prefill");
    if (m.refuses_forced_tool_use) w.String("forced_tool_use");
    if (m.refuses_tools_with_reasoning) w.String("tools_with_reasoning");
    w.EndArray();
    w.Key("cache_breakpoints");
    w.String(m.cache_breakpoints);
    w.Key("cache_ttl_1h");
    w.Bool(m.cache_ttl_1h);
}

void print_json(const Config& config) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    w.Key("config");
    w.String(config.path().string());
    w.Key("models");
    w.StartArray();
    for (const auto& m : config.catalog().all()) {
        w.StartObject();
        w.Key("id");
        w.String(m.id);
        w.Key("provider");
        w.String(m.provider);
        w.Key("wire_model");
        w.String(m.wire_model);
        w.Key("grade");
        w.String(to_string(m.grade));
        w.Key("max_context_tokens");
        w.Int64(m.max_context_tokens);
        w.Key("max_output_tokens");
        w.Int64(m.max_output_tokens);
        w.Key("comfort_context_tokens");
        if (m.comfort_context_tokens) {
            w.Int64(*m.comfort_context_tokens);
        } else {
            w.Null();
        }
        w.Key("output_budget");
        w.StartObject();
        for (const auto& [rung, tokens] : m.output_budget) {
            w.Key(to_string(rung));
            w.Int64(tokens);
        }
        w.EndObject();
        w.Key("thinking_budget");
        w.StartObject();
        for (Depth d : {Depth::kImmediate, Depth::kStandard, Depth::kDeep}) {
            w.Key(to_string(d));
            w.Int64(m.thinking_budget_for(d));
        }
        w.EndObject();
        write_record(w, m);
        w.Key("supports_caching");
        w.Bool(m.supports_caching);
        w.Key("min_cacheable_tokens");
        w.Int64(m.min_cacheable_tokens);
        w.Key("native_tools");
        w.Bool(m.native_tools);
        w.Key("prices");
        w.StartObject();
        w.Key("input");
        w.Double(m.prices.input);
        w.Key("output");
        w.Double(m.prices.output);
        w.Key("cache_write");
        w.Double(m.prices.cache_write);
        w.Key("cache_read");
        w.Double(m.prices.cache_read);
        w.Key("cache_write_1h");
        w.Double(m.prices.cache_write_1h_price());
        w.Key("tiers");
        w.StartArray();
        for (const PriceTier& t : m.price_tiers) {
            w.StartObject();
            w.Key("above");
            w.Int64(t.above_prompt_tokens);
            write_rates(w, t.prices);
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
        w.Key("accepts");
        w.StartArray();
        for (Input i : m.accepted_inputs) w.String(to_string(i));
        w.EndArray();
        w.Key("token_counter");
        w.String(m.token_counter);
        w.Key("token_calibration");
        w.Double(m.token_calibration);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    std::cout << buffer.GetString() << "\n";
}

int run_models(const Args& args) {
    const Config config = load_config(args);
    if (args.has("json")) {
        print_json(config);
    } else {
        print_table(config.catalog());
    }
    return kExitOk;
}

}  // namespace

const CommandSpec& models_command() {
    static const CommandSpec spec{"models", "list the model catalog of the config",
                                  {json_option(), config_option()}, "", "", "", run_models};
    return spec;
}

}  // namespace nucleo::cli
