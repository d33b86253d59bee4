// Which stored conversation a command works on: an id typed on the command line (cli.106), the
// user's latest (chat.109), and the model that answered it (chat.113). Shared by `nucleo chat`,
// `nucleo ask`, `nucleo conversations` and `nucleo logs`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "nucleo/config.hpp"
#include "nucleo/configured.hpp"
#include "nucleo/store.hpp"

namespace nucleo::cli {

/// persistence.106: the config's stores, opened now (a bad choice fails at start). With `needed`
/// set, a config without stores.persistent is Error(kConfig) "FILE: stores.persistent is not
/// configured" followed by `needed` (" (choose a store plugin, e.g. sqlite)").
[[nodiscard]] ConfiguredStores open_stores(const Config& config, const std::string& needed = {});

/// Every conversation of `user` in `store`, every page read, in the store's order (creation).
[[nodiscard]] std::vector<ConversationSummary> all_conversations(const PersistentStore& store,
                                                                 const std::string& user);

/// cli.106: the id of the conversation of `user` in `store` that `given` names: `given` itself
/// when the store lists it, else the one id that starts with `given` or whose random part (after
/// `conv-`, ownership.1) does. None: `given` itself, for the caller's load to fail with the
/// store's kNotFound; several: Error(kInvalidArgument) listing the candidates, its message
/// starting with `option` ("--conversation").
[[nodiscard]] std::string resolve_conversation_id(const PersistentStore& store,
                                                  const std::string& user, const std::string& given,
                                                  const std::string& option);

/// chat.109, cli.107: the user's conversation saved last in `store` (latest updated_at; a tie goes
/// to the later created), if any.
[[nodiscard]] std::optional<std::string> latest_conversation(const PersistentStore& store,
                                                             const std::string& user);

/// chat.113, cli.107: the model of a command that may resume a conversation: --model, else the one
/// that last answered the resumed conversation (its prior_spec_id, persistence.22) when the
/// catalog still has it, else the config's default (config.2). `note` says why when a resumed
/// conversation's model is not used.
[[nodiscard]] const ModelSpec& chosen_model(const Args& args, const Config& config,
                                            const PersistentStore* store, const std::string& user,
                                            const std::optional<std::string>& resume,
                                            std::string& note);

}  // namespace nucleo::cli
