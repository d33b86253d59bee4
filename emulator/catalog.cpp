#include "catalog.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>

#ifndef NUCLEO_SOURCE_CATALOG
#define NUCLEO_SOURCE_CATALOG ""
#endif
#ifndef NUCLEO_INSTALLED_CATALOG
#define NUCLEO_INSTALLED_CATALOG ""
#endif

namespace nucleo::emulator {
namespace {

/// A scalar as a string, or "" when the node is absent or not a scalar.
std::string scalar(const YAML::Node& node) {
    return node && node.IsScalar() ? node.Scalar() : std::string();
}

/// The scalars of a sequence; anything else is no value.
std::vector<std::string> scalars(const YAML::Node& node) {
    std::vector<std::string> out;
    if (!node || !node.IsSequence()) return out;
    for (const auto& item : node) {
        if (item.IsScalar()) out.push_back(item.Scalar());
    }
    return out;
}

bool flag(const YAML::Node& node) {
    if (!node || !node.IsScalar()) return false;
    bool value = false;
    return YAML::convert<bool>::decode(node, value) && value;
}

std::int64_t count(const YAML::Node& node) {
    if (!node || !node.IsScalar()) return 0;
    std::int64_t value = 0;
    return YAML::convert<std::int64_t>::decode(node, value) && value > 0 ? value : 0;
}

/// A node's member when the node is a map (yaml-cpp's operator[] on a scalar throws).
YAML::Node field(const YAML::Node& map, const char* key) {
    return map && map.IsMap() ? map[key] : YAML::Node();
}

bool exists(const std::string& path) {
    std::error_code ec;
    return !path.empty() && std::filesystem::is_regular_file(path, ec);
}

std::string_view family_provider(contract::WireFamily family) {
    switch (family) {
        case contract::WireFamily::kAnthropicMessages:
            return "anthropic";
        case contract::WireFamily::kOpenAIChat:
            return "openai";
        case contract::WireFamily::kBedrockConverse:
            return "bedrock";
        case contract::WireFamily::kGeminiGenerate:
            return "gemini";
        case contract::WireFamily::kOpenAIResponses:
            return "openai-responses";
        case contract::WireFamily::kUnknown:
            break;
    }
    return "";
}

}  // namespace

ModelCatalog ModelCatalog::load(const std::string& path) {
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (const YAML::Exception& e) {
        throw std::runtime_error("cannot read the catalog " + path + ": " + e.what());
    }
    ModelCatalog catalog;
    catalog.source_ = path;
    const YAML::Node models = root.IsSequence() ? root : field(root, "models");
    if (!models || !models.IsSequence()) return catalog;
    for (const auto& record : models) {
        if (!record.IsMap()) continue;
        Entry e;
        e.rules.wire_model = scalar(record["wire_model"]);
        if (e.rules.wire_model.empty()) continue;
        e.provider = scalar(record["provider"]);
        if (const std::string status = scalar(record["status"]); !status.empty())
            e.rules.status = status;
        const YAML::Node thinking = record["thinking"];
        e.rules.forms = scalars(field(thinking, "forms"));
        e.rules.efforts = scalars(field(thinking, "efforts"));
        e.rules.display = scalars(field(thinking, "display"));
        e.rules.always_thinks = flag(field(thinking, "always"));
        e.thinking.default_effort = scalar(field(thinking, "default_effort"));
        e.thinking.bound_to_prefix = flag(field(thinking, "bound_to_prefix"));
        for (const std::string& refused : scalars(record["refuses"])) {
            e.rules.refuses_sampling = e.rules.refuses_sampling || refused == "sampling";
            e.rules.refuses_prefill = e.rules.refuses_prefill || refused == "prefill";
            e.rules.refuses_forced_tool_use =
                e.rules.refuses_forced_tool_use || refused == "forced_tool_use";
            e.rules.refuses_tools_with_reasoning =
                e.rules.refuses_tools_with_reasoning || refused == "tools_with_reasoning";
        }
        // caching.min_tokens, or the older flat spelling.
        e.rules.min_cache_tokens = count(field(record["caching"], "min_tokens"));
        if (e.rules.min_cache_tokens == 0)
            e.rules.min_cache_tokens = count(record["min_cacheable_tokens"]);
        e.cache_breakpoints = scalar(field(record["caching"], "breakpoints"));
        // Absent, or a value that is not a list, takes neither: the catalog says what a model
        // takes, never the emulator's guess from its name.
        e.mid_conversation.named = true;
        for (const std::string& item : scalars(record["mid_conversation"])) {
            e.mid_conversation.system_messages =
                e.mid_conversation.system_messages || item == "system_messages";
            e.mid_conversation.tool_changes =
                e.mid_conversation.tool_changes || item == "tool_changes";
        }
        // wire.199: message threads, only when the record says so.
        e.threads = flag(record["threads"]);
        catalog.entries_.push_back(std::move(e));
    }
    return catalog;
}

const ModelCatalog::Entry* ModelCatalog::find_entry(contract::WireFamily family,
                                                    std::string_view wire_model) const {
    const Entry* first = nullptr;
    for (const Entry& e : entries_) {
        if (e.rules.wire_model != wire_model) continue;
        if (e.provider == family_provider(family)) return &e;
        if (first == nullptr) first = &e;
    }
    return first;
}

const contract::ModelRules* ModelCatalog::find(contract::WireFamily family,
                                               std::string_view wire_model) const {
    const Entry* e = find_entry(family, wire_model);
    return e != nullptr ? &e->rules : nullptr;
}

std::string_view ModelCatalog::cache_breakpoints(contract::WireFamily family,
                                                 std::string_view wire_model) const {
    const Entry* e = find_entry(family, wire_model);
    return e != nullptr ? std::string_view(e->cache_breakpoints) : std::string_view();
}

ModelCatalog::Thinking ModelCatalog::thinking(contract::WireFamily family,
                                              std::string_view wire_model) const {
    const Entry* e = find_entry(family, wire_model);
    return e != nullptr ? e->thinking : Thinking{};
}

ModelCatalog::MidConversation ModelCatalog::mid_conversation(contract::WireFamily family,
                                                             std::string_view wire_model) const {
    const Entry* e = find_entry(family, wire_model);
    return e != nullptr ? e->mid_conversation : MidConversation{};
}

ModelCatalog::Threads ModelCatalog::threads(contract::WireFamily family,
                                            std::string_view wire_model) const {
    const Entry* e = find_entry(family, wire_model);
    return e != nullptr ? Threads{true, e->threads} : Threads{};
}

std::string catalog_path(const std::string& option) {
    if (option == "none") return "";
    if (!option.empty()) return option;
    for (const std::string candidate : {NUCLEO_SOURCE_CATALOG, NUCLEO_INSTALLED_CATALOG}) {
        if (exists(candidate)) return candidate;
    }
    return "";
}

}  // namespace nucleo::emulator
