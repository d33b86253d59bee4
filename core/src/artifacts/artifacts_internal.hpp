// Internals of the artifacts concern shared by its files and by the conversation document
// writer: the one walk that finds nested artifacts (so registration, the summarized rendering,
// the document's full form and search agree on "document order"), and the registry's caches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <rapidjson/document.h>

#include "nucleo/artifacts.hpp"

namespace nucleo {

/// Filled by const readers (the token count, the registry turn, compaction), which may run on
/// several threads at once over one const conversation (TokenCounter is thread-safe): every access
/// holds `mutex`. Entries are only added by const readers; a reference to one stays valid until a
/// non-const call (registering, set_summarizer) which the owner never runs concurrently.
struct ArtifactRegistry::Caches {
    std::unordered_map<std::string, std::string> summarized;  // ref -> write_summarized
    std::unordered_map<std::string, std::string> pojo;        // type_name '\0' json -> rendered
    std::optional<std::string> section;                       // the registry turn's text
    std::recursive_mutex mutex;  // recursive: the section renders each artifact

    Caches() = default;
    Caches(const Caches& other)
        : summarized(other.summarized), pojo(other.pojo), section(other.section) {}
    Caches& operator=(const Caches&) = delete;
    ~Caches() = default;
};

/// The registry's private side, shared by the files of core/src/artifacts.
struct ArtifactRegistryAccess {
    static ArtifactRegistry::Caches& caches(const ArtifactRegistry& r);
    /// See ArtifactRegistry::epoch_: equal epochs, equal renderings of the same content.
    static std::uint64_t epoch(const ArtifactRegistry& r) noexcept { return r.epoch_; }
    /// The summarizer set, or the TruncatingSummarizer.
    static const ArtifactSummarizer& summarizer(const ArtifactRegistry& r);
    static void add(ArtifactRegistry& r, Artifact a, bool top);
    /// The reference an already registered artifact of this content holds, without registering.
    static std::optional<std::string> find_ref(const ArtifactRegistry& r, std::string_view type,
                                               std::string_view json);
    static void promote(ArtifactRegistry& r, std::ptrdiff_t slot);
    static std::string insert(ArtifactRegistry& r, std::string_view type, std::string json,
                              std::vector<std::string> nested, bool top,
                              const std::optional<std::string>& preset, const std::string& where);
    /// Registers the artifact `v` (of `type`) and, first, every artifact nested in it (reachable
    /// tier). "@ref" members are stripped from `v` (restoring: they are the nested artifacts'
    /// stored references). Returns the reference.
    static std::string register_value(ArtifactRegistry& r, std::string_view type,
                                      rapidjson::Value& v,
                                      rapidjson::Document::AllocatorType& alloc, bool top,
                                      bool restoring, std::optional<std::string> preset,
                                      const std::string& where);
};

namespace artifacts {

inline constexpr std::string_view kRefOpen =
    "\xC2\xAB"
    "artifact:";                                           // «artifact:
inline constexpr std::string_view kRefClose = "\xC2\xBB";  // »

/// The alias an object carries under "@artifact", or nullopt when it is not an artifact.
std::optional<std::string_view> artifact_alias(const rapidjson::Value& v);

/// The alias inside a reference «artifact:ALIAS~ID», or nullopt when `ref` is not of that form.
std::optional<std::string_view> ref_alias(std::string_view ref);

/// Calls `f(object, path)` for each artifact object nested in `v` (not `v` itself), in document
/// order, without descending into them. `path` is the JSON path below `v` ("items[3]").
template <typename Value, typename F>
void for_each_nested(Value& v, const std::string& path, F&& f) {
    if (v.IsObject()) {
        for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
            std::string sub = path.empty()
                                  ? std::string(m->name.GetString(), m->name.GetStringLength())
                                  : path + "." + m->name.GetString();
            if (artifact_alias(m->value)) {
                f(m->value, sub);
            } else {
                for_each_nested(m->value, sub, f);
            }
        }
    } else if (v.IsArray()) {
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
            std::string sub = path + "[" + std::to_string(i) + "]";
            if (artifact_alias(v[i])) {
                f(v[i], sub);
            } else {
                for_each_nested(v[i], sub, f);
            }
        }
    }
}

/// Parses JSON text, refusing (kInvalidArgument) with `what` and the parse error.
void parse(rapidjson::Document& doc, std::string_view json, const std::string& what);

/// The number of characters (UTF-8 code points) of a text: the N of "[SUMMARY: N chars]".
std::size_t char_count(std::string_view text) noexcept;

/// The artifact's full form as the conversation document keeps it: its value with "@ref" added
/// to every nested artifact (at any depth), so iterands come back by their own references.
std::string document_value(const ArtifactRegistry& registry, const Artifact& artifact);

/// A PojoBlock as the model sees its artifacts, without registering anything (a const reader:
/// compaction): the rendering write_summarized_with_refs cached, else each artifact the registry
/// already holds replaced by its {"@ref"} (summaries are not made here). Malformed JSON or an
/// unknown artifact is left as it is.
std::string rendered_with_refs(const ArtifactRegistry& registry, const PojoBlock& pojo);

}  // namespace artifacts
}  // namespace nucleo
