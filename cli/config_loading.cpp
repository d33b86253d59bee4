#include "config_loading.hpp"

namespace nucleo::cli {

std::filesystem::path config_path(const Args& args) {
    if (auto given = args.get(kConfigOption)) {
        if (given->empty()) throw UsageError{"--config needs a file name"};
        return *given;
    }
    return nucleo::Config::default_path();
}

nucleo::Config load_config(const Args& args) {
    return nucleo::Config::load(config_path(args));
}

}  // namespace nucleo::cli
