// The artifact type registry (artifacts.2, persistence.24: deserialization takes each
// iterand's type from its own reference alias): process-wide, since a document may be read
// anywhere; declared types live for the program (schema::node_of keeps them), so the registry holds
// plain pointers.
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "nucleo/artifacts.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {
namespace {

struct TypeTable {
    std::shared_mutex mutex;
    std::unordered_map<std::string, const schema::TypeNode*> by_alias;
    std::unordered_map<std::string, const schema::TypeNode*> by_name;
};

TypeTable& table() {
    static TypeTable t;
    return t;
}

/// A list's own description: every list shares the alias "list" whatever its iterand type, so
/// the built-in entry describes only the list's frame (its items are artifacts of their own).
struct ListFrame {
    std::string iterand_type;
};

void declare_locked(TypeTable& t, const schema::TypeNode& node,
                    std::unordered_set<const schema::TypeNode*>& seen) {
    using schema::Kind;
    if (!seen.insert(&node).second) return;  // a type naming itself through a vector
    if (node.kind == Kind::kArray || node.kind == Kind::kOptional) {
        declare_locked(t, node.element(), seen);
        return;
    }
    if (node.kind != Kind::kObject) return;
    // Every list shares the alias "list" (built in): only its iterand type is declared.
    if (node.artifact_alias != kArtifactListAlias) {
        if (!node.artifact_alias.empty()) t.by_alias.emplace(node.artifact_alias, &node);
        if (!node.name.empty()) t.by_name.emplace(node.name, &node);
    }
    for (const schema::FieldNode& f : node.fields) declare_locked(t, f.type(), seen);
}

}  // namespace

template <>
struct Describe<ListFrame> {
    static constexpr std::string_view name = "ArtifactList";
    static constexpr std::string_view artifact_alias = kArtifactListAlias;
    static auto fields() {
        return std::tuple(schema::field("iterand_type", &ListFrame::iterand_type).required());
    }
};

void ArtifactTypes::declare(const schema::TypeNode& node) {
    TypeTable& t = table();
    std::unique_lock lock(t.mutex);
    std::unordered_set<const schema::TypeNode*> seen;
    declare_locked(t, node, seen);
}

const schema::TypeNode* ArtifactTypes::find(std::string_view alias) {
    if (alias == kArtifactListAlias) return &schema::node_of<ListFrame>();
    TypeTable& t = table();
    std::shared_lock lock(t.mutex);
    const auto it = t.by_alias.find(std::string(alias));
    return it == t.by_alias.end() ? nullptr : it->second;
}

const schema::TypeNode& ArtifactTypes::resolve(std::string_view alias, std::string_view where) {
    if (const schema::TypeNode* node = find(alias)) return *node;
    throw Error(ErrorKind::kInvalidArgument,
                std::string(where) + (where.empty() ? "" : ": ") + "unknown artifact type alias '" +
                    std::string(alias) +
                    "' (no artifact type of that alias is declared: declare_artifact_type<T>() "
                    "before reading)");
}

const schema::TypeNode* ArtifactTypes::find_named(std::string_view type_name) {
    if (type_name.empty()) return nullptr;
    TypeTable& t = table();
    std::shared_lock lock(t.mutex);
    const auto it = t.by_name.find(std::string(type_name));
    return it == t.by_name.end() ? nullptr : it->second;
}

}  // namespace nucleo
