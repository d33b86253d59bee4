// Writing the conversation document v1 (conversation.30): fixed field
// order, defaults written out, JSON-valued fields re-emitted canonically — so equal documents are
// byte-identical and a stored snapshot diffs well.
#include <optional>
#include <string>

#include "artifacts/artifacts_internal.hpp"
#include "conversation/context_internal.hpp"
#include "nucleo/document.hpp"
#include "persistence/document_json.hpp"

namespace nucleo {

namespace {

using internal::JsonPath;
using internal::write_block;
using internal::write_json_text;
using internal::write_string;

template <typename Writer>
void write_message(Writer& w, const Message& m, const JsonPath& path) {
    w.StartObject();
    w.Key("id");
    write_string(w, m.id);
    w.Key("direction");
    w.String(m.outgoing() ? "outgoing" : "incoming");
    w.Key("compactable");
    w.Bool(m.compactable);
    w.Key("cache");
    w.Bool(m.cache);
    w.Key("app_authored");
    w.Bool(m.app_authored);
    if (m.requested_output_tokens) {
        w.Key("requested_output_tokens");
        w.Int64(*m.requested_output_tokens);
    }
    if (!m.provider_message_id.empty()) {  // caching.131: written only when the provider gave one
        w.Key("provider_message_id");
        write_string(w, m.provider_message_id);
    }
    if (!m.thread_digest.empty()) {  // wire.211: written only on an answer of a threaded call
        w.Key("thread_digest");
        write_string(w, m.thread_digest);
    }
    w.Key("blocks");
    w.StartArray();
    const JsonPath blocks = path.key("blocks");
    for (std::size_t i = 0; i < m.blocks.size(); ++i) write_block(w, m.blocks[i], blocks.at(i));
    w.EndArray();
    w.EndObject();
}

template <typename Writer>
void write_declarations(Writer& w, const ConversationParts& d) {
    w.StartObject();
    if (d.grade) {
        w.Key("grade");
        w.String(to_string(*d.grade));
    }
    if (d.depth) {
        w.Key("depth");
        w.String(to_string(*d.depth));
    }
    if (d.output) {
        w.Key("output");
        w.StartObject();
        if (const auto* rung = std::get_if<OutputSize>(&*d.output)) {
            w.Key("rung");
            w.String(to_string(*rung));
        } else {
            w.Key("tokens");
            w.Int64(std::get<std::int64_t>(*d.output));
        }
        w.EndObject();
    }
    w.EndObject();
}

template <typename Writer>
void write_document(Writer& w, const ConversationParts& doc) {
    const JsonPath root;
    w.StartObject();
    w.Key("schema_version");
    w.Int(kConversationDocumentVersion);
    w.Key("conversation_id");
    write_string(w, doc.conversation_id);
    w.Key("user_id");
    write_string(w, doc.user_id);
    w.Key("workflow_id");
    write_string(w, doc.workflow_id);

    w.Key("objective");
    w.StartArray();
    const JsonPath objective = root.key("objective");
    for (std::size_t i = 0; i < doc.objective.size(); ++i) {
        const ObjectiveSlot& slot = doc.objective[i];
        w.StartObject();
        w.Key("key");
        write_string(w, slot.key);
        if (const auto* text = slot.value.get_if<TextBlock>()) {
            w.Key("value");
            write_string(w, text->text);
        } else {
            w.Key("block");
            write_block(w, slot.value, objective.at(i).key("block"));
        }
        w.EndObject();
    }
    w.EndArray();

    w.Key("cache_main_objective");
    w.Bool(doc.cache_main_objective);
    w.Key("compactable");
    w.Bool(doc.compactable);

    w.Key("tools");
    w.StartArray();
    const JsonPath tools = root.key("tools");
    for (std::size_t i = 0; i < doc.tools.size(); ++i) {
        const DeclaredTool& t = doc.tools[i];
        w.StartObject();
        internal::write_tool_fields(w, t.definition, tools.at(i));
        w.Key("declared_at");
        w.Uint64(t.declared_at);
        // tools.5: the announced set derives from the conversation content itself, never a
        // side field — the same derivation ConversationContext::announced_in uses.
        if (auto where = internal::find_announcement(doc, t.definition.name)) {
            w.Key("announced_in");
            write_string(w, *where);
        }
        w.EndObject();
    }
    w.EndArray();

    w.Key("messages");
    w.StartArray();
    const JsonPath messages = root.key("messages");
    for (std::size_t i = 0; i < doc.messages.size(); ++i) {
        write_message(w, doc.messages[i], messages.at(i));
    }
    w.EndArray();

    w.Key("artifacts");
    w.StartArray();
    const JsonPath artifacts = root.key("artifacts");
    const auto& all = doc.artifacts.all_artifacts();
    for (std::size_t i = 0; i < all.size(); ++i) {
        const Artifact& a = all[i];
        w.StartObject();
        w.Key("ref");
        write_string(w, a.ref);
        w.Key("type");
        write_string(w, a.type);
        w.Key("value");
        // The full form: nested artifacts carry their own "@ref" (docs/conversation-document.md).
        write_json_text(w, artifacts::document_value(doc.artifacts, a),
                        artifacts.at(i).key("value"));
        w.EndObject();
    }
    w.EndArray();

    // wire.191: what rode each sent turn; written only when there is any, so a document of a
    // conversation without contracts or artifacts reads as before.
    if (!doc.sent_with.empty()) {
        w.Key("sent_with");
        w.StartObject();
        for (const auto& [id, sent] : doc.sent_with) {
            write_string(w, id);  // a key: the writer takes it as one inside an object
            w.StartObject();
            if (!sent.contract.empty()) {
                w.Key("contract");
                write_string(w, sent.contract);
            }
            if (!sent.registry.empty()) {
                w.Key("registry");
                write_string(w, sent.registry);
            }
            w.EndObject();
        }
        w.EndObject();
    }

    w.Key("declarations");
    write_declarations(w, doc);
    w.Key("prior_spec_id");
    if (doc.prior_spec_id) {
        write_string(w, *doc.prior_spec_id);
    } else {
        w.Null();
    }
    w.EndObject();
}

}  // namespace

std::string write_conversation_document(const ConversationContext& conversation,
                                        const DocumentWriteOptions& options) {
    return write_conversation_parts(conversation.parts(), options);
}

std::string write_conversation_parts(const ConversationParts& document,
                                     const DocumentWriteOptions& options) {
    std::string text = internal::write_json(
        options.pretty, [&](auto& writer) { write_document(writer, document); });
    if (options.pretty) text.push_back('\n');
    return text;
}

std::string write_content_block(const ContentBlock& block) {
    return internal::write_json(
        false, [&](auto& writer) { write_block(writer, block, JsonPath("block")); });
}

}  // namespace nucleo
