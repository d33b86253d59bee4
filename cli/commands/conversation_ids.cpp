// cli.106, chat.109, chat.113: which stored conversation, and its model (conversation_ids.hpp).
#include "commands/conversation_ids.hpp"

#include <optional>
#include <string_view>
#include <vector>

#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo::cli {

namespace {

/// How many candidates an ambiguous prefix's error lists before "and N more".
constexpr std::size_t kShownCandidates = 10;

/// The random part of a minted id (ownership.1): what follows its "conv-" marker, the marker
/// at the start (`conv-a26f-…`) or after a thinker's name (`ChatThinker-conv-a26f-…`, minted
/// before ids lost the name); "" for an id without it.
std::string_view random_part(std::string_view id) {
    if (id.starts_with("conv-")) return id.substr(5);
    const auto at = id.find("-conv-");
    return at == std::string_view::npos ? std::string_view() : id.substr(at + 6);
}

}  // namespace

ConfiguredStores open_stores(const Config& config, const std::string& needed) {
    if (!needed.empty() && !config.persistent_store()) {
        throw Error(ErrorKind::kConfig,
                    config.path().string() + ": stores.persistent is not configured" + needed);
    }
    const PluginLoader loader(config.plugin_paths());
    return open_configured_stores(config, loader);
}

std::vector<ConversationSummary> all_conversations(const PersistentStore& store,
                                                   const std::string& user) {
    std::vector<ConversationSummary> all;
    std::optional<std::string> cursor;
    do {
        ConversationPage page = store.list(user, 1000, cursor);
        for (ConversationSummary& c : page.conversations) all.push_back(std::move(c));
        cursor = std::move(page.next_cursor);
    } while (cursor);
    return all;
}

std::string resolve_conversation_id(const PersistentStore& store, const std::string& user,
                                    const std::string& given, const std::string& option) {
    std::vector<std::string> matches;
    for (ConversationSummary& c : all_conversations(store, user)) {
        if (c.conversation_id == given) return given;
        if (!given.empty() && (c.conversation_id.starts_with(given) ||
                               random_part(c.conversation_id).starts_with(given))) {
            matches.push_back(std::move(c.conversation_id));
        }
    }
    if (matches.size() == 1) return matches.front();
    // None: the id as given, so the caller's load fails with the store's own kNotFound, which
    // names the store and its file (persistence.105).
    if (matches.empty()) return given;
    std::string listed;
    for (std::size_t i = 0; i < matches.size() && i < kShownCandidates; ++i)
        listed += (i == 0 ? "" : ", ") + matches[i];
    if (matches.size() > kShownCandidates)
        listed += " and " + std::to_string(matches.size() - kShownCandidates) + " more";
    throw Error(ErrorKind::kInvalidArgument,
                option + " " + given + ": " + std::to_string(matches.size()) +
                    " conversations of user '" + user + "' start with it: " + listed +
                    "; give more of the id");
}

std::optional<std::string> latest_conversation(const PersistentStore& store,
                                               const std::string& user) {
    std::optional<ConversationSummary> latest;
    for (ConversationSummary& c : all_conversations(store, user)) {
        // Timestamps are ISO 8601 in UTC: their text orders them; a tie goes to the later
        // created (the list is in creation order).
        if (!latest || c.updated_at >= latest->updated_at) latest = std::move(c);
    }
    if (!latest) return std::nullopt;
    return latest->conversation_id;
}

const ModelSpec& chosen_model(const Args& args, const Config& config, const PersistentStore* store,
                              const std::string& user, const std::optional<std::string>& resume,
                              std::string& note) {
    if (auto id = args.get("model")) return config.catalog().find(*id);
    if (resume && store != nullptr) {
        std::optional<std::string> used;
        try {
            used = store->load(user, *resume).prior_spec_id;
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::kNotFound) throw;  // the caller's load names the missing id
        }
        if (used) {
            if (const ModelSpec* m = config.catalog().try_find(*used)) return *m;
            note = "conversation " + *resume + " was answered by " + *used +
                   ", which the catalog no longer has; using " + config.default_model().id;
        }
    }
    return config.default_model();
}

}  // namespace nucleo::cli
