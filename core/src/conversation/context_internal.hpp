// Internals of the conversation concern shared by its .cpp files: what the conversation's content
// already announces (tools.5: the announced set derives from the conversation content itself,
// never a side field).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "caching/cache_plan.hpp"
#include "nucleo/conversation.hpp"

namespace nucleo::internal {

/// Takes the thinking and redacted thinking blocks out of the answers from `first` on, where a
/// model that binds a thinking block to what it followed would refuse them: after compaction
/// rewrote the prefix (wire.192) and after the conversation moved to another provider platform
/// (conversation.111). An answer of thinking alone keeps it: emptied, it could not be sent at
/// all. Returns how many blocks were taken out.
std::int64_t drop_thinking_from(std::vector<Message>& messages, std::size_t first);

/// announced_in() answer for a tool whose definition sits in the objective.
inline constexpr std::string_view kAnnouncedInHead = "head";

/// The first line of a post-freeze legend stream message (the legend text follows).
inline constexpr std::string_view kLegendStreamHeader =
    "Notation legend for the answer formats that follow:";

/// Names of every ToolDefinitionBlock in the objective's values and in the messages.
std::unordered_set<std::string> announced_tool_names(const ConversationParts& state);

/// "head", the id of the first message carrying the tool's definition, or nullopt.
std::optional<std::string> find_announcement(const ConversationParts& state,
                                             std::string_view tool_name);

/// A stream companion is an app-authored outgoing message whose first block is a TextBlock
/// starting with the companion's header; recognised by content so a restored conversation knows
/// its companions without a side field.
bool is_stream_legend(const Message& message);
bool is_stream_tool_weights(const Message& message);

/// conversation.102: what reconciliation asks of the message stream, scanned once per message:
/// valid for the messages [0, scanned) of the list whose epoch is `messages_epoch`.
struct StreamScan {
    std::uint64_t messages_epoch = 0;
    std::size_t scanned = 0;
    std::unordered_set<std::string> tool_names;  ///< every ToolDefinitionBlock's name in the messages
    bool notation = false;        ///< an outgoing message's handler uses the schema notation
    bool stream_legend = false;   ///< a legend companion is in the stream
    bool stream_weights = false;  ///< a tool-weight guidance companion is in the stream
};

/// conversation.101: the PreparedConversation of the last prepare, kept to be extended by the
/// next one when the list only grew. `prepared` holds the turns of the messages [0, messages)
/// (turn i renders message i), each outgoing one with what rode it when it was sent (wire.191:
/// the registry and the answer contract, which stay); `contract_turn` is the turn this prepare
/// decorated anew. Valid while the message list's epoch, the registry's epoch, the dialect and
/// the head are those recorded.
struct KeptPrepare {
    StreamScan scan;
    bool valid = false;
    std::uint64_t messages_epoch = 0;
    std::uint64_t registry_epoch = 0;
    bool native = false;
    bool tool_changes = false;  ///< tools.103: late definitions stay in their turns
    std::size_t head_slots = 0;
    std::size_t messages = 0;
    std::optional<std::size_t> last_outgoing;
    std::optional<std::size_t> contract_turn;
    /// wire.191: the artifact registry as the latest turn that carried one was sent with it.
    std::string last_sent_registry;
    /// The turns whose message is marked cache, in order (caching.112).
    std::vector<std::size_t> marked;
    /// How many prepares extended the kept value rather than preparing every message.
    std::uint64_t extensions = 0;
    PreparedConversation prepared;
    /// caching.132: what the last prepare planned (kept across a rewrite of the list, which
    /// drops the rest), and why this prepare's plan moved a mark of it ("" when none moved).
    std::optional<caching::PlanRecord> last_plan;
    std::string plan_moved;
};

/// conversation.101: the build of a request reads the kept PreparedConversation in place instead
/// of a copy.
struct PreparedAccess {
    static const PreparedConversation& prepare(ConversationContext& c, const ContentFormatter& formatter,
                                               bool thinking_active, const CacheOptions& cache) {
        return c.prepare_in_place(formatter, thinking_active, cache);
    }
    [[nodiscard]] static const KeptPrepare* peek(const ConversationContext& c) { return c.kept_prepare_.value.get(); }
    /// True when `kept` holds the prepare of a prefix of c's list that the next prepare extends.
    [[nodiscard]] static bool extends(const ConversationContext& c, const KeptPrepare& kept,
                                      const ContentFormatter& formatter);
    /// prepare_kept into c's kept value (c reconciled and frozen already); a throw drops the value.
    static const PreparedConversation& extend_kept(ConversationContext& c, const ContentFormatter& formatter,
                                                   bool thinking_active, const CacheOptions& cache);
};

}  // namespace nucleo::internal
