#include "args.hpp"

#include <algorithm>
#include <exception>
#include <string>

namespace nucleo::cli {

Args::Args(const std::vector<std::string>& argv, const std::vector<std::string>& flags) {
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.rfind("--", 0) != 0 || a == "--") {
            positionals_.push_back(a);
            continue;
        }
        std::string name = a.substr(2);
        if (auto eq = name.find('='); eq != std::string::npos) {
            options_[name.substr(0, eq)] = name.substr(eq + 1);
            continue;
        }
        if (std::find(flags.begin(), flags.end(), name) != flags.end()) {
            options_[name] = "";
            continue;
        }
        if (i + 1 >= argv.size()) throw UsageError{"option --" + name + " needs a value"};
        options_[name] = argv[++i];
    }
}

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

void Args::allow_only(const std::vector<std::string>& known) const {
    for (const auto& [name, value] : options_) {
        if (std::find(known.begin(), known.end(), name) == known.end())
            throw UsageError{"unknown option --" + name};
    }
}

}  // namespace nucleo::cli
