#include "args.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace nucleo::cli {

bool Args::has(const std::string& name) const { return options_.count(name) != 0; }

std::optional<std::string> Args::get(const std::string& name) const {
    auto it = options_.find(name);
    if (it == options_.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string> Args::all(const std::string& name) const {
    auto it = repeated_.find(name);
    return it == repeated_.end() ? std::vector<std::string>() : it->second;
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

namespace {

/// Optimal string alignment distance, letters compared without case: a swap of two neighbouring
/// letters ("aks" for "ask") counts 1, as a typo does.
std::size_t typo_distance(std::string_view a, std::string_view b) {
    const auto same = [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) ==
               std::tolower(static_cast<unsigned char>(y));
    };
    const std::size_t w = b.size() + 1;
    std::vector<std::size_t> d((a.size() + 1) * w);
    for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = same(a[i - 1], b[j - 1]) ? 0 : 1;
            std::size_t v = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                                      d[(i - 1) * w + j - 1] + cost});
            if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
                v = std::min(v, d[(i - 2) * w + j - 2] + 1);
            d[i * w + j] = v;
        }
    }
    return d[a.size() * w + b.size()];
}

}  // namespace

std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates) {
    if (word.empty()) return std::nullopt;
    if (std::find(candidates.begin(), candidates.end(), word) != candidates.end())
        return std::nullopt;
    const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
    const std::string* best = nullptr;
    std::size_t best_distance = limit + 1;
    for (const std::string& c : candidates) {
        const std::size_t d = typo_distance(word, c);
        if (d < best_distance) {
            best = &c;
            best_distance = d;
        }
    }
    if (best != nullptr) return *best;
    const std::string* begun = nullptr;
    for (const std::string& c : candidates) {
        if (c.size() <= word.size() || c.compare(0, word.size(), word) != 0) continue;
        if (begun != nullptr) return std::nullopt;  // more than one: no guess
        begun = &c;
    }
    if (begun != nullptr) return *begun;
    return std::nullopt;
}

std::string unknown_word(std::string_view what, std::string_view word,
                         const std::vector<std::string>& candidates) {
    std::string out = "unknown ";
    out.append(what).append(" '").append(word).append("'");
    if (auto near = did_you_mean(word, candidates)) out += " (did you mean '" + *near + "'?)";
    return out;
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
