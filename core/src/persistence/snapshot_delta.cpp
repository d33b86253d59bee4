// SnapshotDelta: the `changes` document of an incremental save (store.hpp,
// docs/store-documents.md).
//
// The JSON of a message or a field is what write_conversation_parts writes for it (compact), so
// applying the changes to the saved document yields write_conversation_parts(now) byte for byte.
// Only changed messages are written out; unchanged ones are compared as values.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/store.hpp"
#include "persistence/document_json.hpp"

namespace nucleo {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// Equal as the document stores them (the response handler is never persisted).
bool same_message(const Message& a, const Message& b) {
    return a.id == b.id && a.direction == b.direction && a.compactable == b.compactable &&
           a.cache == b.cache && a.app_authored == b.app_authored &&
           a.requested_output_tokens == b.requested_output_tokens && a.blocks == b.blocks;
}

bool carries_tool_definition(const Message& m) {
    for (const ContentBlock& b : m.blocks) {
        if (b.is<ToolDefinitionBlock>()) return true;
    }
    return false;
}

/// The document's top-level fields without the bulk of the messages: a tool's announced_in
/// derives from the first message carrying its definition, so those messages stay in.
/// `for_each_message(visit)` calls visit on every message of the conversation, in order.
template <class ForEachMessage>
std::string header_document(const ConversationParts& parts, ForEachMessage&& for_each_message) {
    ConversationParts head;
    head.conversation_id = parts.conversation_id;
    head.user_id = parts.user_id;
    head.workflow_id = parts.workflow_id;
    head.prior_spec_id = parts.prior_spec_id;
    head.objective = parts.objective;
    head.cache_main_objective = parts.cache_main_objective;
    head.compactable = parts.compactable;
    head.tools = parts.tools;
    head.artifacts = parts.artifacts;
    head.grade = parts.grade;
    head.depth = parts.depth;
    head.output = parts.output;
    head.sent_with = parts.sent_with;  // wire.191: a top-level field, saved as one
    for_each_message([&](const Message& m) {
        if (carries_tool_definition(m)) head.messages.push_back(m);
    });
    return write_conversation_parts(head, {.pretty = false});
}

std::string header_document(const ConversationParts& parts) {
    return header_document(parts, [&](const auto& visit) {
        for (const Message& m : parts.messages) visit(m);
    });
}

/// The document JSON of the messages at the indices `which`, one write for them all.
std::vector<std::string> message_texts(const std::vector<Message>& messages,
                                       const std::vector<std::size_t>& which) {
    ConversationParts carrier;
    carrier.messages.reserve(which.size());
    for (std::size_t i : which) carrier.messages.push_back(messages[i]);
    rapidjson::Document doc;
    internal::parse_json(doc, write_conversation_parts(carrier, {.pretty = false}));
    std::vector<std::string> out;
    for (const auto& m : doc["messages"].GetArray()) out.push_back(internal::to_json_text(m));
    return out;
}

struct PendingSplice {
    std::size_t at = 0;
    std::size_t remove = 0;
    std::vector<std::size_t> insert;  // indices into `now`
};

std::vector<PendingSplice> message_splices(const std::vector<Message>& saved,
                                           const std::vector<Message>& now) {
    // The common case -- an unchanged prefix, then appends -- needs no index: skip the prefix,
    // then index only the rest of `now`.
    std::size_t i = 0, j = 0;
    while (i < saved.size() && j < now.size() && same_message(saved[i], now[j])) ++i, ++j;
    std::unordered_map<std::string_view, std::size_t> position_now;
    for (std::size_t k = now.size(); k-- > j;) position_now[now[k].id] = k;

    std::vector<PendingSplice> out;
    std::optional<PendingSplice> open;
    auto touch = [&](std::size_t at) -> PendingSplice& {
        if (!open) open = PendingSplice{at, 0, {}};
        return *open;
    };
    auto flush = [&] {
        if (open) out.push_back(std::move(*open));
        open.reset();
    };
    while (i < saved.size() && j < now.size()) {
        if (saved[i].id == now[j].id) {
            if (same_message(saved[i], now[j])) {
                flush();
            } else {
                PendingSplice& s = touch(i);
                ++s.remove;
                s.insert.push_back(j);
            }
            ++i;
            ++j;
            continue;
        }
        auto later = position_now.find(saved[i].id);
        if (later == position_now.end() || later->second < j) {
            ++touch(i).remove;  // gone (compacted away, or rewritten under a new id)
            ++i;
        } else {
            touch(i).insert.push_back(j);  // new before a message that stays
            ++j;
        }
    }
    if (i < saved.size()) touch(i).remove += saved.size() - i;
    for (; j < now.size(); ++j) touch(saved.size()).insert.push_back(j);
    flush();
    return out;
}

/// Writes the "fields" member: every top-level field of `after_json` that differs from
/// `before_json`, then every one `before_json` has and `after_json` lacks.
std::size_t write_fields(Writer& w, const std::string& before_json, const std::string& after_json) {
    rapidjson::Document before;
    rapidjson::Document after;
    internal::parse_json(before, before_json);
    internal::parse_json(after, after_json);
    std::size_t changed = 0;
    w.Key("fields");
    w.StartArray();
    std::size_t index = 0;
    for (auto m = after.MemberBegin(); m != after.MemberEnd(); ++m, ++index) {
        const std::string_view key(m->name.GetString(), m->name.GetStringLength());
        if (key == "messages") continue;
        auto old = before.FindMember(m->name);
        if (old != before.MemberEnd() && old->value == m->value) continue;
        const std::string text = internal::to_json_text(m->value);
        w.StartObject();
        w.Key("key");
        w.String(key.data(), static_cast<rapidjson::SizeType>(key.size()));
        w.Key("index");
        w.Uint64(index);
        w.Key("value");
        w.RawValue(text.data(), text.size(), m->value.GetType());
        w.EndObject();
        ++changed;
    }
    index = 0;
    for (auto m = before.MemberBegin(); m != before.MemberEnd(); ++m, ++index) {
        if (after.HasMember(m->name)) continue;
        w.StartObject();
        w.Key("key");
        w.String(m->name.GetString(), m->name.GetStringLength());
        w.Key("index");
        w.Uint64(index);
        w.Key("removed");
        w.Bool(true);
        w.EndObject();
        ++changed;
    }
    w.EndArray();
    return changed;
}

}  // namespace

SnapshotDelta SnapshotDelta::between(const ConversationParts& saved, const ConversationParts& now) {
    SnapshotDelta delta;
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartObject();
    // Top-level fields: compared as the writer writes them; "messages" is the splices' business.
    delta.fields_changed_ = write_fields(w, header_document(saved), header_document(now));

    w.Key("messages");
    w.StartArray();
    for (const PendingSplice& s : message_splices(saved.messages, now.messages)) {
        w.StartObject();
        w.Key("at");
        w.Uint64(s.at);
        w.Key("remove");
        w.Uint64(s.remove);
        w.Key("insert");
        w.StartArray();
        if (!s.insert.empty()) {
            for (const std::string& text : message_texts(now.messages, s.insert)) {
                w.RawValue(text.data(), text.size(), rapidjson::kObjectType);
            }
        }
        w.EndArray();
        w.EndObject();
        ++delta.splices_;
        delta.inserted_ += s.insert.size();
        delta.removed_ += s.remove;
    }
    w.EndArray();
    w.EndObject();
    delta.changes_json_.assign(buffer.GetString(), buffer.GetSize());
    return delta;
}

SnapshotDelta::Header SnapshotDelta::header_of(const ConversationParts& parts) {
    Header header;
    for (std::size_t i = 0; i < parts.messages.size(); ++i) {
        if (carries_tool_definition(parts.messages[i])) header.definitions.push_back(i);
    }
    header.document = header_document(parts);
    return header;
}

SnapshotDelta SnapshotDelta::appended(const ConversationParts& saved,
                                      const ConversationParts& now_without_messages,
                                      const std::vector<Message>& messages) {
    Header now;
    return appended(header_of(saved), saved.messages.size(), now_without_messages, messages, now);
}

SnapshotDelta SnapshotDelta::appended(const Header& saved, std::size_t saved_count,
                                      const ConversationParts& now_without_messages,
                                      const std::vector<Message>& messages, Header& now_header) {
    // persistence.108: the prefix is saved's (the caller vouches for it), so the only splice
    // between() would find is the append itself, at the end of the saved list. persistence.111:
    // the saved messages carrying tool definitions are known by position, so nothing walks them.
    const std::size_t from = saved_count;
    if (messages.size() < from)
        throw Error(ErrorKind::kInvalidArgument,
                    "SnapshotDelta::appended: " + std::to_string(messages.size()) +
                        " messages now, fewer than the " + std::to_string(from) + " saved");
    SnapshotDelta delta;
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartObject();
    Header next;
    next.definitions = saved.definitions;
    for (std::size_t k = from; k < messages.size(); ++k) {
        if (carries_tool_definition(messages[k])) next.definitions.push_back(k);
    }
    next.document = header_document(now_without_messages, [&](const auto& visit) {
        for (std::size_t i : next.definitions) visit(messages[i]);
    });
    const std::string& after = next.document;
    delta.fields_changed_ = write_fields(w, saved.document, after);
    w.Key("messages");
    w.StartArray();
    if (messages.size() > from) {
        std::vector<std::size_t> added(messages.size() - from);
        for (std::size_t k = 0; k < added.size(); ++k) added[k] = from + k;
        w.StartObject();
        w.Key("at");
        w.Uint64(from);
        w.Key("remove");
        w.Uint64(0);
        w.Key("insert");
        w.StartArray();
        for (const std::string& text : message_texts(messages, added))
            w.RawValue(text.data(), text.size(), rapidjson::kObjectType);
        w.EndArray();
        w.EndObject();
        delta.splices_ = 1;
        delta.inserted_ = added.size();
    }
    w.EndArray();
    w.EndObject();
    delta.changes_json_.assign(buffer.GetString(), buffer.GetSize());
    now_header = std::move(next);
    return delta;
}

}  // namespace nucleo
