#include "llm/threads.hpp"

#include <array>
#include <cstdint>
#include <cstdio>

#include <rapidjson/writer.h>

#include "persistence/document_json.hpp"

namespace nucleo::internal {
namespace {

/// A RapidJSON output stream that keeps nothing but two FNV-1a states, so a conversation is
/// digested as the document writes it without building its text.
class DigestStream {
  public:
    using Ch = char;
    void Put(char c) {
        const auto byte = static_cast<std::uint64_t>(static_cast<unsigned char>(c));
        low_ = (low_ ^ byte) * kPrime;
        high_ = (high_ ^ (byte + 0x9eU)) * kPrime;
    }
    void Flush() {}
    void put(std::string_view s) {
        for (char c : s) Put(c);
        Put('\0');  // a separator no JSON text holds, so adjacent fields cannot run together
    }
    [[nodiscard]] std::string hex() const {
        std::array<char, 33> out{};
        std::snprintf(out.data(), out.size(), "%016llx%016llx",
                      static_cast<unsigned long long>(high_),
                      static_cast<unsigned long long>(low_));
        return {out.data(), 32};
    }

  private:
    static constexpr std::uint64_t kPrime = 1099511628211ULL;
    std::uint64_t low_ = 14695981039346656037ULL;
    std::uint64_t high_ = 0x6c62272e07bb0142ULL;  // another start, so the halves differ
};

/// The head of a thread: what the provider fingerprints and what a continue leaves out.
void digest_head(DigestStream& s, std::string_view provider, const ModelSpec& model,
                 const ThinkingRequest& thinking, const PreparedConversation& prepared) {
    s.put(provider);
    s.put(model.wire_model);
    s.put(thinking.form);
    s.put(thinking.effort);
    rapidjson::Writer<DigestStream> w(s);
    const JsonPath root("prepared");
    w.StartArray();
    const JsonPath system = root.key("system_blocks");
    for (std::size_t i = 0; i < prepared.system_blocks.size(); ++i)
        write_block(w, prepared.system_blocks[i], system.at(i));
    const JsonPath tools = root.key("tool_definitions");
    for (std::size_t i = 0; i < prepared.tool_definitions.size(); ++i) {
        w.StartObject();
        write_tool_fields(w, prepared.tool_definitions[i], tools.at(i));
        w.EndObject();
    }
    w.EndArray();
}

void digest_turn(DigestStream& s, const PreparedTurn& turn, const JsonPath& path) {
    s.put(turn.role == TurnRole::kUser ? "user" : "assistant");
    rapidjson::Writer<DigestStream> w(s);
    w.StartArray();
    const JsonPath blocks = path.key("blocks");
    for (std::size_t i = 0; i < turn.blocks.size(); ++i)
        write_block(w, turn.blocks[i], blocks.at(i));
    w.EndArray();
}

}  // namespace

std::string thread_digest(std::string_view provider, const ModelSpec& model,
                          const ThinkingRequest& thinking, const PreparedConversation& prepared,
                          std::size_t end) {
    DigestStream s;
    digest_head(s, provider, model, thinking, prepared);
    const JsonPath turns("prepared.turns");
    for (std::size_t t = 0; t < end && t < prepared.turns.size(); ++t)
        digest_turn(s, prepared.turns[t], turns.at(t));
    return s.hex();
}

ThreadCall plan_thread(std::string_view provider, const ModelSpec& model,
                       const ThinkingRequest& thinking, const ConversationContext& conversation,
                       const PreparedConversation& prepared) {
    ThreadCall call;
    call.kind = ThreadCall::Kind::kCreate;
    // The answer the provider's thread ends with: the latest one a threaded call brought.
    const Message* answer = nullptr;
    const auto& messages = conversation.messages();
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
        if (it->incoming() && !it->provider_message_id.empty() && !it->thread_digest.empty()) {
            answer = &*it;
            break;
        }
    }
    std::size_t at = prepared.turns.size();
    if (answer != nullptr) {
        for (std::size_t t = 0; t < prepared.turns.size(); ++t) {
            if (prepared.turns[t].message_id == answer->id) {
                at = t;
                break;
            }
        }
    }
    // One pass: the digest before the answer's turn is compared, the whole one is kept.
    DigestStream s;
    digest_head(s, provider, model, thinking, prepared);
    const JsonPath turns("prepared.turns");
    std::string before;
    for (std::size_t t = 0; t < prepared.turns.size(); ++t) {
        if (t == at) before = s.hex();
        digest_turn(s, prepared.turns[t], turns.at(t));
    }
    call.digest = s.hex();
    const bool news =
        at + 1 < prepared.turns.size() && prepared.turns[at + 1].role == TurnRole::kUser;
    if (answer != nullptr && at < prepared.turns.size() && news &&
        before == answer->thread_digest) {
        call.kind = ThreadCall::Kind::kContinue;
        call.previous_message_id = answer->provider_message_id;
        call.first_new_turn = at + 1;
    }
    return call;
}

std::string provider_error_code(std::string_view error_text) {
    constexpr std::string_view kKey = "(error_code: ";
    const std::size_t at = error_text.rfind(kKey);
    if (at == std::string_view::npos) return {};
    const std::size_t begin = at + kKey.size();
    const std::size_t end = error_text.find(')', begin);
    if (end == std::string_view::npos) return {};
    return std::string(error_text.substr(begin, end - begin));
}

bool replays_thread(std::string_view error_code) {
    return error_code == "thread_not_found" || error_code == "thread_already_continued" ||
           error_code == "thread_continue_in_flight" || error_code == "thread_fingerprint_mismatch";
}

}  // namespace nucleo::internal
