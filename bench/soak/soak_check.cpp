// The soak's verdict from the database alone (soak_check.hpp).
#include "soak_check.hpp"

#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::soak {
namespace {

constexpr std::size_t kProblemsKept = 20;

void problem(CheckReport& r, std::string what) {
    if (r.problems.size() < kProblemsKept) r.problems.push_back(std::move(what));
}

/// The tool_use ids of `messages` with no tool_result after them.
std::size_t orphan_tool_uses(const std::vector<Message>& messages) {
    std::set<std::string> open;
    for (const Message& m : messages) {
        for (const ContentBlock& b : m.blocks) {
            if (const auto* use = b.get_if<ToolUseBlock>()) open.insert(use->id);
            if (const auto* result = b.get_if<ToolResultBlock>()) open.erase(result->tool_use_id);
        }
    }
    return open.size();
}

/// The soak turn a message opens: its tag and base, from "[soak <tag> base=<n>] ...".
struct TurnMark {
    std::string tag;
    long long base = -1;
};
std::optional<TurnMark> turn_mark(const Message& m) {
    if (!m.outgoing() || m.blocks.empty()) return std::nullopt;
    const auto* text = m.blocks.front().get_if<TextBlock>();
    if (text == nullptr || text->text.rfind("[soak ", 0) != 0) return std::nullopt;
    const std::string& t = text->text;
    const std::size_t space = t.find(' ', 6);
    const std::size_t close = t.find(']', 6);
    if (space == std::string::npos || close == std::string::npos || space > close) {
        return std::nullopt;
    }
    TurnMark mark;
    mark.tag = t.substr(6, space - 6);
    const std::string base = t.substr(space + 1, close - space - 1);
    if (base.rfind("base=", 0) == 0) mark.base = std::stoll(base.substr(5));
    return mark;
}

std::string host_of(const std::string& tag) {
    return tag.substr(0, tag.find('/'));
}

/// What the database holds of one conversation: the hash of each version's document.
struct Stored {
    std::map<std::string, std::uint64_t> hash_by_version;
    std::set<std::uint64_t> hashes;
};

/// Reads one conversation's versions, checking the chain, the tool pairs and the turns.
Stored check_conversation(const PersistentStore& store, const std::string& user,
                          const std::string& id, CheckReport& r) {
    Stored stored;
    VersionHistory history;
    try {
        history = store.history(user, id);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::kNotFound) return stored;
        throw;
    }
    ++r.conversations;
    std::vector<Message> previous;
    for (std::size_t i = 0; i < history.versions.size(); ++i) {
        const std::string& version = history.versions[i].version;
        ++r.versions;
        if (version != std::to_string(i + 1)) {
            ++r.forks;
            problem(r, id + ": version " + std::to_string(i + 1) + " is named '" + version + "'");
        }
        const std::string document = store.load_version_document(user, id, version);
        const std::uint64_t hash = fnv1a(document);
        stored.hash_by_version[version] = hash;
        stored.hashes.insert(hash);
        std::vector<Message> messages = read_conversation_parts(document).messages;
        bool extends = messages.size() >= previous.size();
        for (std::size_t m = 0; extends && m < previous.size(); ++m) {
            extends = messages[m].id == previous[m].id &&
                      messages[m].direction == previous[m].direction &&
                      messages[m].blocks == previous[m].blocks;
        }
        if (!extends) {
            ++r.forks;
            problem(r, id + ": version " + version + " does not extend version " +
                           std::to_string(i) + "'s messages");
        }
        if (const std::size_t orphans = orphan_tool_uses(messages); orphans != 0) {
            ++r.orphan_tool_uses;
            problem(r, id + ": version " + version + " holds " + std::to_string(orphans) +
                           " tool_use without its tool_result");
        }
        previous = std::move(messages);
    }
    // The turns of the latest version (every earlier one is its prefix, checked above).
    std::set<std::string> tags;
    std::string last_host;
    for (std::size_t m = 0; m < previous.size(); ++m) {
        const auto mark = turn_mark(previous[m]);
        if (!mark) continue;
        ++r.turns;
        if (mark->base != static_cast<long long>(m) || !tags.insert(mark->tag).second) {
            ++r.stale_writes;
            problem(r, id + ": turn " + mark->tag + " written from base " +
                           std::to_string(mark->base) + " sits at message " + std::to_string(m));
        }
        const std::string host = host_of(mark->tag);
        if (!last_host.empty() && host != last_host) ++r.handoffs;
        last_host = host;
    }
    return stored;
}

}  // namespace

CheckReport check_database(const PersistentStore& store, const Pool& pool,
                           const std::vector<HostLog>& logs) {
    CheckReport r;
    std::unordered_map<std::string, Stored> stored;
    for (int k = 0; k < pool.size; ++k) {
        const std::string user = pool.prefix + "-user-" + std::to_string(k % pool.users);
        const std::string id = pool.prefix + "-conv-" + std::to_string(k);
        stored[id] = check_conversation(store, user, id, r);
    }
    std::set<std::pair<std::string, std::string>> named;  // (conversation, version) acknowledged
    for (const HostLog& log : logs) {
        for (const AckRecord& ack : log.acks) {
            ++r.acks;
            if (!ack.version.empty()) named.emplace(ack.conversation, ack.version);
            const auto it = stored.find(ack.conversation);
            bool present = false;
            if (it != stored.end()) {
                if (ack.version.empty()) {
                    present = it->second.hashes.count(ack.hash) != 0;
                } else {
                    const auto v = it->second.hash_by_version.find(ack.version);
                    present = v != it->second.hash_by_version.end() && v->second == ack.hash;
                }
            }
            if (!present) {
                ++r.lost_acks;
                problem(r, ack.conversation + ": the save of turn " + ack.tag +
                               " acknowledged as " +
                               (ack.version.empty() ? "committed" : "version " + ack.version) +
                               " is not in the database");
            }
        }
    }
    for (const auto& [id, versions] : stored) {
        for (const auto& [version, hash] : versions.hash_by_version) {
            if (named.count({id, version}) == 0) ++r.unacknowledged_versions;
        }
    }
    return r;
}

}  // namespace nucleo::soak
