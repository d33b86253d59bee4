// Reading the conversation document a subcommand is pointed at (`--in FILE`, `-` for stdin).
#pragma once

#include <string>

#include "nucleo/conversation.hpp"

namespace nucleo::cli {

/// Reads and parses the conversation document at `path` ("-" reads stdin). A missing file is
/// Error(kNotFound) naming it; a bad document is the reader's Error(kInvalidArgument) with the
/// file name put before its position ("conv.json: messages[3].blocks[1].type: ..."), so main()
/// prints one line and exits 2. Defined in commands/render.cpp.
ConversationContext load_conversation(const std::string& path);

}  // namespace nucleo::cli
