#include "commands.hpp"

namespace nucleo::cli {

// Add a line per subcommand (alphabetical), and declare its function in commands.hpp.
const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"config", run_config, "print the config with secrets shown as *** (--config FILE)"},
        {"models", run_models, "list the model catalog (--json, --config FILE)"},
        {"plugins", run_plugins, "list the plugins on the search path (--json, --path FILE.so|DIR)"},
        {"render", run_render, "print the prepared call as JSON (--in CONV --model ID --prepared)"},
        {"transcript", run_transcript, "print a conversation as text for a reader (--in CONV)"},
        {"version", run_version, "print the version of nucleo"},
    };
    return table;
}

}  // namespace nucleo::cli
