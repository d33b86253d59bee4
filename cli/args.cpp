#include "args.hpp"

#include <cstdlib>
#include <exception>
#include <string>

namespace nucleo::cli {

bool Args::has(const std::string& name) const { return options_.count(name) != 0; }

std::optional<std::string> Args::get(const std::string& name) const {
    auto it = options_.find(name);
    if (it == options_.end()) return std::nullopt;
    return it->second;
}

std::string Args::require(const std::string& name) const {
    auto v = get(name);
    if (!v) throw UsageError{"missing required option --" + name};
    return *v;
}

std::int64_t parse_positive(const std::string& what, const std::string& value) {
    try {
        std::size_t used = 0;
        const long long n = std::stoll(value, &used);
        if (used == value.size() && n > 0) return n;
    } catch (const std::exception&) {
    }
    throw UsageError{what + " must be a positive whole number, got '" + value + "'"};
}

std::string count_of(std::int64_t n, std::string_view singular, std::string_view plural) {
    std::string out = std::to_string(n) + " ";
    if (n == 1) return out.append(singular);
    if (plural.empty()) return out.append(singular).append("s");
    return out.append(plural);
}

std::string default_user() {
    const char* user = std::getenv("USER");
    return user != nullptr && *user != '\0' ? user : "local";
}

OptionSpec config_option() {
    return {"--config", "FILE",
            "the config file (default: $NUCLEO_CONFIG, else ./config/nucleo.yaml, else the "
            "installed one)"};
}

OptionSpec json_option() {
    return {"--json", "", "print one compact JSON document (schema: docs/cli-json.md)"};
}

}  // namespace nucleo::cli
