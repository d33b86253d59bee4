// The artifact registry: references, the two tiers, registration and restore (artifacts.3,
// artifacts.5: reachable artifacts stay bounded); see core/include/nucleo/artifacts.hpp
// for the decisions.
#include <atomic>
#include <cstdint>
#include <string>

#include <rapidjson/error/en.h>

#include "artifacts/artifacts_internal.hpp"
#include "common/json_text.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {

namespace artifacts {

std::optional<std::string_view> artifact_alias(const rapidjson::Value& v) {
    if (!v.IsObject()) return std::nullopt;
    const auto m = v.FindMember("@artifact");
    if (m == v.MemberEnd() || !m->value.IsString()) return std::nullopt;
    return std::string_view(m->value.GetString(), m->value.GetStringLength());
}

std::optional<std::string_view> ref_alias(std::string_view ref) {
    if (ref.size() <= kRefOpen.size() + kRefClose.size() || !ref.starts_with(kRefOpen) ||
        !ref.ends_with(kRefClose)) {
        return std::nullopt;
    }
    const std::string_view inner =
        ref.substr(kRefOpen.size(), ref.size() - kRefOpen.size() - kRefClose.size());
    const std::size_t tilde = inner.rfind('~');
    if (tilde == std::string_view::npos || tilde == 0 || tilde + 1 == inner.size()) {
        return std::nullopt;
    }
    return inner.substr(0, tilde);
}

void parse(rapidjson::Document& doc, std::string_view json, const std::string& what) {
    // limits.120 to limits.122: depth-bounded, no duplicate key, no raw NUL.
    if (auto refusal = json_guard::parse(doc, json, json_guard::kDocumentMaxDepth)) {
        throw Error(ErrorKind::kInvalidArgument,
                    what + ": value is not JSON (" + refusal->text() + ")");
    }
}

std::size_t char_count(std::string_view text) noexcept {
    std::size_t n = 0;
    for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
    return n;
}

}  // namespace artifacts

namespace {

using artifacts::kRefClose;
using artifacts::kRefOpen;
constexpr std::size_t kMinShortId = 6;

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

/// A list's frame: {"iterand_type": ALIAS, "items": [artifacts of ALIAS]}, each iterand's type
/// resolvable (persistence.24: an unresolvable iterand type fails the read rather than
/// silently shortening the list).
void check_list(const rapidjson::Value& v, const std::string& where) {
    if (!v.IsObject()) {
        throw Error(ErrorKind::kInvalidArgument,
                    where + ": a list artifact is an object, found " + internal::json_type_word(v));
    }
    const auto iterand = v.FindMember("iterand_type");
    const auto items = v.FindMember("items");
    if (iterand == v.MemberEnd() || !iterand->value.IsString()) {
        throw Error(ErrorKind::kInvalidArgument,
                    where + ".iterand_type: missing (a list names its iterand type)");
    }
    if (items == v.MemberEnd() || !items->value.IsArray()) {
        throw Error(ErrorKind::kInvalidArgument, where + ".items: missing (an array is required)");
    }
    const std::string_view type(iterand->value.GetString(), iterand->value.GetStringLength());
    ArtifactTypes::resolve(type, where + ".iterand_type");
    for (rapidjson::SizeType i = 0; i < items->value.Size(); ++i) {
        const std::string at = where + ".items[" + std::to_string(i) + "]";
        const auto alias = artifacts::artifact_alias(items->value[i]);
        if (!alias) {
            throw Error(ErrorKind::kInvalidArgument,
                        at + ": a list iterand must be an artifact of type '" + std::string(type) +
                            "' (an object carrying \"@artifact\")");
        }
        ArtifactTypes::resolve(*alias, at);
        if (*alias != type) {
            throw Error(ErrorKind::kInvalidArgument, at + ": iterand of type '" +
                                                         std::string(*alias) + "' in a list of '" +
                                                         std::string(type) + "'");
        }
    }
}

}  // namespace

ArtifactRegistry::Caches& ArtifactRegistryAccess::caches(const ArtifactRegistry& r) {
    if (!r.caches_) r.caches_ = std::make_unique<ArtifactRegistry::Caches>();
    return *r.caches_;
}

const ArtifactSummarizer& ArtifactRegistryAccess::summarizer(const ArtifactRegistry& r) {
    static const TruncatingSummarizer fallback;
    return r.summarizer_ ? *r.summarizer_ : fallback;
}

void ArtifactRegistryAccess::add(ArtifactRegistry& r, Artifact a, bool top) {
    const std::string ref = a.ref;
    if (top) {
        r.artifacts_.push_back(std::move(a));
        r.index_.emplace(ref, static_cast<std::ptrdiff_t>(r.artifacts_.size() - 1));
    } else {
        r.reachable_.push_back(std::move(a));
        r.index_.emplace(ref, -static_cast<std::ptrdiff_t>(r.reachable_.size()));
    }
    caches(r).section.reset();
}

/// Moves a reachable artifact to the registered tier (it was registered on its own).
std::optional<std::string> ArtifactRegistryAccess::find_ref(const ArtifactRegistry& r,
                                                            std::string_view type,
                                                            std::string_view json) {
    // The probe sequence of insert(): the first id whose holder has this content.
    const std::string digits = hex64(fnv1a(type, json));
    for (std::size_t len = kMinShortId; len <= digits.size(); ++len) {
        const std::string ref = make_artifact_ref(type, std::string_view(digits).substr(0, len));
        const Artifact* held = r.get(ref);
        if (held == nullptr) return std::nullopt;
        if (held->type == type && held->value_json == json) return ref;
    }
    return std::nullopt;
}

void ArtifactRegistryAccess::promote(ArtifactRegistry& r, std::ptrdiff_t slot) {
    const auto i = static_cast<std::size_t>(-slot - 1);
    Artifact a = std::move(r.reachable_[i]);
    r.reachable_.erase(r.reachable_.begin() + static_cast<std::ptrdiff_t>(i));
    for (std::size_t k = i; k < r.reachable_.size(); ++k) {
        r.index_[r.reachable_[k].ref] = -static_cast<std::ptrdiff_t>(k + 1);
    }
    r.index_.erase(a.ref);
    add(r, std::move(a), true);
}

std::string ArtifactRegistryAccess::insert(ArtifactRegistry& r, std::string_view type,
                                           std::string json, std::vector<std::string> nested,
                                           bool top, const std::optional<std::string>& preset,
                                           const std::string& where) {
    auto place = [&](const std::string& ref) -> std::optional<std::string> {
        const auto it = r.index_.find(ref);
        if (it == r.index_.end()) {
            add(r, Artifact{ref, std::string(type), std::move(json), std::move(nested)}, top);
            return ref;
        }
        const Artifact& held = it->second >= 0
                                   ? r.artifacts_[static_cast<std::size_t>(it->second)]
                                   : r.reachable_[static_cast<std::size_t>(-it->second - 1)];
        if (held.type != type || held.value_json != json) return std::nullopt;
        if (top && it->second < 0) promote(r, it->second);
        return ref;
    };
    if (preset) {
        if (auto ref = place(*preset)) return *ref;
        throw Error(ErrorKind::kInvalidArgument, where + ": artifact reference '" + *preset +
                                                     "' is already held by a different "
                                                     "artifact");
    }
    const std::string digits = hex64(fnv1a(type, json));
    // Lengthen the short id only while a DIFFERENT artifact holds it; the same content maps
    // to the same entry.
    for (std::size_t len = kMinShortId; len <= digits.size(); ++len) {
        if (auto ref = place(make_artifact_ref(type, std::string_view(digits).substr(0, len)))) {
            return *ref;
        }
    }
    // A full 64-bit collision between different contents: fall back to a counter suffix.
    for (std::size_t n = 1;; ++n) {
        if (auto ref = place(make_artifact_ref(type, digits + "-" + std::to_string(n)))) {
            return *ref;
        }
    }
}

/// Registers the artifact `v` (of `type`) and, first, every artifact nested in it (reachable
/// tier). "@ref" members are stripped from `v` (restoring: they are the nested artifacts'
/// stored references). Returns the reference.
std::string ArtifactRegistryAccess::register_value(ArtifactRegistry& r, std::string_view type,
                                                   rapidjson::Value& v,
                                                   rapidjson::Document::AllocatorType& alloc,
                                                   bool top, bool restoring,
                                                   std::optional<std::string> preset,
                                                   const std::string& where) {
    check_type(type);
    if (v.IsObject()) {
        if (const auto m = v.FindMember("@ref"); m != v.MemberEnd()) {
            if (restoring && !preset && m->value.IsString()) {
                preset.emplace(m->value.GetString(), m->value.GetStringLength());
                // persistence.24: each iterand's type from its own reference alias.
                const auto alias = artifacts::ref_alias(*preset);
                if (!alias || *alias != type) {
                    throw Error(ErrorKind::kInvalidArgument,
                                where + ": reference '" + *preset +
                                    "' does not name an artifact of its type '" +
                                    std::string(type) + "'");
                }
            }
            v.EraseMember(m);
        }
    }
    if (type == kArtifactListAlias) check_list(v, where);
    std::vector<std::string> nested;
    artifacts::for_each_nested(v, "", [&](rapidjson::Value& child, const std::string& path) {
        const std::string alias(*artifacts::artifact_alias(child));
        nested.push_back(register_value(r, alias, child, alloc, false, restoring, std::nullopt,
                                        where + "." + path));
    });
    return insert(r, type, internal::json_compact(v), std::move(nested), top, preset, where);
}

namespace {
std::uint64_t next_epoch() noexcept {
    // Process-unique; relaxed is enough: only uniqueness matters.
    static std::atomic<std::uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}
}  // namespace

ArtifactRegistry::ArtifactRegistry() : epoch_(next_epoch()) {}
ArtifactRegistry::~ArtifactRegistry() = default;
ArtifactRegistry::ArtifactRegistry(const ArtifactRegistry& other)
    : artifacts_(other.artifacts_),
      reachable_(other.reachable_),
      index_(other.index_),
      summarizer_(other.summarizer_),
      caches_(other.caches_ ? std::make_unique<Caches>(*other.caches_) : nullptr),
      epoch_(next_epoch()) {}
ArtifactRegistry& ArtifactRegistry::operator=(const ArtifactRegistry& other) {
    if (this != &other) {
        ArtifactRegistry copy(other);
        *this = std::move(copy);
    }
    return *this;
}
ArtifactRegistry::ArtifactRegistry(ArtifactRegistry&& other) noexcept = default;
ArtifactRegistry& ArtifactRegistry::operator=(ArtifactRegistry&& other) noexcept {
    artifacts_ = std::move(other.artifacts_);
    reachable_ = std::move(other.reachable_);
    index_ = std::move(other.index_);
    summarizer_ = std::move(other.summarizer_);
    caches_ = std::move(other.caches_);
    epoch_ = next_epoch();  // this registry's renderings may now differ from before
    return *this;
}

std::string make_artifact_ref(std::string_view type, std::string_view short_id) {
    std::string ref;
    ref.reserve(kRefOpen.size() + type.size() + 1 + short_id.size() + kRefClose.size());
    ref.append(kRefOpen).append(type).append("~").append(short_id).append(kRefClose);
    return ref;
}

std::string ArtifactRegistry::register_artifact(std::string_view type,
                                                std::string_view value_json) {
    check_type(type);
    const std::string where = "artifact of type '" + std::string(type) + "'";
    rapidjson::Document doc;
    artifacts::parse(doc, value_json, where);
    return ArtifactRegistryAccess::register_value(*this, type, doc, doc.GetAllocator(), true, false,
                                                  std::nullopt, where);
}

void ArtifactRegistry::restore(Artifact artifact) {
    check_type(artifact.type);
    const auto alias = artifacts::ref_alias(artifact.ref);
    if (!alias || *alias != artifact.type) {
        throw Error(ErrorKind::kInvalidArgument,
                    "artifact reference '" + artifact.ref + "' is not of the form \xC2\xAB" +
                        "artifact:" + artifact.type + "~ID\xC2\xBB for its type '" + artifact.type +
                        "'");
    }
    const std::string where = "artifact '" + artifact.ref + "'";
    rapidjson::Document doc;
    artifacts::parse(doc, artifact.value_json, where);
    ArtifactRegistryAccess::register_value(*this, artifact.type, doc, doc.GetAllocator(), true,
                                           true, artifact.ref, where);
}

const Artifact* ArtifactRegistry::get(std::string_view ref) const noexcept {
    const auto it = index_.find(std::string(ref));
    if (it == index_.end()) return nullptr;
    return it->second >= 0 ? &artifacts_[static_cast<std::size_t>(it->second)]
                           : &reachable_[static_cast<std::size_t>(-it->second - 1)];
}

bool ArtifactRegistry::reachable(std::string_view ref) const noexcept {
    const auto it = index_.find(std::string(ref));
    return it != index_.end() && it->second < 0;
}

std::vector<const Artifact*> ArtifactRegistry::all_artifacts_including_reachable() const {
    std::vector<const Artifact*> out;
    out.reserve(artifacts_.size() + reachable_.size());
    for (const Artifact& a : artifacts_) out.push_back(&a);
    for (const Artifact& a : reachable_) out.push_back(&a);
    return out;
}

std::string ArtifactRegistry::json_of(std::string_view ref, std::string_view alias) const {
    const Artifact* a = get(ref);
    if (a == nullptr) {
        throw Error(ErrorKind::kNotFound,
                    "no artifact has the reference '" + std::string(ref) + "'");
    }
    if (!alias.empty() && a->type != alias) {
        throw Error(ErrorKind::kInvalidArgument, "artifact '" + std::string(ref) +
                                                     "' is of type '" + a->type + "', not '" +
                                                     std::string(alias) + "'");
    }
    return a->value_json;
}

void ArtifactRegistry::set_summarizer(std::shared_ptr<const ArtifactSummarizer> summarizer) {
    summarizer_ = std::move(summarizer);
    caches_.reset();
    epoch_ = next_epoch();
}

namespace artifacts {

namespace {
void add_refs(const ArtifactRegistry& registry, rapidjson::Value& v, const Artifact& artifact,
              rapidjson::Document::AllocatorType& alloc) {
    std::size_t k = 0;
    for_each_nested(v, "", [&](rapidjson::Value& child, const std::string&) {
        if (k >= artifact.nested.size()) return;
        const std::string& ref = artifact.nested[k++];
        if (const Artifact* inner = registry.get(ref)) add_refs(registry, child, *inner, alloc);
        child.AddMember(
            "@ref",
            rapidjson::Value(ref.data(), static_cast<rapidjson::SizeType>(ref.size()), alloc),
            alloc);
    });
}
}  // namespace

std::string document_value(const ArtifactRegistry& registry, const Artifact& artifact) {
    if (artifact.nested.empty()) return artifact.value_json;
    rapidjson::Document doc;
    parse(doc, artifact.value_json, "artifact '" + artifact.ref + "'");
    add_refs(registry, doc, artifact, doc.GetAllocator());
    return internal::json_compact(doc);
}

}  // namespace artifacts
}  // namespace nucleo
