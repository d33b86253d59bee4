// Command-line flags of the soak's programs (bench/soak): `--name value` pairs.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

namespace nucleo::soak {

class Args {
  public:
    Args(int argc, char** argv) {
        for (int i = 1; i < argc; i += 2) {
            const std::string flag = argv[i];
            if (flag.rfind("--", 0) != 0 || i + 1 >= argc) {
                throw std::invalid_argument("expected --flag value pairs, got '" + flag + "'");
            }
            values_[flag] = argv[i + 1];
        }
    }
    [[nodiscard]] bool has(const std::string& flag) const { return values_.count(flag) != 0; }
    [[nodiscard]] std::string text(const std::string& flag) const {
        const auto it = values_.find(flag);
        if (it == values_.end()) throw std::invalid_argument(flag + " is required");
        return it->second;
    }
    [[nodiscard]] std::string text(const std::string& flag, const std::string& fallback) const {
        return has(flag) ? text(flag) : fallback;
    }
    [[nodiscard]] long long number(const std::string& flag) const {
        const std::string v = text(flag);
        std::size_t used = 0;
        const long long n = std::stoll(v, &used);
        if (used != v.size())
            throw std::invalid_argument(flag + " takes a number, got '" + v + "'");
        return n;
    }
    [[nodiscard]] long long number(const std::string& flag, long long fallback) const {
        return has(flag) ? number(flag) : fallback;
    }

  private:
    std::map<std::string, std::string> values_;
};

}  // namespace nucleo::soak
