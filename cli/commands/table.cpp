#include "commands.hpp"

namespace nucleo::cli {

// Add a line per subcommand (alphabetical), and declare its function in commands.hpp.
const std::vector<const CommandSpec*>& commands() {
    static const std::vector<const CommandSpec*> table = {
        &ask_command(),           &chat_command(),   &compact_command(),    &config_command(),
        &conversations_command(), &demo_command(),   &logs_command(),       &mcp_command(),
        &models_command(),        &plugin_command(), &plugins_command(),    &render_command(),
        &send_command(),          &tokens_command(), &transcript_command(), &version_command(),
    };
    return table;
}

}  // namespace nucleo::cli
