// The conversation document, schema_version 1 (conversation.30-32, docs/conversation-document.md).
//
// One JSON form of a conversation serves as the snapshot a store keeps, the input of
// `nucleo render` and the other CLI verbs, and the fixture format of tests. Its C++ value is
// ConversationParts (conversation.hpp): everything a ConversationContext holds that outlives the
// instance, field for field. docs/conversation-document.md describes every field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nucleo/content.hpp"
#include "nucleo/conversation.hpp"

namespace nucleo {

/// The schema_version this build reads and writes.
inline constexpr int kConversationDocumentVersion = 1;

/// How a document is laid out as text.
struct DocumentWriteOptions {
    /// Two-space indented, one field per line (diffs well); false writes one compact line.
    bool pretty = true;
};

/// Reads a document into parts. Fields left out take the document's defaults (compactable true,
/// cache_main_objective true; per message compactable true, cache false, app_authored false).
/// Unknown fields are ignored. Refused with Error(kInvalidArgument) and a message that starts with
/// the position: malformed JSON ("byte offset 17: ..."), a wrong type ("messages[0].cache:
/// expected a boolean, found a string"), an unknown block type or direction
/// ("messages[3].blocks[1].type: unknown block type \"video\""), a duplicate message id, tool or
/// objective key (both positions named), a tool_result whose tool_use_id no tool_use of the
/// document carries, an unsupported schema_version. Nothing is silently relabelled or dropped
/// (dropping orphans is the store-restore path's job, not the reader's).
ConversationParts read_conversation_parts(std::string_view json);

/// The store-restore variant (persistence.20: restoration drops any
/// tool_result whose tool_use id appears nowhere in the transcript): every other refusal
/// stands, but an orphan tool_result is dropped instead of refused and its tool_use_id appended to
/// `*dropped_orphans` in document order (the caller logs them once). A message left without
/// blocks is dropped with it — an empty turn is refused by every provider — and the
/// `declared_at` of tools declared after it moves back accordingly. With a null pointer this is
/// read_conversation_parts(json).
ConversationParts read_conversation_parts(std::string_view json,
                                          std::vector<std::string>* dropped_orphans);

/// read_conversation_parts, then ConversationContext::from_parts: a restored conversation, not
/// frozen (conversation.15: the freeze is instance-lifetime and never persists).
ConversationContext read_conversation_document(std::string_view json);

/// Writes parts as a document: fields in a fixed order, defaults written out, JSON-valued fields
/// re-emitted canonically, so equal parts give byte-identical text and
/// write(read(write(p))) == write(p). Each tool's `announced_in` is derived from the content (a
/// `tool:<name>` slot of the head, else the first message carrying its ToolDefinitionBlock), never
/// from a side field (tools.5). Refuses (kInvalidArgument, with the position) a
/// JSON-valued field whose text is not JSON. A message's response handler and the freeze are
/// never written.
std::string write_conversation_parts(const ConversationParts& parts,
                                     const DocumentWriteOptions& options = {});

/// write_conversation_parts(conversation.parts()).
std::string write_conversation_document(const ConversationContext& conversation,
                                        const DocumentWriteOptions& options = {});

/// Reads one content block from its document JSON (`{"type": "text", "text": "..."}`); `where`
/// prefixes error positions.
ContentBlock read_content_block(std::string_view json, std::string_view where = "block");
/// Writes one content block as the document does (compact).
std::string write_content_block(const ContentBlock& block);

}  // namespace nucleo
