// Reading a conversation as text (conversation.33).
#pragma once

#include <span>
#include <string>

#include "nucleo/content.hpp"

namespace nucleo {

class ConversationContext;

/// Transcript.render(conversation): "the conversation for a reader other than its model: every
/// message under its role, in order - the text as said, each tool call with its name and
/// arguments, each tool result against the call it answers (an error result marked), an admitted
/// skill by name, an attachment by kind. Thinking blocks are left out ... and so are tool schemas."
///
/// The layout, one paragraph per message, separated by a blank line:
///
///     user:
///     Where is order 42?
///
///     assistant:
///     [tool call search_orders (toolu_1)] {"query":"42"}
///
///     user:
///     [tool result of search_orders (toolu_1)]
///     Order 42 shipped on Monday.
///
/// An outgoing message is `user`, an incoming one `assistant` (the TurnRole names). Text and JSON
/// blocks print as said; a pojo as `TypeName {json}`; a tool call as its name, id and arguments;
/// a tool result under the name of the call it answers (`, error` inside the brackets for an error
/// result; the bare id when the call is not in the rendered messages); `[skill: NAME]`;
/// `[image: MEDIA_TYPE]`, `[file: NAME, MEDIA_TYPE]`; a tool definition announced in the stream
/// as `[tool available: NAME]` (its schema is left out); a provider's own block by its kind, as
/// `[TYPE block of WIRE_FAMILY]` (answers.110). Thinking and redacted thinking are left
/// out; a message left with nothing to show is skipped whole rather than printing an empty role.
/// The objective is never part of a transcript (conversation.33: the objective never leaks into a
/// conversation's content).
class Transcript {
  public:
    /// The conversation's messages, as above.
    static std::string render(const ConversationContext& conversation);
    /// A bare message list (a slice, a restored history), as above.
    static std::string render(std::span<const Message> messages);
};

}  // namespace nucleo
