// `nucleo config [--config FILE]`: the loaded config after ${VAR} expansion and includes, as
// YAML with every secret shown as `***` (a secret never reaches a log or an error
// message). Which file was read is the first line, so the lookup order can be checked.
#include <iostream>

#include "args.hpp"
#include "commands.hpp"
#include "config_loading.hpp"

namespace nucleo::cli {

int run_config(const Argv& argv) {
    Args args(argv, {});
    args.allow_only({kConfigOption});
    if (!args.positionals().empty())
        throw UsageError{"unexpected argument '" + args.positionals()[0] + "'"};
    std::cout << load_config(args).redacted();
    return kExitOk;
}

}  // namespace nucleo::cli
