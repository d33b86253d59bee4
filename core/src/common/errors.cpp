#include "nucleo/errors.hpp"

namespace nucleo {

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
