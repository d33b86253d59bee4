// Internal: the JSON form of a PreparedConversation — what `nucleo render --prepared` prints, what
// bench/prepare serializes, and the `prepared` member of the request document a provider plugin's
// encode slot reads (core/src/llm/provider_client.cpp, docs/provider-abi-documents.md). It shows
// the core's decisions as data (channel.14, caching.1). Because
// plugins read it across the ABI, its shape only grows: add fields, never rename or drop one.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/wire/json_escape.hpp"
#include "nucleo/prepared.hpp"

namespace nucleo::internal {

/// The prepared conversation as JSON, fields in this order:
///
///     {"system_blocks": [BLOCK...], "cache_system": true, "native_tools": true,
///      "cache_plan": {"breakpoints": 2, "system_block": 0 | null,
///                     "turn_anchors": [{"turn": 0, "block": 0}]},
///      "tool_definitions": [{"name", "description", "schema": {...}}],
///      "turns": [{"role": "user" | "assistant", "message_id": "m1", "cache": true,
///                 "blocks": [BLOCK...]}]}
///
/// Blocks are written as the conversation document writes them (docs/conversation-document.md:
/// Anthropic field names). A role is only ever "user" or "assistant": it is TurnRole::name().
/// Refuses (kInvalidArgument, with the position) a JSON-valued field whose text is not JSON.
std::string prepared_to_json(const PreparedConversation& prepared, bool pretty = false);

/// answers.110: which provider blocks (ProviderBlock) a request document carries. nullopt: all of
/// them (the prepared value as it is); else only those of that wire family (an empty one: none),
/// the others left out with the plan's anchors renumbered, and a turn left with no block written
/// with one text block saying what was left out (a provider refuses an empty turn).
using ProviderBlocksKept = std::optional<std::string_view>;

/// The same document written into `writer` as one value, so a caller that embeds it (the
/// provider request) writes the prepared conversation once, into the text the plugin reads.
void write_prepared_json(json_escape::StringWriter& writer, const PreparedConversation& prepared,
                         ProviderBlocksKept kept = std::nullopt);

/// answers.110: how many provider blocks of `prepared` a request keeping `kept` leaves out.
[[nodiscard]] std::size_t provider_blocks_left_out(const PreparedConversation& prepared,
                                                   std::string_view kept);

/// A part of the prepared conversation for a split request (abi.108): the turns [first, end),
/// the plan's anchors among them renumbered from `first`, and, with `with_head`, the system
/// blocks with the system and request-level cache marks; without it the system blocks are empty
/// and neither mark is written. "breakpoints" counts what is written. Tool definitions, the
/// cache_system and native_tools flags are always those of the whole conversation.
struct PreparedSlice {
    std::size_t first = 0;
    std::size_t end = static_cast<std::size_t>(-1);
    bool with_head = true;
};

/// The document of `slice` (see PreparedSlice), in the same shape and order.
void write_prepared_json(json_escape::StringWriter& writer, const PreparedConversation& prepared,
                         const PreparedSlice& slice, ProviderBlocksKept kept = std::nullopt);

}  // namespace nucleo::internal
