// Reading the conversation document v1 (conversation.31). Every refusal names its position;
// nothing is relabelled or dropped.
#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "conversation/context_internal.hpp"
#include "nucleo/document.hpp"
#include "persistence/document_json.hpp"

namespace nucleo {

namespace {

using internal::expect_array;
using internal::expect_object;
using internal::find_member;
using internal::JsonPath;
using internal::optional_bool;
using internal::optional_string;
using internal::refuse;
using internal::required_string;
using rapidjson::Value;

/// Iterates an optional array member, calling fn(element, path) for each element.
template <typename Fn>
void for_each_element(const Value& object, const char* name, const JsonPath& path, Fn&& fn) {
    const Value* array = find_member(object, name);
    if (!array) return;
    const JsonPath array_path = path.key(name);
    expect_array(*array, array_path);
    for (rapidjson::SizeType i = 0; i < array->Size(); ++i) fn((*array)[i], array_path.at(i));
}

/// An upper-case enum name ("MEDIUM") parsed by `parse`, refused with the accepted names.
template <typename Enum, typename Parse>
Enum read_enum(const Value& object, const char* name, const JsonPath& path, Parse parse,
               const char* accepted) {
    const std::string text = required_string(object, name, path);
    auto parsed = parse(text);
    if (!parsed) {
        refuse(path.key(name), "unknown value \"" + text + "\" (expected one of " + accepted + ")");
    }
    return *parsed;
}

std::int64_t read_positive_int(const Value& v, const JsonPath& path) {
    if (!v.IsInt64()) refuse(path, "expected an integer");
    const std::int64_t n = v.GetInt64();
    if (n <= 0) refuse(path, "expected a positive token count, found " + std::to_string(n));
    return n;
}

ObjectiveSlot read_slot(const Value& v, const JsonPath& path) {
    expect_object(v, path);
    ObjectiveSlot slot;
    slot.key = required_string(v, "key", path);
    const Value* text = find_member(v, "value");
    const Value* block = find_member(v, "block");
    if (text && block)
        refuse(path, "carries both \"value\" and \"block\" (exactly one is allowed)");
    if (block) {
        slot.value = internal::read_block(*block, path.key("block"));
    } else {
        slot.value = TextBlock{required_string(v, "value", path)};
    }
    return slot;
}

/// A declared tool; `announced_in` is read back only to be checked (the conversation re-derives
/// it from its content), so it comes out beside the tool.
DeclaredTool read_tool(const Value& v, const JsonPath& path,
                       std::optional<std::string>& announced_in) {
    expect_object(v, path);
    DeclaredTool tool;
    tool.definition.name = required_string(v, "name", path);
    tool.definition.description = optional_string(v, "description", path);
    if (const Value* schema = find_member(v, "schema")) {
        expect_object(*schema, path.key("schema"));
        tool.definition.schema_json = internal::to_json_text(*schema);
    }
    if (const Value* at = find_member(v, "declared_at")) {
        if (!at->IsUint64())
            refuse(path.key("declared_at"), "expected a message count (an integer >= 0)");
        tool.declared_at = static_cast<std::size_t>(at->GetUint64());
    } else {
        tool.declared_at = static_cast<std::size_t>(-1);  // resolved to the message count below
    }
    if (const Value* where = find_member(v, "announced_in"); where && !where->IsNull()) {
        announced_in = required_string(v, "announced_in", path);
    }
    return tool;
}

Message read_message(const Value& v, const JsonPath& path) {
    expect_object(v, path);
    Message m;
    m.id = optional_string(v, "id", path);
    const std::string direction = required_string(v, "direction", path);
    if (direction == "outgoing") {
        m.direction = Direction::kOutgoing;
    } else if (direction == "incoming") {
        m.direction = Direction::kIncoming;
    } else {
        refuse(path.key("direction"),
               "unknown direction \"" + direction + "\" (expected \"outgoing\" or \"incoming\")");
    }
    m.compactable = optional_bool(v, "compactable", path, true);
    m.cache = optional_bool(v, "cache", path, false);
    m.app_authored = optional_bool(v, "app_authored", path, false);
    if (const Value* n = find_member(v, "requested_output_tokens"); n && !n->IsNull()) {
        m.requested_output_tokens = read_positive_int(*n, path.key("requested_output_tokens"));
    }
    m.provider_message_id = optional_string(v, "provider_message_id", path);
    m.thread_digest = optional_string(v, "thread_digest", path);  // wire.211
    const Value* blocks = find_member(v, "blocks");
    if (!blocks) refuse(path.key("blocks"), "missing (an array of blocks is required)");
    const JsonPath blocks_path = path.key("blocks");
    expect_array(*blocks, blocks_path);
    m.blocks.reserve(blocks->Size());
    for (rapidjson::SizeType i = 0; i < blocks->Size(); ++i) {
        m.blocks.push_back(internal::read_block((*blocks)[i], blocks_path.at(i)));
    }
    return m;
}

Artifact read_artifact(const Value& v, const JsonPath& path) {
    expect_object(v, path);
    Artifact a;
    a.ref = required_string(v, "ref", path);
    a.type = required_string(v, "type", path);
    const Value* value = find_member(v, "value");
    if (!value) refuse(path.key("value"), "missing (a JSON value is required)");
    a.value_json = internal::to_json_text(*value);
    return a;
}

/// The seat's declarations (conversation.20), into the parts' grade, depth and output.
/// wire.191: `sent_with`, by message id. An entry whose id names no outgoing message (its
/// message was compacted away) is not kept: nothing would ride it.
void read_sent_with(const Value& v, const JsonPath& path, ConversationParts& d) {
    expect_object(v, path);
    std::set<std::string_view> outgoing;
    for (const Message& m : d.messages) {
        if (m.outgoing()) outgoing.insert(m.id);
    }
    for (const auto& member : v.GetObject()) {
        const std::string id(member.name.GetString(), member.name.GetStringLength());
        const JsonPath at = path.key(id);
        expect_object(member.value, at);
        SentWith sent;
        sent.contract = optional_string(member.value, "contract", at);
        sent.registry = optional_string(member.value, "registry", at);
        if (outgoing.count(id) > 0 && (!sent.contract.empty() || !sent.registry.empty()))
            d.sent_with.emplace(id, std::move(sent));
    }
}

void read_declarations(const Value& v, const JsonPath& path, ConversationParts& d) {
    expect_object(v, path);
    if (find_member(v, "grade")) {
        d.grade = read_enum<Grade>(v, "grade", path, parse_grade, "SMALL, MEDIUM, LARGE");
    }
    if (find_member(v, "depth")) {
        d.depth = read_enum<Depth>(v, "depth", path, parse_depth, "IMMEDIATE, STANDARD, DEEP");
    }
    if (const Value* output = find_member(v, "output"); output && !output->IsNull()) {
        const JsonPath output_path = path.key("output");
        expect_object(*output, output_path);
        const Value* tokens = find_member(*output, "tokens");
        const bool has_rung = find_member(*output, "rung") != nullptr;
        if ((tokens != nullptr) == has_rung) {
            refuse(output_path, "expected exactly one of \"tokens\" and \"rung\"");
        }
        if (tokens) {
            d.output = read_positive_int(*tokens, output_path.key("tokens"));
        } else {
            d.output = read_enum<OutputSize>(*output, "rung", output_path, parse_output_size,
                                             "SHORT, MEDIUM, LONG, EXTENDED");
        }
    }
}

/// The restore path's rule (persistence.20): every tool_result whose
/// tool_use id appears nowhere is dropped, its id recorded; a message left without blocks goes
/// too (an empty turn is refused by every provider), and the points of declaration of the tools
/// declared after it move back with the messages.
void drop_orphans(ConversationParts& doc, const std::set<std::string>& tool_use_ids,
                  std::vector<std::string>& dropped) {
    for (std::size_t i = doc.messages.size(); i-- > 0;) {
        auto& blocks = doc.messages[i].blocks;
        bool had_blocks = !blocks.empty();
        std::erase_if(blocks, [&](const ContentBlock& b) {
            const auto* result = b.get_if<ToolResultBlock>();
            if (!result || tool_use_ids.count(result->tool_use_id)) return false;
            dropped.push_back(result->tool_use_id);
            return true;
        });
        if (!had_blocks || !blocks.empty()) continue;
        doc.messages.erase(doc.messages.begin() + static_cast<std::ptrdiff_t>(i));
        for (DeclaredTool& t : doc.tools) {
            if (t.declared_at > i) --t.declared_at;
        }
    }
    std::reverse(dropped.begin(), dropped.end());  // document order
}

/// The cross-message rules: ids are unique, every tool_result answers a tool_use of the
/// document (or is dropped, when `dropped_orphans` collects them), tool names are unique, a
/// tool's point of declaration and announcement exist.
void check_references(ConversationParts& doc,
                      const std::vector<std::optional<std::string>>& announced,
                      const JsonPath& root, std::vector<std::string>* dropped_orphans) {
    const JsonPath messages = root.key("messages");
    std::map<std::string, std::size_t> first_position;
    std::set<std::string> tool_use_ids;
    for (std::size_t i = 0; i < doc.messages.size(); ++i) {
        const Message& m = doc.messages[i];
        if (!m.id.empty()) {
            auto [it, inserted] = first_position.emplace(m.id, i);
            if (!inserted) {
                refuse(messages.at(i).key("id"), "duplicate message id \"" + m.id +
                                                     "\" (first at messages[" +
                                                     std::to_string(it->second) + "])");
            }
        }
        for (const ContentBlock& b : m.blocks) {
            if (const auto* use = b.get_if<ToolUseBlock>()) tool_use_ids.insert(use->id);
        }
    }
    if (dropped_orphans) {
        drop_orphans(doc, tool_use_ids, *dropped_orphans);
    } else {
        for (std::size_t i = 0; i < doc.messages.size(); ++i) {
            const auto& blocks = doc.messages[i].blocks;
            for (std::size_t j = 0; j < blocks.size(); ++j) {
                const auto* result = blocks[j].get_if<ToolResultBlock>();
                if (!result || tool_use_ids.count(result->tool_use_id)) continue;
                refuse(messages.at(i).key("blocks").at(j).key("tool_use_id"),
                       "tool_result answers \"" + result->tool_use_id +
                           "\", which no tool_use in the document carries");
            }
        }
    }
    const JsonPath tools = root.key("tools");
    std::map<std::string, std::size_t> tool_position;
    for (std::size_t i = 0; i < doc.tools.size(); ++i) {
        const DeclaredTool& t = doc.tools[i];
        auto [it, inserted] = tool_position.emplace(t.definition.name, i);
        if (!inserted) {
            refuse(tools.at(i).key("name"), "duplicate tool \"" + t.definition.name +
                                                "\" (first at tools[" + std::to_string(it->second) +
                                                "])");
        }
        if (t.declared_at > doc.messages.size()) {
            refuse(tools.at(i).key("declared_at"),
                   std::to_string(t.declared_at) + " is past the document's " +
                       std::to_string(doc.messages.size()) + " messages");
        }
        const auto& where = announced[i];
        if (where && *where != internal::kAnnouncedInHead && !first_position.count(*where)) {
            refuse(tools.at(i).key("announced_in"),
                   "names message \"" + *where + "\", which the document does not hold");
        }
    }
}

}  // namespace

ConversationParts read_conversation_parts(std::string_view json) {
    return read_conversation_parts(json, nullptr);
}

ConversationParts read_conversation_parts(std::string_view json,
                                          std::vector<std::string>* dropped_orphans) {
    rapidjson::Document dom;
    internal::parse_json(dom, json);
    const JsonPath root;
    internal::check_utf8(dom, json, root);  // conversation.106: before any string is quoted
    expect_object(dom, root);

    ConversationParts doc;
    const Value* version = find_member(dom, "schema_version");
    if (!version) refuse(root.key("schema_version"), "missing (this build reads version 1)");
    if (!version->IsInt() || version->GetInt() != kConversationDocumentVersion) {
        refuse(root.key("schema_version"), "unsupported version " +
                                               internal::to_json_text(*version) +
                                               " (this build reads version 1)");
    }
    doc.conversation_id = optional_string(dom, "conversation_id", root);
    doc.user_id = optional_string(dom, "user_id", root);
    doc.workflow_id = optional_string(dom, "workflow_id", root);

    std::map<std::string, std::size_t> slot_position;
    for_each_element(dom, "objective", root, [&](const Value& v, const JsonPath& path) {
        ObjectiveSlot slot = read_slot(v, path);
        auto [it, inserted] = slot_position.emplace(slot.key, doc.objective.size());
        if (!inserted) {
            refuse(path.key("key"), "duplicate objective slot \"" + slot.key +
                                        "\" (first at objective[" + std::to_string(it->second) +
                                        "])");
        }
        doc.objective.push_back(std::move(slot));
    });
    doc.cache_main_objective = optional_bool(dom, "cache_main_objective", root, true);
    doc.compactable = optional_bool(dom, "compactable", root, true);
    std::vector<std::optional<std::string>> announced;
    for_each_element(dom, "tools", root, [&](const Value& v, const JsonPath& path) {
        doc.tools.push_back(read_tool(v, path, announced.emplace_back()));
    });
    if (const Value* messages = find_member(dom, "messages"); messages && messages->IsArray()) {
        doc.messages.reserve(messages->Size());
    }
    for_each_element(dom, "messages", root, [&](const Value& v, const JsonPath& path) {
        doc.messages.push_back(read_message(v, path));
    });
    for (DeclaredTool& t : doc.tools) {
        if (t.declared_at == static_cast<std::size_t>(-1)) t.declared_at = doc.messages.size();
    }
    for_each_element(dom, "artifacts", root, [&](const Value& v, const JsonPath& path) {
        Artifact artifact = read_artifact(v, path);
        try {
            doc.artifacts.restore(std::move(artifact));
        } catch (const Error& e) {
            refuse(path, e.what());
        }
    });
    if (const Value* declarations = find_member(dom, "declarations");
        declarations && !declarations->IsNull()) {
        read_declarations(*declarations, root.key("declarations"), doc);
    }
    if (const Value* prior = find_member(dom, "prior_spec_id"); prior && !prior->IsNull()) {
        doc.prior_spec_id = required_string(dom, "prior_spec_id", root);
    }
    if (const Value* sent = find_member(dom, "sent_with"); sent && !sent->IsNull()) {
        read_sent_with(*sent, root.key("sent_with"), doc);
    }
    check_references(doc, announced, root, dropped_orphans);
    return doc;
}

ConversationContext read_conversation_document(std::string_view json) {
    return ConversationContext::from_parts(read_conversation_parts(json));
}

ContentBlock read_content_block(std::string_view json, std::string_view where) {
    rapidjson::Document dom;
    internal::parse_json(dom, json, where);
    internal::check_utf8(dom, json, JsonPath(where));  // conversation.106
    return internal::read_block(dom, JsonPath(where));
}

}  // namespace nucleo
