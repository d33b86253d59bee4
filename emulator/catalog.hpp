// nucleo-emulator's reading of the model catalog (wire.186, docs/emulator.md "Model catalog"): per
// model the fields the per-model rules of wire/ read (wire.176-wire.185) and the minimum
// cacheable prompt. It is not the catalog's validator (the core's loader is, catalog.1): it
// reads what it needs and passes over keys it does not know.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/wire/contract.hpp"
#include "nucleo/wire/model_rules.hpp"

namespace nucleo::emulator {

class ModelCatalog {
  public:
    /// No records: every model keeps the rules every model has (per-model rules off).
    ModelCatalog() = default;

    /// Reads the records of the YAML file `path`: the sequence under `models:` (or a sequence at
    /// the root). A record without a string `wire_model` is skipped. Throws std::runtime_error,
    /// naming the file, when it cannot be read or is not YAML.
    static ModelCatalog load(const std::string& path);

    /// The record of the model a request of `family` names, matched exactly on `wire_model`;
    /// among several, the one whose provider is the family's usual instance name (anthropic,
    /// openai, bedrock), else the first. nullptr when no record names it.
    const contract::ModelRules* find(contract::WireFamily family,
                                     std::string_view wire_model) const;

    /// The `caching.breakpoints` of the record `find` returns: "explicit", "automatic", "none",
    /// or "" when the catalog has no record of the model or the record names none (caching.120,
    /// caching.124).
    std::string_view cache_breakpoints(contract::WireFamily family,
                                       std::string_view wire_model) const;

    /// What the emulator's own thinking reads from the record `find` returns (wire.193,
    /// wire.197): `thinking.default_effort` ("" when none) and `thinking.bound_to_prefix`.
    struct Thinking {
        std::string default_effort;
        bool bound_to_prefix = false;
    };
    /// The record's thinking traits; all defaults when the catalog has no record of the model.
    Thinking thinking(contract::WireFamily family, std::string_view wire_model) const;

    /// What the record's optional `mid_conversation:` list says the model takes (docs/emulator.md
    /// "Mid-conversation system messages and tool changes"): `system_messages` (a `role:
    /// "system"` message in `messages`) and `tool_changes` (its `tool_addition` and
    /// `tool_removal` blocks). `named` is false when the catalog has no record of the model: such
    /// a model keeps the rule book's answers alone, as it does for every per-model rule.
    struct MidConversation {
        bool named = false;
        bool system_messages = false;
        bool tool_changes = false;
    };
    MidConversation mid_conversation(contract::WireFamily family,
                                     std::string_view wire_model) const;

    /// What the record's optional `threads: true` says (wire.199): whether the model holds
    /// Anthropic message threads. `named` is false when the catalog has no record of the model
    /// (such a model takes threads, as it keeps every other behaviour no record refuses).
    struct Threads {
        bool named = false;
        bool threads = false;
    };
    Threads threads(contract::WireFamily family, std::string_view wire_model) const;

    std::size_t size() const { return entries_.size(); }
    /// The file read ("" when none).
    const std::string& source() const { return source_; }

  private:
    struct Entry {
        std::string provider;
        contract::ModelRules rules;
        std::string cache_breakpoints;  ///< caching.breakpoints, "" when the record names none
        Thinking thinking;
        MidConversation mid_conversation;
        bool threads = false;  ///< `threads: true`
    };
    const Entry* find_entry(contract::WireFamily family, std::string_view wire_model) const;
    std::vector<Entry> entries_;
    std::string source_;
};

/// The catalog file to read for the `--catalog` value `option`: "none" is no file (""); a
/// non-empty value is that file; "" (not given) is the source tree's config/models.yaml when it
/// exists, else <datadir>/nucleo/models.yaml when installed, else no file.
std::string catalog_path(const std::string& option);

}  // namespace nucleo::emulator
