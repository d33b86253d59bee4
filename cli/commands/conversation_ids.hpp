// Which stored conversation an id typed on the command line names (cli.106): the id itself, or
// a unique prefix of it.
#pragma once

#include <string>

#include "nucleo/store.hpp"

namespace nucleo::cli {

/// cli.106: the id of the conversation of `user` in `store` that `given` names: `given` itself
/// when the store lists it, else the one id that starts with `given` or whose random part (after
/// `conv-`, ownership.1) does. None: `given` itself, for the caller's load to fail with the
/// store's kNotFound; several: Error(kInvalidArgument) listing the candidates, its message
/// starting with `option` ("--conversation").
[[nodiscard]] std::string resolve_conversation_id(const PersistentStore& store,
                                                  const std::string& user, const std::string& given,
                                                  const std::string& option);

}  // namespace nucleo::cli
