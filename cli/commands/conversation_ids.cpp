// cli.106: a conversation named by its id or a unique prefix of it (conversation_ids.hpp).
#include "commands/conversation_ids.hpp"

#include <optional>
#include <string_view>
#include <vector>

#include "nucleo/errors.hpp"

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

std::string resolve_conversation_id(const PersistentStore& store, const std::string& user,
                                    const std::string& given, const std::string& option) {
    std::vector<std::string> matches;
    std::optional<std::string> cursor;
    do {
        ConversationPage page = store.list(user, 1000, cursor);
        for (ConversationSummary& c : page.conversations) {
            if (c.conversation_id == given) return given;
            if (!given.empty() && (c.conversation_id.starts_with(given) ||
                                   random_part(c.conversation_id).starts_with(given))) {
                matches.push_back(std::move(c.conversation_id));
            }
        }
        cursor = std::move(page.next_cursor);
    } while (cursor);
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

}  // namespace nucleo::cli
