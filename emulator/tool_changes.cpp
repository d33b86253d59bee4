#include "tool_changes.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string_view>

namespace nucleo::emulator {
namespace {

constexpr const char* kUnresolved = "tool_reference_unresolved";
constexpr const char* kNameConflict = "tool_name_conflict";

const json::Value* non_null(const json::Value& v, const char* name) {
    const json::Value* m = json::member(v, name);
    return m != nullptr && !m->IsNull() ? m : nullptr;
}

/// `^[a-zA-Z0-9_-]{1,64}$`, the pattern of a custom tool's name in `tools` (wire.101).
bool valid_tool_name(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    });
}

/// A tool's type as the name conflict reads it: every custom tool is one type, and a dated server
/// tool is its type without the date (the page: "A newer version of the same tool doesn't count as
/// a different type").
std::string kind_of(const json::Value& definition) {
    std::string type = json::string_member(definition, "type");
    if (type.empty() || type == "custom") return "custom";
    const std::size_t n = type.size();
    if (n > 9 && type[n - 9] == '_' &&
        std::all_of(type.end() - 8, type.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        type.resize(n - 9);
    }
    return type;
}

/// What the checks of a change read besides the block.
struct Checks {
    const ModelCatalog::MidConversation& model;
    const Betas& betas;
    bool after_paused_turn = false;
};

/// The tools known and offered while the conversation is walked, from `tools` on.
class ToolState {
  public:
    explicit ToolState(const json::Value& doc) {
        if (const json::Value* tools = json::member(doc, "tools");
            tools != nullptr && tools->IsArray()) {
            for (const auto& t : tools->GetArray()) {
                if (json::string_member(t, "type") == "mcp_toolset") {
                    servers_.insert(json::string_member(t, "mcp_server_name"));
                    continue;
                }
                const std::string name = json::string_member(t, "name");
                known_[name] = &t;
                offered_.push_back({name, &t});
            }
        }
        if (const json::Value* servers = json::member(doc, "mcp_servers");
            servers != nullptr && servers->IsArray()) {
            for (const auto& s : servers->GetArray())
                listed_servers_.insert(json::string_member(s, "name"));
        }
    }

    /// Applies the tool_addition or tool_removal `block` at `where` (messages.I.content.J); with
    /// `checks`, refuses what the API refuses first.
    std::optional<Refusal> change(const json::Value& block, const std::string& where,
                                  const Checks* checks) {
        const std::string type = json::string_member(block, "type");
        const bool addition = type == "tool_addition";
        if (checks != nullptr && !checks->model.tool_changes)
            return Refusal{where + ": " + type + " is not supported on this model", ""};
        const json::Value* tool = json::member(block, "tool");
        if (checks != nullptr && tool == nullptr)
            return Refusal{where + ".tool: Field required", ""};
        if (checks != nullptr && !tool->IsObject())
            return Refusal{where + ".tool: Input should be a valid dictionary", ""};
        if (tool == nullptr || !tool->IsObject()) return std::nullopt;
        const std::string ref = json::string_member(*tool, "type");
        if (checks != nullptr) {
            if (auto r = kind_and_beta(type, ref, where, *checks)) return r;
        }
        if (ref == "tool_definition") {
            return addition ? define(*tool, block, where, checks) : std::nullopt;
        }
        if (ref == "tool_reference") return reference(*tool, addition, where, checks);
        return mcp_reference(*tool, ref, where, checks);
    }

    const std::vector<OfferedTool>& offered() const { return offered_; }

  private:
    static std::optional<Refusal> kind_and_beta(const std::string& type, const std::string& ref,
                                                const std::string& where, const Checks& checks) {
        const bool addition = type == "tool_addition";
        if (ref != "tool_reference" && ref != "mcp_tool_reference" &&
            ref != "mcp_toolset_reference" && !(addition && ref == "tool_definition")) {
            return Refusal{where + ".tool.type: Input should be " +
                               (addition ? "'tool_reference', 'mcp_tool_reference', "
                                           "'mcp_toolset_reference' or 'tool_definition'"
                                         : "'tool_reference', 'mcp_tool_reference' or "
                                           "'mcp_toolset_reference'"),
                           ""};
        }
        // inline-tools also covers references, so either beta takes one; a definition needs it.
        if (ref == "tool_definition" && !checks.betas.has(kInlineToolsBeta)) {
            return Refusal{where + ": a tool_definition requires the anthropic-beta header \"" +
                               std::string(kInlineToolsBeta) + "\"",
                           ""};
        }
        if (!checks.betas.has(kInlineToolsBeta) && !checks.betas.has(kToolChangesBeta)) {
            return Refusal{where + ": " + type + " requires the anthropic-beta header \"" +
                               std::string(kToolChangesBeta) + "\" or \"" +
                               std::string(kInlineToolsBeta) + "\"",
                           ""};
        }
        if (checks.after_paused_turn) {
            return Refusal{where + ": " + type +
                               " is not accepted immediately after a paused assistant turn; "
                               "resume the paused turn first",
                           ""};
        }
        return std::nullopt;
    }

    std::optional<Refusal> reference(const json::Value& tool, bool addition,
                                     const std::string& where, const Checks* checks) {
        const json::Value* name_value = json::member(tool, "name");
        if (name_value == nullptr || !name_value->IsString()) {
            if (checks == nullptr) return std::nullopt;
            return Refusal{where + ".tool.name: Field required", ""};
        }
        const std::string name = name_value->GetString();
        const auto offered_at = std::find_if(offered_.begin(), offered_.end(),
                                             [&](const OfferedTool& t) { return t.name == name; });
        if (addition) {
            const auto known = known_.find(name);
            if (known == known_.end()) {
                if (checks == nullptr) return std::nullopt;
                return Refusal{where + ".tool: tool_reference '" + name +
                                   "' names no tool of `tools` nor one defined earlier in "
                                   "`messages`",
                               kUnresolved};
            }
            // Offering an offered tool again changes nothing.
            if (offered_at == offered_.end()) offered_.push_back({name, known->second});
            return std::nullopt;
        }
        if (offered_at == offered_.end()) {
            if (checks == nullptr) return std::nullopt;
            return Refusal{where + ".tool: tool_reference '" + name +
                               "' names no tool offered at this point of the conversation",
                           kUnresolved};
        }
        offered_.erase(offered_at);
        return std::nullopt;
    }

    /// An MCP tool or toolset names a server of `tools` (an `mcp_toolset` entry) or of an earlier
    /// definition. The emulator calls no MCP tool: nothing is offered or withdrawn.
    std::optional<Refusal> mcp_reference(const json::Value& tool, const std::string& ref,
                                         const std::string& where, const Checks* checks) const {
        if (checks == nullptr) return std::nullopt;
        const json::Value* server = json::member(tool, "server_name");
        if (server == nullptr || !server->IsString())
            return Refusal{where + ".tool.server_name: Field required", ""};
        if (ref == "mcp_tool_reference") {
            const json::Value* name = json::member(tool, "name");
            if (name == nullptr || !name->IsString())
                return Refusal{where + ".tool.name: Field required", ""};
        }
        if (servers_.count(server->GetString()) == 0) {
            return Refusal{where + ".tool: " + ref + " '" + server->GetString() +
                               "' names no MCP toolset of `tools` nor one defined earlier in "
                               "`messages`",
                           kUnresolved};
        }
        return std::nullopt;
    }

    /// A definition by value: valid as a `tools` entry, then offered from here on; a new
    /// definition of an offered tool replaces it where it stands.
    std::optional<Refusal> define(const json::Value& tool, const json::Value& block,
                                  const std::string& where, const Checks* checks) {
        const json::Value* def = json::member(tool, "definition");
        if (def == nullptr || !def->IsObject()) {
            if (checks == nullptr) return std::nullopt;
            return Refusal{
                where + ".tool.definition: " +
                    (def == nullptr ? "Field required" : "Input should be a valid dictionary"),
                ""};
        }
        const std::string at = where + ".tool.definition";
        const std::string type = json::string_member(*def, "type");
        if (type == "mcp_toolset") {
            const std::string server = json::string_member(*def, "mcp_server_name");
            if (checks != nullptr) {
                if (!checks->betas.has(kMcpClientBeta)) {
                    return Refusal{at +
                                       ": an mcp_toolset definition requires the anthropic-beta "
                                       "header \"" +
                                       std::string(kMcpClientBeta) + "\"",
                                   ""};
                }
                if (server.empty()) return Refusal{at + ".mcp_server_name: Field required", ""};
                if (listed_servers_.count(server) == 0) {
                    return Refusal{
                        at + ".mcp_server_name: '" + server + "' names no server of `mcp_servers`",
                        kUnresolved};
                }
            }
            servers_.insert(server);
            return std::nullopt;
        }
        if (checks != nullptr) {
            if (auto r = valid_definition(*def, type, at)) return r;
            if (auto r = marks(block, *def, where)) return r;
        }
        const std::string name = json::string_member(*def, "name");
        const auto offered_at = std::find_if(offered_.begin(), offered_.end(),
                                             [&](const OfferedTool& t) { return t.name == name; });
        // ToolNameConflictErrorDetails: "takes a name that an available tool of another kind
        // ... already holds"; a withdrawn one holds none.
        if (checks != nullptr && offered_at != offered_.end() &&
            kind_of(*offered_at->definition) != kind_of(*def)) {
            return Refusal{
                at + ".name: the name '" + name + "' is held by an available tool of another type",
                kNameConflict};
        }
        known_[name] = def;
        if (offered_at != offered_.end()) {
            offered_at->definition = def;
        } else {
            offered_.push_back({name, def});
        }
        return std::nullopt;
    }

    /// The definition is a `tools` entry: a custom tool's name and object input schema (the
    /// rule book's texts for `tools`, wire.101, wire.102), a server tool's name; the computer use
    /// tools cannot be defined in a message yet (the page).
    static std::optional<Refusal> valid_definition(const json::Value& def, const std::string& type,
                                                   const std::string& at) {
        if (type.starts_with("computer_")) {
            return Refusal{at + ": a tool of type '" + type +
                               "' cannot be defined in a message yet; declare it in `tools` and "
                               "add it by reference",
                           ""};
        }
        const json::Value* name = json::member(def, "name");
        if (name == nullptr || !name->IsString()) return Refusal{at + ".name: Field required", ""};
        if (!type.empty() && type != "custom") return std::nullopt;
        if (!valid_tool_name(name->GetString())) {
            return Refusal{at + ".name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", ""};
        }
        const json::Value* schema = json::member(def, "input_schema");
        if (schema == nullptr) return Refusal{at + ".input_schema: Field required", ""};
        if (!schema->IsObject())
            return Refusal{at + ".input_schema: Input should be a valid dictionary", ""};
        if (json::string_member(*schema, "type") != "object")
            return Refusal{at + ".input_schema.type: Input should be 'object'", ""};
        return std::nullopt;
    }

    /// The page: a mark on the block or in the definition, not both; none on a deferred one.
    static std::optional<Refusal> marks(const json::Value& block, const json::Value& def,
                                        const std::string& where) {
        const bool on_block = non_null(block, "cache_control") != nullptr;
        const bool in_definition = non_null(def, "cache_control") != nullptr;
        if (on_block && in_definition) {
            return Refusal{where +
                               ": cache_control goes on the tool_addition block or in its "
                               "definition, not both",
                           ""};
        }
        const json::Value* deferred = json::member(def, "defer_loading");
        if ((on_block || in_definition) && deferred != nullptr && deferred->IsBool() &&
            deferred->GetBool()) {
            return Refusal{where +
                               ".tool.definition: a deferred tool (defer_loading: true) cannot "
                               "carry cache_control",
                           ""};
        }
        return std::nullopt;
    }

    std::map<std::string, const json::Value*> known_;  ///< every tool defined so far, by name
    std::vector<OfferedTool> offered_;
    std::set<std::string> servers_;         ///< MCP toolsets of `tools` and of definitions
    std::set<std::string> listed_servers_;  ///< the names of `mcp_servers`
};

/// Walks the tool changes of the system messages in request order.
std::optional<Refusal> walk(const json::Value& doc, ToolState& state,
                            const ModelCatalog::MidConversation* model, const Betas* betas) {
    const json::Value* messages = json::member(doc, "messages");
    if (messages == nullptr || !messages->IsArray()) return std::nullopt;
    bool after_paused_turn = false;  // the system run follows an assistant turn (a paused one)
    for (rapidjson::SizeType i = 0; i < messages->Size(); ++i) {
        const json::Value& m = (*messages)[i];
        if (!is_system_message(m)) {
            after_paused_turn = json::string_member(m, "role") == "assistant";
            continue;
        }
        const json::Value* content = json::member(m, "content");
        if (content == nullptr || !content->IsArray()) continue;
        for (rapidjson::SizeType j = 0; j < content->Size(); ++j) {
            const json::Value& b = (*content)[j];
            const std::string type = json::string_member(b, "type");
            if (type != "tool_addition" && type != "tool_removal") continue;
            const std::string where =
                "messages." + std::to_string(i) + ".content." + std::to_string(j);
            if (model == nullptr) {
                state.change(b, where, nullptr);
                continue;
            }
            const Checks checks{*model, *betas, after_paused_turn};
            if (auto r = state.change(b, where, &checks)) return r;
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<Refusal> check_tool_changes(const json::Value& doc,
                                          const ModelCatalog::MidConversation& model,
                                          const Betas& betas) {
    ToolState state(doc);
    return walk(doc, state, &model, &betas);
}

std::vector<OfferedTool> offered_tools(const json::Value& doc) {
    ToolState state(doc);
    walk(doc, state, nullptr, nullptr);
    return state.offered();
}

const json::Value* definition_mark(const json::Value& block) {
    if (json::string_member(block, "type") != "tool_addition") return nullptr;
    const json::Value* tool = json::member(block, "tool");
    const json::Value* def = tool != nullptr ? json::member(*tool, "definition") : nullptr;
    return def != nullptr ? non_null(*def, "cache_control") : nullptr;
}

std::string without_change_marks(const json::Value& block) {
    if (definition_mark(block) == nullptr) return json::canonical(block, "cache_control");
    rapidjson::StringBuffer buf;
    json::Writer w(buf);
    w.StartObject();
    for (const auto& m : block.GetObject()) {
        const std::string_view name(m.name.GetString(), m.name.GetStringLength());
        if (name == "cache_control") continue;
        w.Key(m.name.GetString(), m.name.GetStringLength());
        if (name != "tool") {
            m.value.Accept(w);
            continue;
        }
        w.StartObject();
        for (const auto& t : m.value.GetObject()) {
            w.Key(t.name.GetString(), t.name.GetStringLength());
            const std::string_view tname(t.name.GetString(), t.name.GetStringLength());
            if (tname != "definition") {
                t.value.Accept(w);
                continue;
            }
            const std::string def = json::canonical(t.value, "cache_control");
            w.RawValue(def.data(), def.size(), rapidjson::kObjectType);
        }
        w.EndObject();
    }
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace nucleo::emulator
