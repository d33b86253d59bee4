// Artifacts: data the tools produced, kept exactly as it came out.
//
// Artifacts travel on two channels (docs/spec/artifacts.md): the model sees data for reasoning, but
// the data travels intact in the registry. The model sees a reference («artifact:TYPE~SHORTID»)
// where the artifact sat, summaries of its long fields, and the registry dump (a trailing user
// turn); the full data stays here and is reached through get_artifact_field /
// search_artifact_content.
//
// Declaring an artifact type reuses the schema facility (nucleo/schema.hpp):
//
//     struct Citation { std::string url; std::string body; };
//     template <>
//     struct nucleo::Describe<Citation> {
//         static constexpr std::string_view name = "Citation";
//         static constexpr std::string_view artifact_alias = "link:cite";
//         static auto fields() {
//             using nucleo::schema::field;
//             return std::tuple(field("url", &Citation::url).required().description("Source"),
//                               field("body", &Citation::body).summarizable());
//         }
//     };
//
// An artifact's JSON carries "@artifact": ALIAS (written by schema::to_json), which is how one
// pass over any tool result or PojoBlock discovers it. A member of another artifact type is a
// nested artifact; ArtifactList<T> is a list artifact of iterand type T. Internals live in
// core/src/artifacts/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nucleo/content.hpp"
#include "nucleo/schema.hpp"

namespace nucleo {

class Config;
class PluginLoader;
class SummarizerInstance;

/// The JSON member naming an artifact's type alias, and the one a reference replaces it with.
inline constexpr std::string_view kArtifactMarker = "@artifact";
inline constexpr std::string_view kArtifactRefKey = "@ref";
/// The alias of every list artifact (artifacts.1); its iterand type rides in
/// "iterand_type".
inline constexpr std::string_view kArtifactListAlias = "list";

/// A list artifact (artifacts.1): an artifact holding iterands of one declared artifact type. Its
/// JSON is {"@artifact":"list","iterand_type":ALIAS,"items":[...]}; each iterand is itself an
/// artifact of the reachable tier.
template <typename T>
struct ArtifactList {
    std::string iterand_type{Describe<T>::artifact_alias};
    std::vector<T> items;
};

template <typename T>
struct Describe<ArtifactList<T>> {
    static constexpr std::string_view name = "ArtifactList";
    static constexpr std::string_view artifact_alias = kArtifactListAlias;
    static auto fields() {
        return std::tuple(schema::field("iterand_type", &ArtifactList<T>::iterand_type).required(),
                          schema::field("items", &ArtifactList<T>::items).required());
    }
};

/// One registered artifact: its reference, its type alias ("link:cite") and its full form as
/// compact JSON (nested artifacts inline). `nested` lists the references of the artifacts nested
/// directly in it (list iterands, artifact fields; not those nested deeper inside them), in
/// document order — the reachable tier it brings.
struct Artifact {
    std::string ref;
    std::string type;
    std::string value_json;
    std::vector<std::string> nested;
    bool operator==(const Artifact&) const = default;
};

/// The type registry (artifacts.2, persistence.24: each iterand's type from its own reference
/// alias): declared artifact types by alias and described object types by name, process-wide, so a
/// document read anywhere can resolve them. Thread-safe. Declaring is idempotent (an alias or name
/// keeps its first declaration); declare at start-up, before reading documents.
class ArtifactTypes {
  public:
    /// Declares `node` (an artifact when it has an artifact_alias; always by its name when it has
    /// one) and every described type reachable through its fields.
    static void declare(const schema::TypeNode& node);
    /// The described type of an artifact alias, or nullptr ("list" is built in).
    static const schema::TypeNode* find(std::string_view alias);
    /// The same, refusing an unknown alias: Error(kInvalidArgument) "unknown artifact type
    /// alias 'ALIAS'" with `where` in front.
    static const schema::TypeNode& resolve(std::string_view alias, std::string_view where = {});
    /// The described (non-artifact) type of a PojoBlock's type_name, or nullptr.
    static const schema::TypeNode* find_named(std::string_view type_name);
};

template <typename T>
void declare_artifact_type() {
    ArtifactTypes::declare(schema::node_of<T>());
}

/// A PojoBlock of a described value (its type declared, so its summarizable fields are known).
template <typename T>
PojoBlock pojo_block(const T& value) {
    const schema::TypeNode& node = schema::node_of<T>();
    ArtifactTypes::declare(node);
    return PojoBlock{node.name, schema::write_json(node, &value)};
}

/// What turns a long summarizable field into its summary (artifacts.6, artifacts.8). The host
/// supplies one; see default_artifact_summarizer.
class ArtifactSummarizer {
  public:
    virtual ~ArtifactSummarizer() = default;
    /// A summary of `text`, aiming at about `target_chars` characters. May throw nucleo::Error.
    virtual std::string summarize(std::string_view text, std::size_t target_chars) const = 0;
};

/// The deterministic fallback: the text's head, cut at a word boundary near `target_chars`
/// (never inside a UTF-8 sequence), followed by "...". No model, no cost, same output every time.
class TruncatingSummarizer final : public ArtifactSummarizer {
  public:
    std::string summarize(std::string_view text, std::size_t target_chars) const override;
};

/// A summarizer plugin ("nucleo.summarizer/1") as an ArtifactSummarizer: asks for about
/// target_chars / 4 tokens and returns the plugin's "summary".
std::shared_ptr<const ArtifactSummarizer> plugin_artifact_summarizer(SummarizerInstance instance);

/// Decision (artifacts.8): the configured summarizer plugin (nucleo.yaml `summarizer`) when there
/// is one, loaded through `loader`; otherwise the TruncatingSummarizer, so a conversation never
/// needs a model to show its artifacts. A registry with no summarizer set uses the latter.
std::shared_ptr<const ArtifactSummarizer> default_artifact_summarizer(const Config& config,
                                                                      const PluginLoader& loader);

/// One match of search_artifact_content: the artifact, the JSON path of the field inside it
/// ("body", "authors[0].name") and an excerpt around the match.
struct ArtifactMatch {
    std::string ref;
    std::string field;
    std::string excerpt;
    bool operator==(const ArtifactMatch&) const = default;
};

/// The artifacts of one conversation (artifacts.5, artifacts.7: reachable
/// artifacts stay bounded), in two tiers: the registered tier (what tools returned and what was
/// registered directly), in registration order, and the reachable tier (iterands of registered
/// lists and artifacts nested in registered artifacts' fields), which get() resolves and search
/// covers but the dump does not list.
///
/// References have the form «artifact:TYPE~SHORTID» (artifacts.3). Decision: SHORTID is the first 6
/// hex digits of a 64-bit FNV-1a hash of the type and the compact JSON value, lengthened one digit
/// at a time only when a different artifact already holds that id; so the same content registered
/// twice gets the same reference (and one entry). Restore keeps stored references verbatim.
///
/// Thread rule: const calls may run concurrently (the summary caches they fill are locked: the
/// token counter counts one conversation from several threads); a non-const call needs the one
/// owner (ownership.10).
class ArtifactRegistry {
  public:
    /// Registers an artifact and returns its reference; artifacts nested in `value_json`
    /// (objects carrying "@artifact") join the reachable tier. `value_json` must be JSON
    /// (refused with Error(kInvalidArgument) naming the type otherwise); it is stored compact.
    /// `type` must be non-empty and contain neither '~' nor '»'. A list's items must all be
    /// artifacts of its iterand_type (refused naming the position otherwise). Registering an
    /// artifact already in the reachable tier moves it to the registered tier.
    std::string register_artifact(std::string_view type, std::string_view value_json);
    /// Registers a described artifact value (its type declared on the way).
    template <typename T>
    std::string register_artifact(const T& value) {
        const schema::TypeNode& node = schema::node_of<T>();
        ArtifactTypes::declare(node);
        return register_artifact(node.artifact_alias, schema::write_json(node, &value));
    }

    /// Puts back an artifact read from a document, keeping its reference; nested artifacts that
    /// carry "@ref" (the document's full form) keep theirs too. A list iterand whose alias the
    /// type registry cannot resolve fails the restore (kInvalidArgument naming the alias and the
    /// position) rather than shortening the list. Also refused: a malformed reference, a value
    /// that is not JSON, a reference held by a different artifact.
    void restore(Artifact artifact);

    /// The artifact a reference names, in either tier, or nullptr. O(1) on average. The pointer
    /// is valid until the next non-const call (a registration may move artifacts).
    [[nodiscard]] const Artifact* get(std::string_view ref) const noexcept;
    /// The artifact as its described C++ type: Error(kNotFound) naming the reference when none,
    /// Error(kInvalidArgument) when it is of another type.
    template <typename T>
    [[nodiscard]] T get_as(std::string_view ref) const {
        const schema::TypeNode& node = schema::node_of<T>();
        T value{};
        schema::read_json(node, json_of(ref, node.artifact_alias), &value);
        return value;
    }
    /// True when `ref` is in the reachable tier.
    [[nodiscard]] bool reachable(std::string_view ref) const noexcept;

    /// artifacts.5: the registered tier, in registration order.
    [[nodiscard]] const std::vector<Artifact>& all_artifacts() const noexcept { return artifacts_; }
    /// artifacts.5: the registered tier, then the reachable one.
    [[nodiscard]] std::vector<const Artifact*> all_artifacts_including_reachable() const;
    /// search_artifact_content (artifacts.9): every string value containing `query`,
    /// case-insensitively (ASCII), across both tiers; a nested artifact's fields are reported
    /// under its own reference. At most `limit` matches.
    [[nodiscard]] std::vector<ArtifactMatch> search(std::string_view query,
                                                    std::size_t limit = 20) const;

    [[nodiscard]] bool empty() const noexcept { return artifacts_.empty(); }
    [[nodiscard]] std::size_t size() const noexcept { return artifacts_.size(); }

    /// The summarizer for long summarizable fields (none: TruncatingSummarizer). Changing it
    /// empties the summary caches.
    void set_summarizer(std::shared_ptr<const ArtifactSummarizer> summarizer);

    /// artifacts.6: one artifact as the model sees it — "@artifact" dropped, nested
    /// artifacts as {"@ref": ...}, long summarizable fields as "[SUMMARY: N chars] ...", and a
    /// list as its digest {"iterand_type", "count", "head": [first kDigestHead iterands]}.
    /// Cached per artifact: the second call costs no summarizer call.
    [[nodiscard]] const std::string& write_summarized(const Artifact& artifact) const;

    /// The registry turn (artifacts.7): the header and its two guidance lines, then per registered
    /// artifact its reference on one line and write_summarized() on the next, artifacts separated
    /// by a blank line:
    ///
    ///     === ARTIFACT REGISTRY ===
    ///     Long text fields show summaries with original length. Use get_artifact_field(ref,
    ///     fieldName) for full content.           (one line in the output)
    ///     Use search_artifact_content(query) to search across all artifact text.
    ///
    ///     «artifact:link:cite~a1b2c3»
    ///     {"url":"..."}
    ///
    /// Empty string when the registry is empty. Cached until the registry changes.
    [[nodiscard]] const std::string& build_artifact_registry_section() const;

    /// artifacts.6: one pass over a PojoBlock that registers every artifact
    /// it meets (registered tier), replaces each with {"@ref": "«artifact:…»"} at any depth, and
    /// replaces each long summarizable field of the block's described type (found by type_name)
    /// with "[SUMMARY: N chars] ...". Cached per block content.
    JsonBlock write_summarized_with_refs(const PojoBlock& pojo);

    /// Registers the artifacts of a PojoBlock without rendering it (what a conversation does when
    /// a message arrives, so the registry is complete before anything is counted or sent).
    void register_artifacts_in(const PojoBlock& pojo);

    /// A string field is summarized when longer than this many characters...
    static constexpr std::size_t kSummaryThreshold = 400;
    /// ...to about this many.
    static constexpr std::size_t kSummaryTarget = 160;
    /// Iterands shown in a list's digest.
    static constexpr std::size_t kDigestHead = 3;

    /// Equal when both tiers hold the same artifacts (summarizer and caches are not compared).
    bool operator==(const ArtifactRegistry& other) const {
        return artifacts_ == other.artifacts_ && reachable_ == other.reachable_;
    }

    /// Internal: the caches, kept out of this header.
    struct Caches;
    ArtifactRegistry();
    ~ArtifactRegistry();
    ArtifactRegistry(const ArtifactRegistry& other);
    ArtifactRegistry& operator=(const ArtifactRegistry& other);
    ArtifactRegistry(ArtifactRegistry&& other) noexcept;
    ArtifactRegistry& operator=(ArtifactRegistry&& other) noexcept;

  private:
    friend struct ArtifactRegistryAccess;
    [[nodiscard]] std::string json_of(std::string_view ref, std::string_view alias) const;

    std::vector<Artifact> artifacts_;  // registered tier
    std::vector<Artifact> reachable_;  // reachable tier
    // ref -> position; a negative position -(i+1) is reachable_[i].
    std::unordered_map<std::string, std::ptrdiff_t> index_;
    std::shared_ptr<const ArtifactSummarizer> summarizer_;
    mutable std::unique_ptr<Caches> caches_;  // filled by const readers
    // Renewed whenever what a rendering depends on may change other than by registering (a new
    // summarizer, an assignment): readers that cache renderings compare it.
    std::uint64_t epoch_;
};

/// The reference format (artifacts.3): «artifact:TYPE~SHORTID».
std::string make_artifact_ref(std::string_view type, std::string_view short_id);

/// The artifact tools (tools.14, artifacts.9): get_artifact_field(ref, fieldName) and
/// search_artifact_content(query), declared to a conversation that has artifacts; schemas from the
/// schema facility.
inline constexpr std::string_view kGetArtifactFieldTool = "get_artifact_field";
inline constexpr std::string_view kSearchArtifactContentTool = "search_artifact_content";
std::vector<ToolDefinitionBlock> artifact_tool_definitions();

/// Answers a call of one of the two artifact tools from the intact data, or nullopt when `call`
/// names another tool. get_artifact_field returns the field's full value (a string as is, other
/// values as JSON); search_artifact_content a JSON array of {"ref","field","excerpt"}. Bad input
/// is an error result, never an empty success: a reference that resolves to nothing is named; a
/// field the artifact lacks lists the fields it has; malformed input names what is wrong.
std::optional<ToolResultBlock> answer_artifact_tool(const ArtifactRegistry& registry,
                                                    const ToolUseBlock& call);

}  // namespace nucleo
