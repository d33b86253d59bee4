// Transcript::render (conversation.33); the layout is documented in
// core/include/nucleo/transcript.hpp.
#include "nucleo/transcript.hpp"

#include "nucleo/conversation.hpp"

#include <string>
#include <unordered_map>

namespace nucleo {

namespace {

class TranscriptWriter {
  public:
    explicit TranscriptWriter(std::span<const Message> messages) {
        // A result is shown "against the call it answers": index the calls by id first, so a
        // result finds its call wherever the call sits.
        for (const Message& m : messages) {
            for (const ContentBlock& b : m.blocks) {
                if (const auto* use = b.get_if<ToolUseBlock>()) calls_.emplace(use->id, use);
            }
        }
    }

    void message(const Message& m) {
        std::string body;
        for (const ContentBlock& b : m.blocks) block(b, body);
        if (body.empty()) return;  // only thinking: nothing for a reader
        if (!out_.empty()) out_ += '\n';
        out_ += m.outgoing() ? "user:\n" : "assistant:\n";
        out_ += body;
    }

    std::string take() { return std::move(out_); }

  private:
    static void line(std::string& body, std::string_view text) {
        if (text.empty()) return;
        body.append(text);
        if (body.back() != '\n') body += '\n';
    }

    void block(const ContentBlock& b, std::string& body) const {
        struct Visitor {
            const TranscriptWriter& self;
            std::string& body;
            void operator()(const TextBlock& t) const { line(body, t.text); }
            void operator()(const JsonBlock& j) const { line(body, j.json); }
            void operator()(const PojoBlock& p) const {
                line(body, p.type_name + " " + p.value_json);
            }
            void operator()(const ImageBlock& i) const {
                line(body, "[image: " + i.media_type + "]");
            }
            void operator()(const FileBlock& f) const {
                line(body, "[file: " + (f.name.empty() ? std::string("unnamed") : f.name) + ", " +
                               f.media_type + "]");
            }
            void operator()(const ToolUseBlock& u) const {
                line(body, "[tool call " + u.name + " (" + u.id + ")] " + u.input_json);
            }
            void operator()(const ToolResultBlock& r) const {
                auto call = self.calls_.find(r.tool_use_id);
                std::string head =
                    call == self.calls_.end()
                        ? "[tool result of " + r.tool_use_id
                        : "[tool result of " + call->second->name + " (" + r.tool_use_id + ")";
                if (r.is_error) head += ", error";
                line(body, head + "]");
                for (const ContentBlock& c : r.content) self.block(c, body);
            }
            void operator()(const ThinkingBlock&) const {}          // the provider's channel
            void operator()(const RedactedThinkingBlock&) const {}  // likewise
            void operator()(const SkillBlock& s) const { line(body, "[skill: " + s.name + "]"); }
            void operator()(const ToolDefinitionBlock& d) const {
                line(body, "[tool available: " + d.name + "]");
            }
            // answers.110: shown by its kind; its content is the provider's.
            void operator()(const ProviderBlock& p) const {
                line(body, "[" + p.type + " block of " + p.wire_family + "]");
            }
        };
        std::visit(Visitor{*this, body}, b.value);
    }

    std::unordered_map<std::string, const ToolUseBlock*> calls_;
    std::string out_;
};

}  // namespace

std::string Transcript::render(const ConversationContext& conversation) {
    return render(std::span<const Message>(conversation.messages()));
}

std::string Transcript::render(std::span<const Message> messages) {
    TranscriptWriter writer(messages);
    for (const Message& m : messages) writer.message(m);
    return writer.take();
}

}  // namespace nucleo
