// The minimal artifact registry (seed 000 "Artifact Integration", "Reference Format",
// "Registry Dump"); see core/include/nucleo/artifacts.hpp for the decisions.
#include "nucleo/artifacts.hpp"

#include <cstdint>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

constexpr std::string_view kRefOpen =
    "\xC2\xAB"
    "artifact:";                                    // «artifact:
constexpr std::string_view kRefClose = "\xC2\xBB";  // »
constexpr std::size_t kMinShortId = 6;

/// The value as compact JSON, or a refusal naming the artifact's type and the parse error.
std::string compact_json(std::string_view type, std::string_view value_json) {
    rapidjson::Document doc;
    doc.Parse(value_json.data(), value_json.size());
    if (doc.HasParseError()) {
        throw Error(ErrorKind::kInvalidArgument,
                    "artifact of type '" + std::string(type) +
                        "': value is not JSON (byte offset " +
                        std::to_string(doc.GetErrorOffset()) + ": " +
                        rapidjson::GetParseError_En(doc.GetParseError()) + ")");
    }
    rapidjson::StringBuffer out;
    rapidjson::Writer<rapidjson::StringBuffer> writer(out);
    doc.Accept(writer);
    return {out.GetString(), out.GetSize()};
}

void check_type(std::string_view type) {
    if (type.empty() || type.find('~') != std::string_view::npos ||
        type.find(kRefClose) != std::string_view::npos) {
        throw Error(ErrorKind::kInvalidArgument,
                    "artifact type '" + std::string(type) +
                        "' is not usable in a reference: it must be non-empty and contain "
                        "neither '~' nor '\xC2\xBB'");
    }
}

std::string hex64(std::uint64_t h) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s(16, '0');
    for (int i = 15; i >= 0; --i, h >>= 4) s[static_cast<std::size_t>(i)] = kDigits[h & 0xF];
    return s;
}

std::uint64_t fnv1a(std::string_view type, std::string_view json) {
    std::uint64_t h = 14695981039346656037ULL;
    auto feed = [&h](unsigned char c) {
        h ^= c;
        h *= 1099511628211ULL;
    };
    for (char c : type) feed(static_cast<unsigned char>(c));
    feed(0);
    for (char c : json) feed(static_cast<unsigned char>(c));
    return h;
}

}  // namespace

std::string make_artifact_ref(std::string_view type, std::string_view short_id) {
    std::string ref;
    ref.reserve(kRefOpen.size() + type.size() + 1 + short_id.size() + kRefClose.size());
    ref.append(kRefOpen).append(type).append("~").append(short_id).append(kRefClose);
    return ref;
}

std::string ArtifactRegistry::register_artifact(std::string_view type,
                                                std::string_view value_json) {
    check_type(type);
    std::string json = compact_json(type, value_json);
    const std::string digits = hex64(fnv1a(type, json));
    // Lengthen the short id only while a DIFFERENT artifact holds it; the same content maps to
    // the same entry.
    for (std::size_t len = kMinShortId; len <= digits.size(); ++len) {
        std::string ref = make_artifact_ref(type, std::string_view(digits).substr(0, len));
        const Artifact* held = get(ref);
        if (held == nullptr) {
            artifacts_.push_back(Artifact{ref, std::string(type), std::move(json)});
            return ref;
        }
        if (held->type == type && held->value_json == json) return ref;
    }
    // A full 64-bit collision between different contents: fall back to a counter suffix.
    for (std::size_t n = 1;; ++n) {
        std::string ref = make_artifact_ref(type, digits + "-" + std::to_string(n));
        if (get(ref) == nullptr) {
            artifacts_.push_back(Artifact{ref, std::string(type), std::move(json)});
            return ref;
        }
    }
}

void ArtifactRegistry::restore(Artifact artifact) {
    check_type(artifact.type);
    const std::string prefix = std::string(kRefOpen) + artifact.type + "~";
    const std::string_view ref = artifact.ref;
    if (ref.size() <= prefix.size() + kRefClose.size() || ref.substr(0, prefix.size()) != prefix ||
        ref.substr(ref.size() - kRefClose.size()) != kRefClose) {
        throw Error(ErrorKind::kInvalidArgument,
                    "artifact reference '" + artifact.ref + "' is not of the form \xC2\xAB" +
                        "artifact:" + artifact.type + "~ID\xC2\xBB for its type '" + artifact.type +
                        "'");
    }
    artifact.value_json = compact_json(artifact.type, artifact.value_json);
    if (const Artifact* held = get(artifact.ref)) {
        if (*held == artifact) return;
        throw Error(ErrorKind::kInvalidArgument, "artifact reference '" + artifact.ref +
                                                     "' is already held by a different artifact");
    }
    artifacts_.push_back(std::move(artifact));
}

const Artifact* ArtifactRegistry::get(std::string_view ref) const noexcept {
    for (const Artifact& a : artifacts_) {
        if (a.ref == ref) return &a;
    }
    return nullptr;
}

std::string ArtifactRegistry::build_artifact_registry_section() const {
    if (artifacts_.empty()) return {};
    std::string out =
        "=== ARTIFACT REGISTRY ===\n"
        "Long text fields show summaries with original length. Use get_artifact_field(ref, "
        "fieldName) for full content.\n"
        "Use search_artifact_content(query) to search across all artifact text.\n";
    for (const Artifact& a : artifacts_) {
        out.append("\n").append(a.ref).append("\n").append(a.value_json).append("\n");
    }
    return out;
}

}  // namespace nucleo
