// Internals of the conformance kit shared by its batteries (cli/conformance).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "conformance/kit.hpp"
#include "nucleo/plugin.h"

namespace nucleo::conformance::detail {

/// The kit's sink of one call (abi.124): its context is a call number, refused once the call
/// returned, and every refused write is remembered so the case that provoked it reports it.
class Sink {
public:
    Sink(std::string& out, std::string slot);
    ~Sink();
    Sink(const Sink&) = delete;
    Sink& operator=(const Sink&) = delete;
    [[nodiscard]] const nucleo_sink* get() const noexcept { return &sink_; }

private:
    nucleo_sink sink_{};
    std::uint64_t id_ = 0;
};

/// The slots whose sinks were written after their call returned, since the last call; emptied.
std::vector<std::string> take_late_writes();

/// A caller-owned error prepared so an unterminated or absent message shows: message[0] is NUL
/// as plugin.h asks, the rest is filled with a non-NUL byte.
nucleo_error fresh_error() noexcept;

/// What a failed call left in its error, checked against abi.12: code equal to the status, a
/// NUL-terminated, non-empty, one-line message. Empty when it is all right.
std::string error_problem(int32_t status, const nucleo_error& err);

/// The message of an error as text (up to its NUL or the end of the buffer).
std::string error_text(const nucleo_error& err);

/// "NUCLEO_ERR_PROTOCOL (9)".
std::string status_name(int32_t status);

/// Parses JSON with UTF-8 validation; false and a reason when it is not.
bool parse_json(std::string_view text, rapidjson::Document& doc, std::string& why);

/// abi.125: the problem of a normalized response (answers.101, answers.106), or "".
std::string answer_problem(const rapidjson::Value& answer);
/// abi.125: the problem of a decode_event document ({"deltas":[...]}), or "".
std::string deltas_problem(const rapidjson::Value& doc);
/// The first difference of `got` from `expected`, comparing only the members `expected` names
/// (arrays element by element and of the same length), or "".
std::string subset_difference(const rapidjson::Value& expected, const rapidjson::Value& got,
                              const std::string& where);

/// Compact JSON text of a value.
std::string to_json(const rapidjson::Value& value);
/// At most `n` bytes of `text`, with "..." when cut, on one line.
std::string excerpt(std::string_view text, std::size_t n = 160);

/// The exported dynamic symbols a shared object defines (its .dynsym, defined, global or weak,
/// default or protected visibility); throws std::runtime_error when the file is not ELF.
std::vector<std::string> exported_symbols(const std::string& file);

}  // namespace nucleo::conformance::detail
