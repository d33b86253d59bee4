// What the model sees of artifacts (artifacts.6, artifacts.7): the
// summarized form of each artifact, the registry turn, write_summarized_with_refs over PojoBlocks,
// and the summarizers behind "[SUMMARY: N chars] ...".
#include <algorithm>
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "artifacts/artifacts_internal.hpp"
#include "common/json_text.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

#include <optional>

namespace nucleo {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// The object type under a field's type: arrays and optionals unwrapped; nullptr for scalars.
const schema::TypeNode* object_node(const schema::TypeNode* node) {
    while (node != nullptr &&
           (node->kind == schema::Kind::kArray || node->kind == schema::Kind::kOptional)) {
        node = &node->element();
    }
    return node != nullptr && node->kind == schema::Kind::kObject ? node : nullptr;
}

const schema::FieldNode* field_of(const schema::TypeNode* node, std::string_view name) {
    if (node == nullptr) return nullptr;
    for (const schema::FieldNode& f : node->fields) {
        if (f.name == name) return &f;
    }
    return nullptr;
}

bool is_long(const rapidjson::Value& v) {
    return v.IsString() &&
           artifacts::char_count(std::string_view(v.GetString(), v.GetStringLength())) >
               ArtifactRegistry::kSummaryThreshold;
}

/// artifacts.6: the summary format, "[SUMMARY: 2847 chars] This comprehensive study examines...".
std::string summary_of(const ArtifactSummarizer& summarizer, const rapidjson::Value& v) {
    const std::string_view text(v.GetString(), v.GetStringLength());
    return "[SUMMARY: " + std::to_string(artifacts::char_count(text)) + " chars] " +
           summarizer.summarize(text, ArtifactRegistry::kSummaryTarget);
}

void write_string(Writer& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

/// Writes one artifact's members as the model sees them (the "@artifact" marker left out: the
/// reference names the type): nested artifacts as {"@ref"}, long summarizable strings summarized.
class SummarizedWriter {
  public:
    SummarizedWriter(const ArtifactRegistry& registry, Writer& w)
        : registry_(registry), summarizer_(ArtifactRegistryAccess::summarizer(registry)), w_(w) {}

    /// The members of artifact `a` (whose parsed value is `v`), without the braces.
    void members(const rapidjson::Value& v, const Artifact& a) {
        const schema::TypeNode* node = ArtifactTypes::find(a.type);
        std::size_t cursor = 0;
        if (!v.IsObject()) {
            w_.Key("value");
            value(v, nullptr, a, cursor);
            return;
        }
        for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
            const std::string_view name(m->name.GetString(), m->name.GetStringLength());
            if (name == kArtifactMarker) continue;
            w_.Key(m->name.GetString(), m->name.GetStringLength());
            member(m->value, field_of(node, name), a, cursor);
        }
    }

    /// A list's digest (artifacts.7: a 200-iterand list contributes one digest entry
    /// (iterand_type, count, head sample), not 200 entries).
    void digest(const rapidjson::Value& v, const Artifact& a) {
        const auto& items = v["items"];
        w_.Key("iterand_type");
        w_.String(v["iterand_type"].GetString(), v["iterand_type"].GetStringLength());
        w_.Key("count");
        w_.Uint64(items.Size());
        w_.Key("head");
        w_.StartArray();
        const std::size_t head = std::min<std::size_t>(ArtifactRegistry::kDigestHead, items.Size());
        for (std::size_t i = 0; i < head && i < a.nested.size(); ++i) {
            const Artifact* iterand = registry_.get(a.nested[i]);
            w_.StartObject();
            w_.Key("@ref");
            write_string(w_, a.nested[i]);
            if (iterand != nullptr) members(items[static_cast<rapidjson::SizeType>(i)], *iterand);
            w_.EndObject();
        }
        w_.EndArray();
    }

  private:
    void member(const rapidjson::Value& v, const schema::FieldNode* field, const Artifact& a,
                std::size_t& cursor) {
        if (field != nullptr && field->summarizable && is_long(v)) {
            write_string(w_, summary_of(summarizer_, v));
        } else {
            value(v, field != nullptr ? object_node(&field->type()) : nullptr, a, cursor);
        }
    }

    void value(const rapidjson::Value& v, const schema::TypeNode* node, const Artifact& a,
               std::size_t& cursor) {
        if (artifacts::artifact_alias(v)) {
            w_.StartObject();
            w_.Key("@ref");
            write_string(w_, cursor < a.nested.size() ? a.nested[cursor] : std::string("?"));
            ++cursor;
            w_.EndObject();
        } else if (v.IsObject()) {
            w_.StartObject();
            for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
                w_.Key(m->name.GetString(), m->name.GetStringLength());
                member(m->value,
                       field_of(node,
                                std::string_view(m->name.GetString(), m->name.GetStringLength())),
                       a, cursor);
            }
            w_.EndObject();
        } else if (v.IsArray()) {
            w_.StartArray();
            for (const auto& e : v.GetArray()) value(e, node, a, cursor);
            w_.EndArray();
        } else {
            v.Accept(w_);
        }
    }

    const ArtifactRegistry& registry_;
    const ArtifactSummarizer& summarizer_;
    Writer& w_;
};

/// The one pass over a PojoBlock's value: artifacts registered and replaced by {"@ref"}, long
/// summarizable fields of the described type summarized (when `summarizer` is set).
class PojoPass {
  public:
    PojoPass(ArtifactRegistry& registry, rapidjson::Document::AllocatorType& alloc,
             const ArtifactSummarizer* summarizer, std::string where)
        : registry_(registry), alloc_(alloc), summarizer_(summarizer), where_(std::move(where)) {}

    void run(rapidjson::Value& v, const schema::TypeNode* node, const std::string& path) {
        if (const auto alias = artifacts::artifact_alias(v)) {
            const std::string type(*alias);
            const std::string ref = ArtifactRegistryAccess::register_value(
                registry_, type, v, alloc_, true, false, std::nullopt,
                where_ + (path.empty() ? "" : " at " + path));
            v.SetObject();
            v.AddMember(
                "@ref",
                rapidjson::Value(ref.data(), static_cast<rapidjson::SizeType>(ref.size()), alloc_),
                alloc_);
        } else if (v.IsObject()) {
            for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
                const std::string name(m->name.GetString(), m->name.GetStringLength());
                const schema::FieldNode* field = field_of(node, name);
                if (summarizer_ != nullptr && field != nullptr && field->summarizable &&
                    is_long(m->value)) {
                    const std::string summary = summary_of(*summarizer_, m->value);
                    m->value.SetString(summary.data(),
                                       static_cast<rapidjson::SizeType>(summary.size()), alloc_);
                } else {
                    run(m->value, field != nullptr ? object_node(&field->type()) : nullptr,
                        path.empty() ? name : path + "." + name);
                }
            }
        } else if (v.IsArray()) {
            for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
                run(v[i], node, path + "[" + std::to_string(i) + "]");
            }
        }
    }

  private:
    ArtifactRegistry& registry_;
    rapidjson::Document::AllocatorType& alloc_;
    const ArtifactSummarizer* summarizer_;
    std::string where_;
};

/// The pojo cache's key: the block's type and value (both decide the rendering).
std::string pojo_key(const PojoBlock& pojo) {
    std::string key;
    key.reserve(pojo.type_name.size() + 1 + pojo.value_json.size());
    key.append(pojo.type_name).push_back('\0');
    key.append(pojo.value_json);
    return key;
}

bool carries_artifacts(const PojoBlock& pojo) {
    return pojo.value_json.find(kArtifactMarker) != std::string::npos;
}

bool has_summarizable(const schema::TypeNode* node, int depth = 0) {
    if (node == nullptr || depth > 8) return false;
    for (const schema::FieldNode& f : node->fields) {
        if (f.summarizable || has_summarizable(object_node(&f.type()), depth + 1)) return true;
    }
    return false;
}

class PluginSummarizer final : public ArtifactSummarizer {
  public:
    explicit PluginSummarizer(SummarizerInstance instance) : instance_(std::move(instance)) {}

    std::string summarize(std::string_view text, std::size_t target_chars) const override {
        rapidjson::StringBuffer buffer;
        Writer w(buffer);
        w.StartObject();
        w.Key("schema_version");
        w.Int(1);
        w.Key("text");
        write_string(w, text);
        w.Key("target_tokens");
        w.Uint64(std::max<std::size_t>(1, target_chars / 4));
        w.EndObject();
        const std::string answer =
            instance_.summarize(std::string_view(buffer.GetString(), buffer.GetSize()));
        rapidjson::Document doc;
        // limits.120: a model's answer is read under the guard.
        if (json_guard::parse(doc, answer) || !doc.IsObject() || !doc.HasMember("summary") ||
            !doc["summary"].IsString()) {
            throw Error(ErrorKind::kProtocol, "summarizer plugin '" + instance_.plugin().name +
                                                  "' answered without a \"summary\" string");
        }
        return {doc["summary"].GetString(), doc["summary"].GetStringLength()};
    }

  private:
    SummarizerInstance instance_;
};

}  // namespace

std::string TruncatingSummarizer::summarize(std::string_view text, std::size_t target_chars) const {
    if (text.size() <= target_chars) return std::string(text);
    std::size_t cut = target_chars;
    // Never inside a UTF-8 sequence.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    // At a word boundary when one is in the second half.
    const std::size_t space = text.substr(0, cut).find_last_of(" \n\t");
    if (space != std::string_view::npos && space >= target_chars / 2) cut = space;
    std::string out(text.substr(0, cut));
    while (!out.empty() && (out.back() == ' ' || out.back() == '\n' || out.back() == '\t')) {
        out.pop_back();
    }
    return out + "...";
}

std::shared_ptr<const ArtifactSummarizer> plugin_artifact_summarizer(SummarizerInstance instance) {
    return std::make_shared<PluginSummarizer>(std::move(instance));
}

std::shared_ptr<const ArtifactSummarizer> default_artifact_summarizer(const Config& config,
                                                                      const PluginLoader& loader) {
    if (const auto& choice = config.summarizer()) {
        // abi.112: the choice's place names a plugin that cannot be loaded.
        std::optional<Plugin> plugin;
        try {
            plugin.emplace(load_summarizer_plugin(loader, *choice));
        } catch (const Error& e) {
            throw Error(e.kind(), (choice->where.empty() ? config.path().string() : choice->where) +
                                      ": summarizer: " + e.what());
        }
        return plugin_artifact_summarizer(
            plugin->make_summarizer(choice->options_json, &choice->options_origin));
    }
    return std::make_shared<TruncatingSummarizer>();
}

const std::string& ArtifactRegistry::write_summarized(const Artifact& artifact) const {
    Caches& caches = ArtifactRegistryAccess::caches(*this);
    const std::lock_guard lock(caches.mutex);
    if (const auto it = caches.summarized.find(artifact.ref); it != caches.summarized.end()) {
        return it->second;
    }
    rapidjson::Document doc;
    artifacts::parse(doc, artifact.value_json, "artifact '" + artifact.ref + "'");
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    SummarizedWriter writer(*this, w);
    w.StartObject();
    if (artifact.type == kArtifactListAlias && doc.IsObject() && doc.HasMember("items") &&
        doc["items"].IsArray() && doc.HasMember("iterand_type") && doc["iterand_type"].IsString()) {
        writer.digest(doc, artifact);
    } else {
        writer.members(doc, artifact);
    }
    w.EndObject();
    return caches.summarized
        .emplace(artifact.ref, std::string(buffer.GetString(), buffer.GetSize()))
        .first->second;
}

const std::string& ArtifactRegistry::build_artifact_registry_section() const {
    Caches& caches = ArtifactRegistryAccess::caches(*this);
    const std::lock_guard lock(caches.mutex);
    if (caches.section) return *caches.section;
    std::string out;
    if (!artifacts_.empty()) {
        out =
            "=== ARTIFACT REGISTRY ===\n"
            "Long text fields show summaries with original length. Use get_artifact_field(ref, "
            "fieldName) for full content.\n"
            "Use search_artifact_content(query) to search across all artifact text.\n";
        for (const Artifact& a : artifacts_) {
            const std::string& summarized = write_summarized(a);
            out.append("\n").append(a.ref).append("\n").append(summarized).append("\n");
        }
    }
    return caches.section.emplace(std::move(out));
}

JsonBlock ArtifactRegistry::write_summarized_with_refs(const PojoBlock& pojo) {
    const schema::TypeNode* node = ArtifactTypes::find_named(pojo.type_name);
    // Nothing to replace: the value goes as it is (no parse on the hot path).
    if (!carries_artifacts(pojo) && !has_summarizable(node)) return JsonBlock{pojo.value_json};
    Caches& caches = ArtifactRegistryAccess::caches(*this);
    std::string key = pojo_key(pojo);
    if (const auto it = caches.pojo.find(key); it != caches.pojo.end()) {
        return JsonBlock{it->second};
    }
    const std::string where = "PojoBlock of type '" + pojo.type_name + "'";
    rapidjson::Document doc;
    artifacts::parse(doc, pojo.value_json, where);
    PojoPass pass(*this, doc.GetAllocator(), &ArtifactRegistryAccess::summarizer(*this), where);
    pass.run(doc, node, "");
    std::string out = internal::json_compact(doc);
    // Registering may have reset the caches' section; the pojo map itself is still valid.
    ArtifactRegistryAccess::caches(*this).pojo.emplace(std::move(key), out);
    return JsonBlock{std::move(out)};
}

namespace artifacts {

namespace {
void replace_known(const ArtifactRegistry& registry, rapidjson::Value& v,
                   rapidjson::Document::AllocatorType& alloc) {
    if (const auto alias = artifact_alias(v)) {
        const std::string type(*alias);
        if (const auto ref =
                ArtifactRegistryAccess::find_ref(registry, type, internal::json_compact(v))) {
            v.SetObject();
            v.AddMember(
                "@ref",
                rapidjson::Value(ref->data(), static_cast<rapidjson::SizeType>(ref->size()), alloc),
                alloc);
        }
    } else if (v.IsObject()) {
        for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m)
            replace_known(registry, m->value, alloc);
    } else if (v.IsArray()) {
        for (auto& e : v.GetArray()) replace_known(registry, e, alloc);
    }
}
}  // namespace

std::string rendered_with_refs(const ArtifactRegistry& registry, const PojoBlock& pojo) {
    if (!carries_artifacts(pojo)) return pojo.value_json;
    ArtifactRegistry::Caches& caches = ArtifactRegistryAccess::caches(registry);
    {
        const std::lock_guard lock(caches.mutex);
        if (const auto it = caches.pojo.find(pojo_key(pojo)); it != caches.pojo.end()) {
            return it->second;
        }
    }
    rapidjson::Document doc;
    if (json_guard::parse(doc, pojo.value_json, json_guard::kDocumentMaxDepth))
        return pojo.value_json;
    replace_known(registry, doc, doc.GetAllocator());
    return internal::json_compact(doc);
}

}  // namespace artifacts

void ArtifactRegistry::register_artifacts_in(const PojoBlock& pojo) {
    if (!carries_artifacts(pojo)) return;
    const std::string where = "PojoBlock of type '" + pojo.type_name + "'";
    rapidjson::Document doc;
    artifacts::parse(doc, pojo.value_json, where);
    PojoPass pass(*this, doc.GetAllocator(), nullptr, where);
    pass.run(doc, nullptr, "");
}

}  // namespace nucleo
