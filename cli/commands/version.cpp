#include <iostream>

#include "args.hpp"
#include "commands.hpp"
#include "nucleo/version.hpp"

namespace nucleo::cli {

int run_version(const Argv& argv) {
    Args args(argv, {});
    args.allow_only({});
    std::cout << "nucleo " << nucleo::version() << " (plugin ABI " << NUCLEO_PLUGIN_ABI_MAJOR << "."
              << NUCLEO_PLUGIN_ABI_MINOR << ")\n";
    return kExitOk;
}

}  // namespace nucleo::cli
