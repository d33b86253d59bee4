// The artifact registry: data the tools produced, kept exactly as it came out.
//
// Seed 000 "Artifact Integration": "Artifacts use dual channels: LLM sees data for reasoning, but
// data travels intact via registry." The model sees a reference («artifact:TYPE~SHORTID») where
// the artifact sat and the registry dump (a trailing user turn) lists every artifact. This is the
// minimal registry of the conversation issue; the artifacts issue extends it (summaries, reachable
// tier, @ref discovery in PojoBlocks).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo {

/// One registered artifact: its reference, its type alias ("link:cite") and its value as JSON
/// text (compact, as registered).
struct Artifact {
    std::string ref;
    std::string type;
    std::string value_json;
    bool operator==(const Artifact&) const = default;
};

/// The artifacts of one conversation, in registration order (seed 000 "Registry Dump").
///
/// References follow the seed's format, «artifact:TYPE~SHORTID» (e.g. «artifact:link:cite~a1b2c3»).
/// Decision: SHORTID is the first 6 hex digits of a 64-bit FNV-1a hash of the type and the compact
/// JSON value, lengthened one digit at a time only when a different artifact already holds that
/// id. So the same content registered twice gets the same reference (and one entry), and a
/// reference never depends on registration order or process — it is stable across save/restore,
/// where restore() keeps the stored reference verbatim anyway.
class ArtifactRegistry {
  public:
    /// Registers an artifact and returns its reference. `value_json` must be JSON (refused with
    /// Error(kInvalidArgument) naming the type otherwise); it is stored compact. `type` must be
    /// non-empty and contain neither '~' nor '»'.
    std::string register_artifact(std::string_view type, std::string_view value_json);

    /// Puts back an artifact read from a snapshot, keeping its reference. Refused
    /// (kInvalidArgument) when the reference is not of the form «artifact:TYPE~ID» with TYPE equal
    /// to `artifact.type`, when the value is not JSON, or when the reference is already held by a
    /// different artifact. Restoring an identical entry twice is a no-op.
    void restore(Artifact artifact);

    /// The artifact a reference names, or nullptr.
    [[nodiscard]] const Artifact* get(std::string_view ref) const noexcept;

    /// Every artifact, in registration order. (The artifacts issue adds the reachable tier, which
    /// this excludes.)
    [[nodiscard]] const std::vector<Artifact>& all_artifacts() const noexcept { return artifacts_; }

    [[nodiscard]] bool empty() const noexcept { return artifacts_.empty(); }
    [[nodiscard]] std::size_t size() const noexcept { return artifacts_.size(); }

    /// Seed 000 "Registry Dump": the header, its two guidance lines, then per artifact its
    /// reference on one line and its JSON on the next, artifacts separated by a blank line:
    ///
    ///     === ARTIFACT REGISTRY ===
    ///     Long text fields show summaries with original length. Use get_artifact_field(ref,
    ///     fieldName) for full content.           (one line in the output)
    ///     Use search_artifact_content(query) to search across all artifact text.
    ///
    ///     «artifact:link:cite~a1b2c3»
    ///     {"url":"..."}
    ///
    /// Empty string when the registry is empty.
    [[nodiscard]] std::string build_artifact_registry_section() const;

    bool operator==(const ArtifactRegistry&) const = default;

  private:
    std::vector<Artifact> artifacts_;
};

/// The reference format of seed 000 "Reference Format": «artifact:TYPE~SHORTID».
std::string make_artifact_ref(std::string_view type, std::string_view short_id);

}  // namespace nucleo
