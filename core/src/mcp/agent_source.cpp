// An MCP server's tools as an Agent's (mcp.20 to mcp.26): a ToolSource over an McpClient.
#include <map>
#include <mutex>
#include <set>

#include "common/log_internal.hpp"
#include "nucleo/agent.hpp"
#include "nucleo/artifacts.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/mcp.hpp"

namespace nucleo::mcp {

/// mcp.34: a large text result of an MCP tool, kept whole in the conversation's artifact
/// registry.
struct LargeText {
    std::string server;
    std::string tool;
    std::string text;
};

}  // namespace nucleo::mcp

template <>
struct nucleo::Describe<nucleo::mcp::LargeText> {
    static constexpr std::string_view name = "McpText";
    static constexpr std::string_view artifact_alias = "mcp:text";
    static auto fields() {
        using nucleo::schema::field;
        using T = nucleo::mcp::LargeText;
        return std::tuple(field("server", &T::server).description("The MCP server"),
                          field("tool", &T::tool).description("Its tool that returned the text"),
                          field("text", &T::text).summarizable().description("The whole text"));
    }
};

namespace nucleo::mcp {
namespace {

// mcp.34: the type is known from the library's load, so a conversation holding such an artifact
// can be restored before any server is attached (artifacts.2).
const bool kLargeTextDeclared = [] {
    declare_artifact_type<LargeText>();
    return true;
}();

/// The text the callbacks see for a result given as blocks.
std::string summary_of(const std::vector<ContentBlock>& blocks) {
    std::string out;
    for (const ContentBlock& b : blocks) {
        if (!out.empty()) out += '\n';
        if (const auto* t = b.get_if<TextBlock>())
            out += t->text;
        else if (const auto* j = b.get_if<JsonBlock>())
            out += j->json;
        else if (const auto* i = b.get_if<ImageBlock>())
            out += "[image " + i->media_type + "]";
        else if (b.get_if<PojoBlock>() != nullptr)
            out += "[artifact]";
    }
    return out;
}

ToolOutput output_of(CallResult result, const std::string& server, const std::string& tool,
                     std::size_t artifact_bytes) {
    ToolOutput out;
    out.is_error = result.is_error;
    // A provider refuses an empty text block: an empty one is left out, and a result with
    // nothing left says so in words.
    for (ContentBlock& b : result.content) {
        const auto* t = b.get_if<TextBlock>();
        if (t != nullptr && t->text.empty()) continue;
        if (t != nullptr && artifact_bytes > 0 && t->text.size() > artifact_bytes) {
            // mcp.34: the model reads a note and the artifact's reference; the registry keeps the
            // whole text and lists its summary.
            out.blocks.emplace_back(TextBlock{
                "(" + std::to_string(t->text.size()) +
                " bytes of text, kept whole as an artifact: read it with get_artifact_field(ref, "
                "\"text\") or search_artifact_content(query))"});
            out.blocks.emplace_back(pojo_block(LargeText{server, tool, t->text}));
            continue;
        }
        out.blocks.push_back(std::move(b));
    }
    if (out.blocks.empty()) out.blocks.emplace_back(TextBlock{"(no output)"});
    out.text = summary_of(out.blocks);
    return out;
}

class McpToolSource : public ToolSource {
  public:
    McpToolSource(std::shared_ptr<McpClient> client, std::size_t artifact_bytes)
        : client_(std::move(client)), artifact_bytes_(artifact_bytes) {}

    std::vector<AgentTool> tools(const std::function<bool(std::string_view)>& taken) override {
        std::lock_guard<std::mutex> lock(mutex_);
        relist();
        std::vector<AgentTool> out;
        for (const Tool& t : current_) {
            AgentTool tool;
            tool.definition.name = declared_name(t.name, taken);
            tool.definition.description = t.description.empty() ? t.title : t.description;
            tool.definition.schema_json = t.input_schema_json;
            tool.run = [client = client_, name = t.name, bytes = artifact_bytes_](
                           std::string_view input, const CancellationToken& cancel) {
                return output_of(client->call_tool(name, input, &cancel), client->name(), name,
                                 bytes);
            };
            out.push_back(std::move(tool));
        }
        return out;
    }

    std::optional<ToolOutput> answer_unknown(std::string_view name) override {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& [server_name, declared] : names_) {
            if (declared != name) continue;
            if (!client_->alive()) {
                // mcp.24: a server given up on says why, whatever tool was asked for.
                try {
                    client_->ping();
                } catch (const Error& e) {
                    return ToolOutput::error("tool '" + std::string(name) +
                                             "' cannot be called: " + e.what());
                }
            }
            // mcp.23: the conversation keeps the tool (tools.1); its calls are refused in words.
            return ToolOutput::error("tool '" + std::string(name) +
                                     "' was removed by MCP server '" + client_->name() +
                                     "' and can no longer be called");
        }
        return std::nullopt;
    }

  private:
    /// mcp.22: the list is read at the first round and again after the server said it changed;
    /// a server that fails keeps the tools it had, and the failure is logged (mcp.24).
    void relist() {
        if (!client_->alive()) {
            current_.clear();
            return;
        }
        try {
            const std::uint64_t changes = client_->list_changes();
            if (listed_ && changes == seen_changes_) return;
            current_ = client_->list_tools();
            listed_ = true;
            seen_changes_ = changes;
        } catch (const Error& e) {
            NUCLEO_LOG_WARN("MCP server '{}': its tools could not be listed: {}", client_->name(),
                            e.what());
            if (!client_->alive()) current_.clear();
        }
    }

    /// mcp.21: a tool keeps its own name unless a host tool or another source has it, then it
    /// is `server__tool`; a name once given stays the tool's for the client's life.
    std::string declared_name(const std::string& tool,
                              const std::function<bool(std::string_view)>& taken) {
        const auto known = names_.find(tool);
        if (known != names_.end()) return known->second;
        std::string name = taken(tool) ? client_->name() + "__" + tool : tool;
        names_.emplace(tool, name);
        return name;
    }

    std::shared_ptr<McpClient> client_;
    std::size_t artifact_bytes_;
    std::mutex mutex_;
    std::vector<Tool> current_;
    std::map<std::string, std::string> names_;  // server's name -> declared name
    bool listed_ = false;
    std::uint64_t seen_changes_ = 0;
};

}  // namespace

void attach_mcp_server(Agent& agent, std::shared_ptr<McpClient> client,
                       std::size_t artifact_bytes) {
    if (!client) throw Error(ErrorKind::kInvalidArgument, "attach_mcp_server: no client");
    agent.add_tool_source(std::make_shared<McpToolSource>(std::move(client), artifact_bytes));
}

}  // namespace nucleo::mcp
