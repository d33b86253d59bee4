#include "commands/log_format.hpp"

#include <cstdlib>
#include <optional>

#include "args.hpp"
#include "nucleo/log.hpp"

namespace nucleo::cli {

void take_log_format(std::vector<std::string>& args) {
    std::optional<std::string> given;
    std::string where = "--log-format";
    for (std::size_t i = 0; i < args.size();) {
        if (args[i] == "--log-format") {
            if (i + 1 >= args.size()) throw UsageError{"--log-format needs a value (text or json)"};
            given = args[i + 1];
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
        } else if (args[i].starts_with("--log-format=")) {
            given = args[i].substr(13);
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            ++i;
        }
    }
    if (!given) {
        const char* env = std::getenv("NUCLEO_LOG_FORMAT");
        if (env == nullptr) return;
        given = env;
        where = "NUCLEO_LOG_FORMAT";
    }
    const auto format = log::parse_format(*given);
    if (!format) throw UsageError{where + ": unknown log format '" + *given + "' (text or json)"};
    log::set_format(*format);
}

}  // namespace nucleo::cli
