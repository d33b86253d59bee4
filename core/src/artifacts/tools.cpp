// The two artifact tools of the registry turn's guidance lines (artifacts.7, artifacts.9: "Use
// get_artifact_field(ref, fieldName) for full content. Use search_artifact_content(query) to
// search across all artifact text."): they answer from the intact data the model never sees whole.
#include <algorithm>
#include <cctype>
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "artifacts/artifacts_internal.hpp"
#include "common/json_text.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

struct GetArtifactFieldInput {
    std::string ref;
    std::string field_name;
};

struct SearchArtifactContentInput {
    std::string query;
};

}  // namespace

template <>
struct Describe<GetArtifactFieldInput> {
    static constexpr std::string_view name = "get_artifact_field input";
    static auto fields() {
        using schema::field;
        return std::tuple(
            field("ref", &GetArtifactFieldInput::ref)
                .required()
                .description("The artifact's reference, exactly as shown: «artifact:TYPE~ID»"),
            field("field_name", &GetArtifactFieldInput::field_name)
                .required()
                .description("The field whose full value to return"));
    }
};

template <>
struct Describe<SearchArtifactContentInput> {
    static constexpr std::string_view name = "search_artifact_content input";
    static auto fields() {
        using schema::field;
        return std::tuple(field("query", &SearchArtifactContentInput::query)
                              .required()
                              .description("Text to look for (case-insensitive)"));
    }
};

namespace {

constexpr std::size_t kExcerptRadius = 60;

ToolResultBlock error_result(const ToolUseBlock& call, std::string text) {
    return ToolResultBlock{call.id, {TextBlock{std::move(text)}}, true};
}

bool ascii_iequal(char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
}

std::size_t ifind(std::string_view haystack, std::string_view needle) {
    const auto it =
        std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), ascii_iequal);
    return it == haystack.end() ? std::string_view::npos
                                : static_cast<std::size_t>(it - haystack.begin());
}

/// An excerpt of `text` around [pos, pos+len), cut on UTF-8 boundaries.
std::string excerpt(std::string_view text, std::size_t pos, std::size_t len) {
    std::size_t from = pos > kExcerptRadius ? pos - kExcerptRadius : 0;
    std::size_t to = std::min(text.size(), pos + len + kExcerptRadius);
    auto cont = [&](std::size_t i) {
        return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
    };
    while (from > 0 && cont(from)) --from;
    while (to < text.size() && cont(to)) ++to;
    return std::string(from > 0 ? "..." : "") + std::string(text.substr(from, to - from)) +
           (to < text.size() ? "..." : "");
}

void search_value(const rapidjson::Value& v, const std::string& path, std::string_view query,
                  const std::string& ref, std::size_t limit, std::vector<ArtifactMatch>& out) {
    if (out.size() >= limit) return;
    if (v.IsString()) {
        const std::string_view text(v.GetString(), v.GetStringLength());
        if (const std::size_t pos = ifind(text, query); pos != std::string_view::npos) {
            out.push_back(ArtifactMatch{ref, path, excerpt(text, pos, query.size())});
        }
    } else if (v.IsObject()) {
        for (auto m = v.MemberBegin(); m != v.MemberEnd() && out.size() < limit; ++m) {
            const std::string_view name(m->name.GetString(), m->name.GetStringLength());
            if (name == kArtifactMarker || artifacts::artifact_alias(m->value)) continue;
            const std::string sub =
                path.empty() ? std::string(name) : path + "." + std::string(name);
            search_value(m->value, sub, query, ref, limit, out);
        }
    } else if (v.IsArray()) {
        for (rapidjson::SizeType i = 0; i < v.Size() && out.size() < limit; ++i) {
            if (artifacts::artifact_alias(v[i])) continue;  // searched under its own reference
            search_value(v[i], path + "[" + std::to_string(i) + "]", query, ref, limit, out);
        }
    }
}

std::string matches_json(const std::vector<ArtifactMatch>& matches) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.StartArray();
    for (const ArtifactMatch& m : matches) {
        w.StartObject();
        w.Key("ref");
        w.String(m.ref.data(), static_cast<rapidjson::SizeType>(m.ref.size()));
        w.Key("field");
        w.String(m.field.data(), static_cast<rapidjson::SizeType>(m.field.size()));
        w.Key("excerpt");
        w.String(m.excerpt.data(), static_cast<rapidjson::SizeType>(m.excerpt.size()));
        w.EndObject();
    }
    w.EndArray();
    return {buffer.GetString(), buffer.GetSize()};
}

ToolResultBlock get_field(const ArtifactRegistry& registry, const ToolUseBlock& call) {
    GetArtifactFieldInput input;
    try {
        input = schema::from_json<GetArtifactFieldInput>(call.input_json);
    } catch (const Error& e) {
        return error_result(call, std::string(kGetArtifactFieldTool) + ": " + e.what());
    }
    const Artifact* artifact = registry.get(input.ref);
    if (artifact == nullptr) {
        return error_result(call, "No artifact has the reference '" + input.ref +
                                      "'. Use a reference exactly as the registry shows it.");
    }
    rapidjson::Document doc;
    artifacts::parse(doc, artifact->value_json, "artifact '" + artifact->ref + "'");
    std::vector<std::string> fields;
    if (doc.IsObject()) {
        for (auto m = doc.MemberBegin(); m != doc.MemberEnd(); ++m) {
            const std::string_view name(m->name.GetString(), m->name.GetStringLength());
            if (name == kArtifactMarker) continue;
            if (name == input.field_name) {
                if (m->value.IsString()) {
                    return ToolResultBlock{
                        call.id,
                        {TextBlock{std::string(m->value.GetString(), m->value.GetStringLength())}},
                        false};
                }
                return ToolResultBlock{
                    call.id, {TextBlock{internal::json_compact(m->value)}}, false};
            }
            fields.emplace_back(name);
        }
    }
    std::string listed;
    for (const std::string& f : fields) listed += (listed.empty() ? "" : ", ") + f;
    return error_result(call, "Artifact " + artifact->ref + " has no field '" + input.field_name +
                                  "'. Its fields are: " + (listed.empty() ? "(none)" : listed) +
                                  ".");
}

}  // namespace

std::vector<ArtifactMatch> ArtifactRegistry::search(std::string_view query,
                                                    std::size_t limit) const {
    std::vector<ArtifactMatch> out;
    if (query.empty()) return out;
    for (const Artifact* a : all_artifacts_including_reachable()) {
        if (out.size() >= limit) break;
        rapidjson::Document doc;
        artifacts::parse(doc, a->value_json, "artifact '" + a->ref + "'");
        search_value(doc, "", query, a->ref, limit, out);
    }
    return out;
}

std::vector<ToolDefinitionBlock> artifact_tool_definitions() {
    return {
        tool_definition<GetArtifactFieldInput>(
            std::string(kGetArtifactFieldTool),
            "[weight: light] Returns the full value of one field of an artifact from the "
            "ARTIFACT REGISTRY (where long text shows only a summary)."),
        tool_definition<SearchArtifactContentInput>(
            std::string(kSearchArtifactContentTool),
            "[weight: light] Searches the text of every artifact, list items included; returns "
            "the matching artifacts' references, fields and excerpts."),
    };
}

std::optional<ToolResultBlock> answer_artifact_tool(const ArtifactRegistry& registry,
                                                    const ToolUseBlock& call) {
    if (call.name == kGetArtifactFieldTool) return get_field(registry, call);
    if (call.name != kSearchArtifactContentTool) return std::nullopt;
    SearchArtifactContentInput input;
    try {
        input = schema::from_json<SearchArtifactContentInput>(call.input_json);
    } catch (const Error& e) {
        return error_result(call, std::string(kSearchArtifactContentTool) + ": " + e.what());
    }
    if (input.query.empty()) {
        return error_result(call, std::string(kSearchArtifactContentTool) +
                                      ": the query is empty; give the text to look for");
    }
    return ToolResultBlock{call.id, {TextBlock{matches_json(registry.search(input.query))}}, false};
}

}  // namespace nucleo
