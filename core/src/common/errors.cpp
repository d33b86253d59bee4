#include "nucleo/errors.hpp"

namespace nucleo {

const std::vector<CallAttempt>& Error::billed_calls() const noexcept {
    static const std::vector<CallAttempt> kNone;
    return billed_ ? *billed_ : kNone;
}

Usage Error::billed_usage() const noexcept {
    Usage sum;
    for (const CallAttempt& a : billed_calls()) sum += a.usage;
    return sum;
}

double Error::billed_cost() const noexcept {
    double sum = 0;
    for (const CallAttempt& a : billed_calls()) sum += a.cost;
    return sum;
}

void Error::set_billed_calls(std::vector<CallAttempt> calls) {
    billed_ = calls.empty() ? nullptr : std::make_shared<const std::vector<CallAttempt>>(std::move(calls));
}

const char* to_string(ErrorKind kind) noexcept {
    switch (kind) {
        case ErrorKind::kInvalidArgument: return "invalid_argument";
        case ErrorKind::kNotFound: return "not_found";
        case ErrorKind::kNotImplemented: return "not_implemented";
        case ErrorKind::kConfig: return "config";
        case ErrorKind::kPlugin: return "plugin";
        case ErrorKind::kRateLimited: return "rate_limited";
        case ErrorKind::kOverloaded: return "overloaded";
        case ErrorKind::kTransport: return "transport";
        case ErrorKind::kProtocol: return "protocol";
        case ErrorKind::kUncorrectable: return "uncorrectable";
        case ErrorKind::kContextOverflow: return "context_overflow";
        case ErrorKind::kOwnership: return "ownership";
        case ErrorKind::kOutputTruncated: return "output_truncated";
        case ErrorKind::kInternal: return "internal";
    }
    return "unknown";
}

}  // namespace nucleo
