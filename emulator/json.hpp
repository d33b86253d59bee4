// Small RapidJSON helpers shared by the dialects (kept out of any header a client could see).
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace nucleo::emulator::json {

using Value = rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// Parses `body`; on failure returns false and a message naming the offset and the reason.
bool parse(const std::string& body, rapidjson::Document& doc, std::string& error);

/// The member `name` of `v`, or nullptr when `v` is not an object or lacks it.
const Value* member(const Value& v, const char* name);
/// The member as a string, or `fallback` when absent or not a string.
std::string string_member(const Value& v, const char* name, std::string fallback = "");
/// The member as an integer, or `fallback` when absent or not an integer.
long long int_member(const Value& v, const char* name, long long fallback);

/// Compact JSON of `v`.
std::string write(const Value& v);
/// Compact JSON of `v` with the top-level member `skip` left out: the canonical bytes of a block
/// for prefix caching, where a cache marker is not part of the content it marks.
std::string canonical(const Value& v, std::string_view skip);

/// `s` as a JSON string literal, quotes included.
std::string quote(std::string_view s);

/// The first line of `text`, at most `max_bytes` long (cut on a UTF-8 boundary).
std::string first_line(std::string_view text, std::size_t max_bytes = 200);
/// `text` cut to at most `max_bytes` without splitting a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);
/// True when `text` has a character other than ASCII whitespace.
bool has_non_whitespace(std::string_view text);

}  // namespace nucleo::emulator::json
