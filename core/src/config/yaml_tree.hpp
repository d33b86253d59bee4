// The YAML of a config file as a tree of nodes with where each was written (limits.131,
// limits.124, limits.128). libyaml's event parser builds it in one pass that also guards the
// nesting, so a file is read once and fast (catalog load under 1 ms, docs/catalog.md); the
// config reader (yaml_reader.hpp) walks it.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo::config_internal {

/// Where a node was written: 0-based line and column, the byte offset; a null mark says nowhere.
struct YamlMark {
    int line = -1;
    int column = -1;
    std::size_t pos = 0;
    [[nodiscard]] bool is_null() const { return line < 0; }
};

enum class YamlType { kUndefined, kNull, kScalar, kSequence, kMap };

struct YamlData;
struct YamlEntry;

/// A handle on one node of a YamlTree (valid while the tree lives); default-constructed, the
/// undefined node a missing key reads as. A plain scalar `~`, `null`, `Null`, `NULL` or nothing
/// is a null node, as YAML's core schema reads it; a quoted one is a string.
class YamlNode {
  public:
    YamlNode() = default;
    explicit YamlNode(const YamlData* data) : data_(data) {}

    [[nodiscard]] YamlType type() const;
    [[nodiscard]] bool is_defined() const { return type() != YamlType::kUndefined; }
    [[nodiscard]] bool is_null() const { return type() == YamlType::kNull; }
    [[nodiscard]] bool is_scalar() const { return type() == YamlType::kScalar; }
    [[nodiscard]] bool is_sequence() const { return type() == YamlType::kSequence; }
    [[nodiscard]] bool is_map() const { return type() == YamlType::kMap; }
    /// The text of a scalar ("" for any other node).
    [[nodiscard]] const std::string& scalar() const;
    /// A scalar written without quotes and without a tag: the reader types it (true, 12, 1.5).
    [[nodiscard]] bool plain() const;
    [[nodiscard]] YamlMark mark() const;
    /// The items of a sequence (none for any other node).
    [[nodiscard]] std::span<const YamlNode> items() const;
    /// The key/value pairs of a mapping in written order, repeated keys kept (none for any other
    /// node).
    [[nodiscard]] std::span<const YamlEntry> entries() const;

  private:
    const YamlData* data_ = nullptr;
};

struct YamlEntry {
    YamlNode first;   ///< the key
    YamlNode second;  ///< the value
};

struct YamlData {
    YamlType type = YamlType::kUndefined;
    bool plain = false;
    YamlMark mark;
    std::string scalar;
    std::vector<YamlNode> items;
    std::vector<YamlEntry> entries;
};

/// Why a text is not one YAML document the reader can walk, and where: malformed YAML
/// (libyaml's words), an alias naming no anchor, collections nested too deep (limits.131), a
/// second document (limits.128).
struct YamlProblem {
    YamlMark mark;
    std::string what;
};

/// The first document of a text, parsed whole. An alias shares the node of its anchor (so a
/// walk meets it at each use, limits.124).
class YamlTree {
  public:
    /// Throws YamlProblem. `max_nesting`: the deepest nesting of collections (flow or block,
    /// counted together); the first one past it is refused where it opens, before any deeper
    /// event is read.
    static YamlTree parse(std::string_view text, std::size_t max_nesting);

    /// The document's root; undefined for a text with no document (empty, or comments only).
    [[nodiscard]] YamlNode root() const { return root_; }

  private:
    // A deque behind a pointer: handles stay valid while nodes are added and when the tree moves.
    std::unique_ptr<std::deque<YamlData>> nodes_ = std::make_unique<std::deque<YamlData>>();
    YamlNode root_;
};

}  // namespace nucleo::config_internal
