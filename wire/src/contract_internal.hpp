// Helpers shared by the family modules of the rule book.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/wire/contract.hpp"
#include "shape.hpp"

namespace nucleo::contract::internal {

/// True when `text` has a character other than ASCII whitespace.
inline bool has_non_whitespace(std::string_view text) {
    // A plain loop: find_first_not_of calls memchr over the set for every character it tests,
    // and this runs for every text block of every audited request.
    for (const char c : text) {
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v') return true;
    }
    return false;
}

inline std::optional<Violation> broken(const char* rule, std::string where, std::string message) {
    return Violation{rule, std::move(where), std::move(message)};
}

/// The family rule books, over the body's Shape (wire.164).
std::optional<Violation> check_anthropic(const Shape& body);
std::optional<Violation> check_openai(const Shape& body, Scope scope);
std::optional<Violation> check_bedrock(const Shape& body);
/// Gemini's rule book over the parsed body (gemini.20-gemini.27), and the OpenAI Responses rule
/// book (responses.20-responses.27).
std::optional<Violation> check_gemini(const rapidjson::Value& body);
std::optional<Violation> check_responses(const rapidjson::Value& body);
/// The audit of a family read from the parsed body (gemini.28, wire.213): the generic checks, the
/// body parsed (or the caller's value), its `plan_checks`, then its rule book `rules`.
using ParsedCheck = std::optional<Violation> (*)(const rapidjson::Value&);
using ParsedPlanCheck = std::optional<Violation> (*)(const rapidjson::Value&, const CallPlan&);
std::optional<Violation> audit_parsed(const OutgoingRequest& request, const CallPlan& plan,
                                      ParsedPlanCheck plan_checks, ParsedCheck rules);
/// The plan checks of gemini.28 and responses.28 over a parsed body (the family's wire.161 and
/// wire.163), and the rules that read no item of `contents` / `input` (gemini.27 and gemini.20;
/// responses.20 but the items, 21, 27), each the first broken or nullopt.
std::optional<Violation> gemini_plan(const rapidjson::Value& body, const CallPlan& plan);
std::optional<Violation> responses_plan(const rapidjson::Value& body, const CallPlan& plan);
std::optional<Violation> gemini_head(const rapidjson::Value& body);
std::optional<Violation> responses_head(const rapidjson::Value& body);

/// wire.214: what the split audit keeps of one piece of a Gemini `contents` or a Responses
/// `input` (the head's first run, or a kept chunk), read once from its parsed items, so that a
/// request carrying it again checks only where it meets its neighbours. `ok` is true when every
/// rule that reads one of its items, or two adjacent ones of it, passes; false is no verdict.
struct ItemsSummary {
    bool ok = false;
    /// Responses (responses.23-25): the call_ids of the outputs with no function_call before
    /// them in the piece (each once), of the calls no output of the piece answers (in order), and
    /// whether a reasoning item lacks its encrypted_content.
    std::vector<std::string> needed;
    std::vector<std::string> pending;
    bool bare_reasoning = false;
    /// Gemini (gemini.23-26): the role and part counts of the first and last contents; whether a
    /// user content with a part other than a function response begins a turn in the piece
    /// (gemini.26), and whether a model content after the last such one (after any, when there is
    /// none) has a first function call without its thoughtSignature.
    struct End {
        bool user = false;
        std::size_t calls = 0;
        std::size_t responses = 0;
    };
    End first;
    End last;
    bool turn_starts = false;
    bool unsigned_after = false;
};
/// The summary of `items` (an array of the family's items; `first_in_request`: it holds item 0).
void gemini_summary(const rapidjson::Value& items, bool first_in_request, ItemsSummary& out);
void responses_summary(const rapidjson::Value& items, ItemsSummary& out);
/// wire.214: true when the family's whole audit passes a body made of the parsed `head` (its
/// items are the first piece) with the pieces' items after them, decided from the head, the
/// pieces' summaries (pieces[0] the head's) and where they meet; false is no verdict.
bool gemini_passes(const rapidjson::Value& head, const std::vector<const ItemsSummary*>& pieces,
                   const CallPlan& plan);
bool responses_passes(const rapidjson::Value& head, const std::vector<const ItemsSummary*>& pieces,
                      const CallPlan& plan);
/// The family's rule book over a Shape (nullopt for kUnknown).
std::optional<Violation> check_shape(const Shape& body, Scope scope);

/// The audit's checks before any byte of the body is read: path, headers, and the body's size,
/// `body_bytes`, against the cap (wire.150, wire.151, wire.153).
std::optional<Violation> generic_checks(const OutgoingRequest& request, std::size_t body_bytes,
                                        const CallPlan& plan);
/// The audit's checks over the body's records: the size limit, the plan checks and the family's
/// rule book (wire.115, wire.160-wire.163, Scope::kCore); none for kUnknown.
std::optional<Violation> body_checks(WireFamily family, std::size_t body_bytes, const Shape& shape,
                                     const CallPlan& plan);
/// wire.152's refusal of a body that is not a JSON object.
std::optional<Violation> not_an_object();

/// wire.161 and wire.163 over a body's records.
std::optional<Violation> system_check(const Shape& body, const CallPlan& plan);
std::optional<Violation> max_tokens_check(const Shape& body, const CallPlan& plan);
/// wire.161's pieces: the plan's non-blank system texts joined as the rule compares them, and
/// whether a text of a message from `from` on repeats them.
std::string system_joined(const CallPlan& plan);
bool repeats_system(const Shape& body, std::size_t from, std::string_view joined);
/// wire.160: the family's cache marks in the message blocks, and with `all` in the tools, the
/// system blocks and (Anthropic) the request-level mark too.
std::size_t breakpoint_marks(const Shape& body, bool all);

/// wire.103/104: the order of Anthropic's cache_control marks, in the API's processing order.
struct MarkOrder {
    std::size_t n = 0;
    bool short_seen = false;
    bool long_seen = false;
    bool long_after_short = false;
    void add(bool hour) {
        ++n;
        long_after_short = long_after_short || (hour && short_seen);
        short_seen = short_seen || !hour;
        long_seen = long_seen || hour;
    }
    /// The marks of `later` after these.
    void add(const MarkOrder& later) {
        n += later.n;
        long_after_short =
            long_after_short || later.long_after_short || (short_seen && later.long_seen);
        short_seen = short_seen || later.short_seen;
        long_seen = long_seen || later.long_seen;
    }
};
/// The marks of a block list (each block's, then those nested in a tool_result) added to `order`.
template <class B>
void anthropic_mark_order(const Shape& body, const std::vector<B>& list, MarkOrder& order);
/// wire.103, wire.104, wire.165 over the marks of the blocks and the request-level mark.
std::optional<Violation> anthropic_cache_control(const MarkOrder& blocks,
                                                 const Block& request_mark);

/// wire.174: what the audit of a split body keeps of one piece of a request's messages (the
/// head's first run, or a kept chunk), so that a request carrying it again checks only where it
/// meets its neighbours. `ok` is true when every rule that reads one of its messages, or two
/// adjacent ones of it, passes (a message's emptiness counted as if it were not the last);
/// false is no verdict (the request is then checked over all its records).
struct PieceSummary {
    bool ok = true;
    std::size_t marks = 0;  ///< breakpoint_marks(piece, false)
    MarkOrder order;        ///< Anthropic: its blocks' cache_control marks
    /// OpenAI: the tool_call_ids of the tool messages it begins with, whether another message
    /// follows them, and the calls the last assistant message leaves pending after it.
    std::vector<std::string_view> leading_tool_ids;
    bool has_non_tool = false;
    std::vector<std::string_view> exit_pending;
};
/// The family rules of a body that read no message (Anthropic wire.114, 101, 102, 105; OpenAI
/// wire.120, 121).
std::optional<Violation> anthropic_head(const Shape& body);
std::optional<Violation> openai_head(const Shape& body);
/// Anthropic wire.106-wire.113 as predicates over messages that may lie in different pieces.
bool anthropic_message_ok(const Shape& s, const Msg& m);
bool anthropic_first_ok(const Shape& s, const Msg& m);
bool anthropic_pair_ok(const Shape& xs, const Msg& x, const Shape& ys, const Msg& y);
bool anthropic_last_ok(const Shape& s, const Msg& m);
bool anthropic_thinking_ok(const Shape& as, const Msg& assistant, const Shape& ls, const Msg& last);
/// OpenAI wire.122-wire.125 over one piece (`first_in_request`: it holds message 0).
void openai_piece(const Shape& body, bool first_in_request, PieceSummary& out);

/// The text Anthropic models answer when thinking is on and the assistant turn of the tool loop
/// does not begin with a thinking block; `at` is "messages.N.content.0", `found` the block type.
std::string thinking_first_text(const std::string& at, std::string_view found);

}  // namespace nucleo::contract::internal
