// Error kinds of the runtime.
//
// The output budget (budget.2, budget.8), compaction (compaction.21) and the stores (persistence.4)
// raise these; the core throws them and never lets them cross the C ABI (plugin.hpp turns them
// into nucleo_error structs at the trampoline).
#pragma once

#include <stdexcept>
#include <string>

namespace nucleo {

/// What went wrong, coarse enough for a caller to act on. Mirrors nucleo_error.code in plugin.h.
enum class ErrorKind {
    kInvalidArgument,   ///< bad input from the caller: names what and where
    kNotFound,          ///< a conversation, model, plugin or file that is not there
    kNotImplemented,    ///< a surface a store or plugin has not built (persistence.4: never empty)
    kConfig,            ///< configuration refused (file:line:column and key path in the message)
    kPlugin,            ///< a plugin refused to load or failed a call
    kRateLimited,       ///< provider answered 429; retry_after may be set
    kOverloaded,        ///< provider overloaded (529) or 5xx
    kTransport,         ///< network, timeout, cancellation
    kProtocol,          ///< a response that is not what the wire format promises
    kUncorrectable,     ///< UncorrectableLLMException and its kin
    kContextOverflow,   ///< ContextOverflowException
    kOwnership,         ///< a conversation owned by another job or host
    kInternal,
    kOutputTruncated,   ///< OutputTruncationRetryException: retry once with the raised budget
};

/// Base of every error the core throws.
class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    [[nodiscard]] ErrorKind kind() const noexcept { return kind_; }

private:
    ErrorKind kind_;
};

/// An error a retry cannot fix (a seat that declared no output budget, a truncation at
/// the model's own ceiling). Parent agents see it and adapt.
class UncorrectableLLMException : public Error {
public:
    explicit UncorrectableLLMException(const std::string& message)
        : Error(ErrorKind::kUncorrectable, message) {}

protected:
    UncorrectableLLMException(ErrorKind kind, const std::string& message) : Error(kind, message) {}
};

/// The runtime flavour of the same error (budget.8 names it UncorrectableRuntimeLLMException); in
/// C++ one type serves both, and the alias keeps that name searchable.
using UncorrectableRuntimeLLMException = UncorrectableLLMException;

/// compaction.21: even MAXIMUM compaction cannot bring input plus the output
/// reserve inside the model's hard context. An UncorrectableLLMException.
class ContextOverflowException : public UncorrectableLLMException {
public:
    explicit ContextOverflowException(const std::string& message)
        : UncorrectableLLMException(ErrorKind::kContextOverflow, message) {}
};

/// persistence.4: planned-but-unbuilt store surface refuses loudly.
class NotImplementedException : public Error {
public:
    explicit NotImplementedException(const std::string& message)
        : Error(ErrorKind::kNotImplemented, message) {}
};

/// Readable name of a kind ("invalid_argument", ...), as used in logs and the CLI.
const char* to_string(ErrorKind kind) noexcept;

}  // namespace nucleo
