#include "thinking_binding.hpp"

#include <algorithm>
#include <cstdio>

#include "mid_conversation.hpp"
#include "prefix_cache.hpp"
#include "tool_changes.hpp"

namespace nucleo::emulator {
namespace {

constexpr std::string_view kSignaturePrefix = "emu-sig-";
constexpr std::string_view kBoundMark = "-bound-";
constexpr std::size_t kBindingHexDigits = 32;

/// The compact JSON of `v` without `cache_control` members: the block's own, and those of the
/// blocks of its `content` list (a tool_result's), the places the API takes a mark.
void write_without_marks(const json::Value& v, json::Writer& w, int depth) {
    if (!v.IsObject() || depth > 1) {
        v.Accept(w);
        return;
    }
    w.StartObject();
    for (const auto& m : v.GetObject()) {
        const std::string_view name(m.name.GetString(), m.name.GetStringLength());
        if (name == "cache_control") continue;
        w.Key(m.name.GetString(), m.name.GetStringLength());
        if (name == "content" && m.value.IsArray() && depth == 0) {
            w.StartArray();
            for (const auto& c : m.value.GetArray()) write_without_marks(c, w, depth + 1);
            w.EndArray();
        } else {
            m.value.Accept(w);
        }
    }
    w.EndObject();
}

std::string anthropic_block(const json::Value& b) {
    // A tool_addition (a system message's block) has no content list; its mark may stand in its
    // definition, and is left out there too.
    if (definition_mark(b) != nullptr) return without_change_marks(b);
    rapidjson::StringBuffer buf;
    json::Writer w(buf);
    write_without_marks(b, w, 0);
    return std::string(buf.GetString(), buf.GetSize());
}

/// A string content is one text block, as the API reads it.
std::string text_block(const json::Value& s) {
    return R"({"type":"text","text":)" + json::write(s) + "}";
}

std::string hex_key(const PrefixKey& k) {
    char buf[kBindingHexDigits + 1];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(k.fnv),
                  static_cast<unsigned long long>(k.poly));
    return buf;
}

const json::Value* array_member(const json::Value& v, const char* name) {
    const json::Value* m = json::member(v, name);
    return m != nullptr && m->IsArray() ? m : nullptr;
}

/// A thinking block's signature, or nullptr when `b` is not one.
const json::Value* thinking_signature_of(BindingDialect dialect, const json::Value& b) {
    if (dialect == BindingDialect::kAnthropic) {
        if (json::string_member(b, "type") != "thinking") return nullptr;
        return json::member(b, "signature");
    }
    const json::Value* rc = json::member(b, "reasoningContent");
    const json::Value* text = rc != nullptr ? json::member(*rc, "reasoningText") : nullptr;
    return text != nullptr ? json::member(*text, "signature") : nullptr;
}

/// Thinking of any kind: a block a failing block takes with it (wire.194).
bool is_thinking(BindingDialect dialect, const json::Value& b) {
    if (dialect == BindingDialect::kConverse) return json::member(b, "reasoningContent") != nullptr;
    const std::string type = json::string_member(b, "type");
    return type == "thinking" || type == "redacted_thinking";
}

}  // namespace

void visit_canonical_prompt(BindingDialect dialect, const json::Value& doc,
                            const PromptVisitor& visit) {
    const auto converse_block = [&visit](PromptPart part, std::size_t i, const json::Value& b) {
        if (json::member(b, "cachePoint") == nullptr) visit(part, i, json::write(b));
    };
    if (dialect == BindingDialect::kAnthropic) {
        if (const json::Value* tools = array_member(doc, "tools")) {
            for (const auto& t : tools->GetArray()) visit(PromptPart::kTool, 0, anthropic_block(t));
        }
        if (const json::Value* system = json::member(doc, "system")) {
            if (system->IsString()) visit(PromptPart::kSystem, 0, text_block(*system));
            if (system->IsArray()) {
                for (const auto& b : system->GetArray())
                    visit(PromptPart::kSystem, 0, anthropic_block(b));
            }
        }
    } else {
        if (const json::Value* tc = json::member(doc, "toolConfig")) {
            if (const json::Value* tools = array_member(*tc, "tools")) {
                for (const auto& t : tools->GetArray()) converse_block(PromptPart::kTool, 0, t);
            }
        }
        if (const json::Value* system = array_member(doc, "system")) {
            for (const auto& b : system->GetArray()) converse_block(PromptPart::kSystem, 0, b);
        }
    }
    const json::Value* messages = array_member(doc, "messages");
    if (messages == nullptr) return;
    for (rapidjson::SizeType i = 0; i < messages->Size(); ++i) {
        const json::Value& m = (*messages)[i];
        visit(PromptPart::kMessageRole, i,
              R"({"role":)" + json::quote(json::string_member(m, "role")) + "}");
        const json::Value* content = json::member(m, "content");
        if (content == nullptr) continue;
        if (content->IsString()) visit(PromptPart::kMessageBlock, i, text_block(*content));
        if (!content->IsArray()) continue;
        for (const auto& b : content->GetArray()) {
            if (dialect == BindingDialect::kAnthropic) {
                visit(PromptPart::kMessageBlock, i, anthropic_block(b));
            } else {
                converse_block(PromptPart::kMessageBlock, i, b);
            }
        }
    }
}

PrefixBinding::PrefixBinding(BindingDialect dialect, const json::Value& doc) {
    PrefixHasher h(dialect == BindingDialect::kAnthropic ? "binding\x1f"
                                                           "anthropic"
                                                         : "binding\x1f"
                                                           "converse");
    // A separator ends the tools and one ends the system, present or not: a tool never reads as
    // a system block, nor a system block as a message.
    int sections_closed = 0;
    const auto close_sections_before = [&](int section) {
        for (; sections_closed < section; ++sections_closed) h.append("\x1e");
    };
    visit_canonical_prompt(dialect, doc, [&](PromptPart part, std::size_t, std::string_view bytes) {
        switch (part) {
            case PromptPart::kTool:
                break;
            case PromptPart::kSystem:
                close_sections_before(1);
                break;
            case PromptPart::kMessageRole:
                close_sections_before(2);
                digests_.push_back(hex_key(h.marks().at(h.mark())));
                break;
            case PromptPart::kMessageBlock:
                break;
        }
        h.append(bytes);
    });
    close_sections_before(2);
    digests_.push_back(hex_key(h.marks().at(h.mark())));
}

std::string thinking_signature(std::string_view reply_digest, std::string_view binding) {
    std::string out = std::string(kSignaturePrefix) + std::string(reply_digest);
    if (!binding.empty()) out += std::string(kBoundMark) + std::string(binding);
    return out;
}

std::string signature_binding(std::string_view signature) {
    if (!signature.starts_with(kSignaturePrefix)) return "";
    const std::size_t at = signature.rfind(kBoundMark);
    if (at == std::string_view::npos) return "";
    const std::string_view digest = signature.substr(at + kBoundMark.size());
    const bool hex = std::all_of(digest.begin(), digest.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
    return digest.size() == kBindingHexDigits && hex ? std::string(digest) : "";
}

BindingVerdict check_binding(BindingDialect dialect, const json::Value& doc,
                             const PrefixBinding& binding, bool drop_block) {
    BindingVerdict v;
    const json::Value* messages = array_member(doc, "messages");
    if (messages == nullptr) return v;
    for (rapidjson::SizeType i = 0; i < messages->Size(); ++i) {
        const json::Value& m = (*messages)[i];
        if (json::string_member(m, "role") != "assistant") continue;
        const json::Value* content = array_member(m, "content");
        if (content == nullptr) continue;
        bool dropping =
            false;  // wire.194: the turn's consecutive thinking goes with a failing block
        for (rapidjson::SizeType j = 0; j < content->Size(); ++j) {
            const json::Value& b = (*content)[j];
            if (!is_thinking(dialect, b)) {
                dropping = false;
                continue;
            }
            if (dropping) {
                v.dropped.emplace_back(i, j);
                continue;
            }
            const json::Value* sig = thinking_signature_of(dialect, b);
            if (sig == nullptr || !sig->IsString()) continue;
            const std::string bound = signature_binding(sig->GetString());
            // wire.196: a signature the emulator did not write binds nothing.
            if (bound.empty() || bound == binding.before(i)) continue;
            if (drop_block) {
                v.dropped.emplace_back(i, j);
                dropping = true;
                continue;
            }
            v.refusal = "messages." + std::to_string(i) + ".content." + std::to_string(j) +
                        ": The block is bound to a different conversation: the system prompt, "
                        "the tools or a message before it changed since it was created. Send a "
                        "thinking block back after the same conversation it was created in, or "
                        "set thinking.block_binding.prefix_mismatch_behavior to \"drop_block\".";
            v.dropped.clear();
            return v;
        }
    }
    return v;
}

void drop_blocks(json::Value& doc, const std::vector<BlockAt>& dropped) {
    if (dropped.empty()) return;
    json::Value* messages =
        doc.IsObject() && doc.HasMember("messages") ? &doc["messages"] : nullptr;
    if (messages == nullptr || !messages->IsArray()) return;
    // From the last so the earlier indices stay valid.
    for (auto it = dropped.rbegin(); it != dropped.rend(); ++it) {
        json::Value& m = (*messages)[static_cast<rapidjson::SizeType>(it->first)];
        json::Value& content = m["content"];
        content.Erase(content.Begin() + it->second);
    }
}

bool wants_drop_block(BindingDialect dialect, const Request& req, const json::Value& doc) {
    const json::Value* thinking = nullptr;
    bool beta = false;
    if (dialect == BindingDialect::kAnthropic) {
        thinking = json::member(doc, "thinking");
        beta = Betas(req.header("anthropic-beta")).has(kBindingBeta);
    } else {
        const json::Value* extra = json::member(doc, "additionalModelRequestFields");
        if (extra == nullptr) return false;
        thinking = json::member(*extra, "thinking");
        if (const json::Value* betas = array_member(*extra, "anthropic_beta")) {
            for (const auto& b : betas->GetArray())
                beta = beta || (b.IsString() && std::string_view(b.GetString()) == kBindingBeta);
        }
    }
    if (!beta || thinking == nullptr) return false;
    const json::Value* bb = json::member(*thinking, "block_binding");
    return bb != nullptr && json::string_member(*bb, "prefix_mismatch_behavior") == "drop_block";
}

}  // namespace nucleo::emulator
