#include "commands.hpp"

namespace nucleo::cli {

// Add a line per subcommand (alphabetical), and declare its function in commands.hpp.
const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"version", run_version, "print the version of nucleo"},
    };
    return table;
}

}  // namespace nucleo::cli
