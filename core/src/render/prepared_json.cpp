// The JSON form of a PreparedConversation; see prepared_json.hpp.
#include "render/prepared_json.hpp"

#include <algorithm>

#include "persistence/document_json.hpp"

namespace nucleo::internal {

namespace {

template <typename Writer>
void write_blocks(Writer& w, const std::vector<ContentBlock>& blocks, const JsonPath& path) {
    w.StartArray();
    for (std::size_t i = 0; i < blocks.size(); ++i) write_block(w, blocks[i], path.at(i));
    w.EndArray();
}

/// answers.110: whether `b` is a provider block this request leaves out.
bool left_out(const ContentBlock& b, const ProviderBlocksKept& kept) {
    const auto* p = b.get_if<ProviderBlock>();
    return p != nullptr && kept && p->wire_family != *kept;
}

/// A turn's blocks without those left out; when none is left, one text block saying what was.
template <typename Writer>
void write_turn_blocks(Writer& w, const std::vector<ContentBlock>& blocks, const JsonPath& path,
                       const ProviderBlocksKept& kept) {
    if (!kept || std::none_of(blocks.begin(), blocks.end(),
                              [&](const ContentBlock& b) { return left_out(b, kept); })) {
        write_blocks(w, blocks, path);
        return;
    }
    w.StartArray();
    std::string what;
    bool any = false;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        if (!left_out(blocks[i], kept)) {
            write_block(w, blocks[i], path.at(i));
            any = true;
        } else {
            const auto& p = *blocks[i].get_if<ProviderBlock>();
            what += (what.empty() ? "" : ", ") + p.type + " (" + p.wire_family + ")";
        }
    }
    if (!any)
        write_block(w,
                    ContentBlock(TextBlock{
                        "[answer blocks this provider cannot take were left out: " + what + "]"}),
                    path.at(0));
    w.EndArray();
}

/// The index an anchor's block has once the blocks before it that are left out are gone.
std::size_t kept_index(const PreparedTurn& turn, std::size_t block,
                       const ProviderBlocksKept& kept) {
    if (!kept) return block;
    std::size_t out = block;
    for (std::size_t i = 0; i < block && i < turn.blocks.size(); ++i)
        out -= left_out(turn.blocks[i], kept) ? 1 : 0;
    return out;
}

template <typename Writer>
void write_prepared(Writer& w, const PreparedConversation& p, const PreparedSlice& slice = {},
                    const ProviderBlocksKept& kept = std::nullopt) {
    const JsonPath root;
    const std::size_t first = std::min(slice.first, p.turns.size());
    const std::size_t end = std::min(std::max(slice.end, first), p.turns.size());
    // The whole conversation writes its plan as decided, even an anchor past the turns (the
    // plugin refuses it, naming it).
    const bool whole = slice.first == 0 && slice.end == PreparedSlice{}.end && slice.with_head;
    const auto inside = [&](const CacheAnchor& a) {
        return whole || (a.turn >= first && a.turn < end);
    };
    const bool head = slice.with_head;
    w.StartObject();
    w.Key("system_blocks");
    if (head) {
        write_blocks(w, p.system_blocks, root.key("system_blocks"));
    } else {
        w.StartArray();
        w.EndArray();
    }
    w.Key("cache_system");
    w.Bool(p.cache_system);
    w.Key("native_tools");
    w.Bool(p.native_tools);

    w.Key("cache_plan");
    w.StartObject();
    w.Key("breakpoints");
    const auto anchors = static_cast<std::size_t>(
        std::count_if(p.cache_plan.turn_anchors.begin(), p.cache_plan.turn_anchors.end(), inside));
    w.Uint64(head ? p.cache_plan.breakpoints() - p.cache_plan.turn_anchors.size() + anchors
                  : anchors);
    w.Key("system_block");
    if (head && p.cache_plan.system_block) {
        w.Uint64(*p.cache_plan.system_block);
    } else {
        w.Null();
    }
    w.Key("turn_anchors");
    w.StartArray();
    for (const CacheAnchor& a : p.cache_plan.turn_anchors) {
        if (!inside(a)) continue;
        w.StartObject();
        w.Key("turn");
        w.Uint64(a.turn - first);
        w.Key("block");
        w.Uint64(a.turn < p.turns.size() ? kept_index(p.turns[a.turn], a.block, kept) : a.block);
        w.EndObject();
    }
    w.EndArray();
    // caching.106, caching.107: written only when set, so a marked-turns plan reads as before.
    if (head && p.cache_plan.automatic) {
        w.Key("automatic");
        w.Bool(true);
    }
    if (head && p.cache_plan.system_ttl_1h) {
        w.Key("system_ttl");
        w.String("1h");
    }
    w.EndObject();

    w.Key("tool_definitions");
    w.StartArray();
    const JsonPath tools = root.key("tool_definitions");
    for (std::size_t i = 0; i < p.tool_definitions.size(); ++i) {
        w.StartObject();
        write_tool_fields(w, p.tool_definitions[i], tools.at(i));
        w.EndObject();
    }
    w.EndArray();

    w.Key("turns");
    w.StartArray();
    const JsonPath turns = root.key("turns");
    for (std::size_t i = first; i < end; ++i) {
        const PreparedTurn& t = p.turns[i];
        w.StartObject();
        w.Key("role");
        w.String(t.role.name());
        w.Key("message_id");
        write_string(w, t.message_id);
        w.Key("cache");
        w.Bool(t.cache);
        w.Key("blocks");
        write_turn_blocks(w, t.blocks, turns.at(i).key("blocks"), kept);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
}

}  // namespace

std::string prepared_to_json(const PreparedConversation& prepared, bool pretty) {
    return write_json(pretty, [&](auto& writer) { write_prepared(writer, prepared); });
}

void write_prepared_json(json_escape::StringWriter& writer, const PreparedConversation& prepared,
                         ProviderBlocksKept kept) {
    write_prepared(writer, prepared, PreparedSlice{}, kept);
}

void write_prepared_json(json_escape::StringWriter& writer, const PreparedConversation& prepared,
                         const PreparedSlice& slice, ProviderBlocksKept kept) {
    write_prepared(writer, prepared, slice, kept);
}

std::size_t provider_blocks_left_out(const PreparedConversation& prepared, std::string_view kept) {
    std::size_t n = 0;
    for (const PreparedTurn& t : prepared.turns)
        for (const ContentBlock& b : t.blocks) n += left_out(b, ProviderBlocksKept(kept)) ? 1 : 0;
    return n;
}

}  // namespace nucleo::internal
