#include "commands.hpp"

namespace nucleo::cli {

// Add a line per subcommand (alphabetical), and declare its function in commands.hpp.
const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"models", run_models, "list the model catalog (--json, --config FILE)"},
        {"version", run_version, "print the version of nucleo"},
    };
    return table;
}

}  // namespace nucleo::cli
