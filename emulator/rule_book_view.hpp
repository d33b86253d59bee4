// The request as the rule book of wire/ reads it when it holds mid-conversation system messages
// (docs/emulator.md "Mid-conversation system messages and tool changes"). The rule book knows
// the user and assistant roles only (wire.106-wire.113); a system message that passed its own
// checks sits right after a user turn (or a paused assistant turn), so its blocks are read as
// part of that turn: its text blocks keep the rule book's checks (wire.110), its cache marks are
// counted in request order (wire.103, wire.104), and the turns around it still alternate. A
// directive-only message renders nothing and is left out; the assistant turn that continues a
// paused one after a system message is read as part of it. The rule book's places
// (`messages.I`, `messages.I.content.J`) are then mapped back to the request as sent.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <string>
#include <vector>

#include "json.hpp"

namespace nucleo::emulator {

class RuleBookView {
  public:
    /// `doc` must outlive the view. With `fold` false (a model that takes no system message), or
    /// a body without one, the body is read as it is: the rule book refuses the role (wire.106).
    RuleBookView(const json::Value& doc, bool fold);

    /// The body the rule book checks.
    const json::Value& body() const { return folded_ ? view_ : original_; }

    /// `message` (a rule book text) with a leading `messages.I` or `messages.I.content.J` of the
    /// view replaced by the place in the request as sent: a block's own message, and for a whole
    /// message the last turn read into it (the continuation of a paused turn, whose tool_use the
    /// rule book speaks of).
    std::string in_request(const std::string& message) const;

  private:
    /// A run of blocks of a view message that came from one message of the request.
    struct Part {
        std::size_t message;      ///< its index in the request
        std::size_t first_block;  ///< where its blocks start in the view message
        bool system;              ///< a system message's blocks
    };

    const json::Value& original_;
    rapidjson::Document view_;
    bool folded_ = false;
    std::vector<std::vector<Part>> parts_;  ///< per view message, in block order
};

}  // namespace nucleo::emulator
