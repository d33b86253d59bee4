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

void print_table(const ModelCatalog& catalog) {
    const std::vector<std::string> header = {"ID",      "PROVIDER", "WIRE MODEL", "GRADE",
                                             "CONTEXT", "MAX OUT",  "IN $/M",     "OUT $/M",
                                             "CACHE W", "CACHE R"};
    std::vector<std::vector<std::string>> rows = {header};
    for (const auto& m : catalog.all()) {
        rows.push_back({m.id, m.provider, m.wire_model, to_string(m.grade),
                        std::to_string(m.max_context_tokens), std::to_string(m.max_output_tokens),
                        price(m.prices.input), price(m.prices.output), price(m.prices.cache_write),
                        price(m.prices.cache_read)});
    }
    std::vector<std::size_t> width(header.size(), 0);
    for (const auto& row : rows)
        for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            const bool numeric = i >= 4;  // right-align the numbers
            const std::string pad(width[i] - row[i].size(), ' ');
            line += numeric ? pad + row[i] : row[i] + pad;
            if (i + 1 < row.size()) line += "  ";
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::cout << line << "\n";
    }
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
        w.EndObject();
        w.Key("accepts");
        w.StartArray();
        for (Input i : m.accepted_inputs) w.String(to_string(i));
        w.EndArray();
        w.Key("token_counter");
        w.String(m.token_counter);
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
