#include "config/env_expand.hpp"

#include <cstdlib>

namespace nucleo::config_internal {

std::optional<std::string> process_env(std::string_view name) {
    const std::string key(name);
    const char* value = std::getenv(key.c_str());  // NOLINT(concurrency-mt-unsafe): load time
    if (value == nullptr) return std::nullopt;
    return std::string(value);
}

namespace {

bool is_name_start(char c) {
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
bool is_name_char(char c) {
    return is_name_start(c) || (c >= '0' && c <= '9');
}

/// Index of the `}` closing the reference whose body starts at `from`, counting nested `${`;
/// `outer` references already enclose it. limits.125: refused past kMaxReferenceNesting.
std::size_t find_closing(std::string_view text, std::size_t from, int outer) {
    int depth = 1;
    for (std::size_t i = from; i < text.size(); ++i) {
        if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
            if (outer + ++depth > kMaxReferenceNesting) {
                throw ExpandError("${...} references nested deeper than " +
                                  std::to_string(kMaxReferenceNesting) +
                                  " levels (the reference nesting limit) at character " +
                                  std::to_string(i + 1));
            }
            ++i;
        } else if (text[i] == '}' && --depth == 0) {
            return i;
        }
    }
    return std::string_view::npos;
}

}  // namespace

namespace {

std::string expand(std::string_view text, const EnvLookup& lookup, int outer,
                   std::vector<std::string>* unset) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c != '$' || i + 1 >= text.size()) {
            out += c;
            continue;
        }
        if (text[i + 1] == '$') {  // "$$" is a literal "$"
            out += '$';
            ++i;
            continue;
        }
        if (text[i + 1] != '{') {
            out += c;
            continue;
        }
        const std::size_t body = i + 2;
        const std::size_t close = find_closing(text, body, outer);
        if (close == std::string_view::npos)
            throw ExpandError("unterminated \"${\" at character " + std::to_string(i + 1));
        std::size_t name_end = body;
        while (name_end < close && is_name_char(text[name_end])) ++name_end;
        const std::string_view name = text.substr(body, name_end - body);
        if (name.empty() || !is_name_start(name.front()))
            throw ExpandError("bad variable name in \"" +
                              std::string(text.substr(i, close - i + 1)) +
                              "\" (expected ${NAME} or ${NAME:-default})");
        const std::optional<std::string> value = lookup(name);
        if (name_end == close) {
            out += value.value_or("");
            if (!value && unset != nullptr) unset->emplace_back(name);
        } else if (text.substr(name_end, 2) == ":-") {
            if (value && !value->empty()) {
                out += *value;
            } else {
                out += expand(text.substr(name_end + 2, close - name_end - 2), lookup, outer + 1,
                              unset);
            }
        } else {
            throw ExpandError("unsupported operator in \"${" + std::string(name) +
                              "...}\" (only ${NAME} and ${NAME:-default} are expanded)");
        }
        i = close;
    }
    return out;
}

}  // namespace

std::string expand_env(std::string_view text, const EnvLookup& lookup,
                       std::vector<std::string>* unset) {
    return expand(text, lookup, 0, unset);
}

}  // namespace nucleo::config_internal
