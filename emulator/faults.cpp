#include "faults.hpp"

#include <charconv>
#include <stdexcept>

namespace nucleo::emulator {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

int parse_count(std::string_view item, std::string_view digits) {
    int value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc{} || end != digits.data() + digits.size() || value < 0) {
        throw std::invalid_argument("x-emulator-fault: '" + std::string(item) +
                                    "' needs a non-negative integer");
    }
    return value;
}

}  // namespace

Faults Faults::parse(std::string_view spec) {
    Faults f;
    while (!spec.empty()) {
        const auto comma = spec.find(',');
        const std::string_view item = trim(spec.substr(0, comma));
        spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
        if (item.empty()) continue;
        if (item == "429") {
            f.rate_limited = true;
        } else if (item == "500") {
            f.server_error = true;
        } else if (item == "529" || item == "overloaded") {
            f.overloaded = true;
        } else if (item == "truncate") {
            f.truncate = true;
        } else if (item == "malformed") {
            f.malformed = true;
        } else if (item == "always-tool") {
            f.tool_rounds = -1;
        } else if (item == "tool-cycle") {
            f.tool_cycle = true;
        } else if (item == "thread-lost") {
            f.thread_lost = true;
        } else if (item == "thread-busy") {
            f.thread_busy = true;
        } else if (item.starts_with("tool-rounds=")) {
            f.tool_rounds = parse_count(item, item.substr(12));
        } else if (item.starts_with("delay=")) {
            f.delay_ms = parse_count(item, item.substr(6));
        } else if (item.starts_with("retry-after=")) {
            f.retry_after_s = parse_count(item, item.substr(12));
        } else if (item.starts_with("fail-first=")) {
            std::string_view rest = item.substr(11);
            const auto colon = rest.find(':');
            f.fail_first = parse_count(item, rest.substr(0, colon));
            if (colon != std::string_view::npos) {
                f.fail_status = parse_count(item, rest.substr(colon + 1));
                if (f.fail_status != 429 && f.fail_status != 500 && f.fail_status != 529) {
                    throw std::invalid_argument("x-emulator-fault: '" + std::string(item) +
                                                "': the status must be 429, 500 or 529");
                }
            }
        } else {
            throw std::invalid_argument(
                "x-emulator-fault: unknown fault '" + std::string(item) +
                "' (known: 429, 500, 529, delay=MS, truncate, malformed, fail-first=N[:STATUS], "
                "retry-after=S, always-tool, tool-rounds=N, tool-cycle, thread-lost, thread-busy)");
        }
    }
    return f;
}

std::int64_t FailFirstCounter::next(const std::string& identity) {
    std::lock_guard lock(mu_);
    return ++calls_[identity];
}

void FailFirstCounter::clear() {
    std::lock_guard lock(mu_);
    calls_.clear();
}

}  // namespace nucleo::emulator
