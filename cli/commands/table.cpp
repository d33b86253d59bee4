#include "commands.hpp"

namespace nucleo::cli {

// Add a line per subcommand (alphabetical), and declare its function in commands.hpp.
const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"chat", run_chat, "an interactive agent session, streamed and saved (--model ID --user U --conversation ID|--new --tools-dir DIR)"},
        {"compact", run_compact, "compact a conversation to its window (--in CONV --model ID --report)"},
        {"config", run_config, "print the config with secrets shown as *** (--config FILE)"},
        {"conversations", run_conversations, "a user's stored conversations (--user U list|show|history|transcript|export|import|delete)"},
        {"demo", run_demo, "a scripted agent session over docs/: tools, cache, compaction, SQLite, restore (--docs DIR)"},
        {"models", run_models, "list the model catalog (--json, --config FILE)"},
        {"plugins", run_plugins, "list the plugins on the search path (--json, --path FILE.so|DIR)"},
        {"render", run_render, "print the wire request, or --prepared the prepared call (--in CONV --model ID)"},
        {"send", run_send, "call the model and print the updated conversation (--in CONV --model ID)"},
        {"tokens", run_tokens, "count tokens of a text or a conversation (--model ID --text S|--in F)"},
        {"transcript", run_transcript, "print a conversation as text for a reader (--in CONV)"},
        {"version", run_version, "print the version of nucleo"},
    };
    return table;
}

}  // namespace nucleo::cli
