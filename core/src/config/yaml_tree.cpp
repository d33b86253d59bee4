// A config file's YAML, parsed by libyaml into the nodes yaml_reader.hpp walks (yaml_tree.hpp
// says why libyaml and one pass).
#include "config/yaml_tree.hpp"

#include <yaml.h>

#include <algorithm>
#include <map>
#include <string>

namespace nucleo::config_internal {

namespace {

const std::string kNoText;

YamlMark mark_of(const yaml_mark_t& m) {
    return YamlMark{static_cast<int>(m.line), static_cast<int>(m.column), m.index};
}

/// libyaml's parser and its current event, released however the parse ends.
class EventReader {
  public:
    explicit EventReader(std::string_view text) : text_(text) {
        yaml_parser_initialize(&parser_);
        yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                     text.size());
    }
    EventReader(const EventReader&) = delete;
    EventReader& operator=(const EventReader&) = delete;
    ~EventReader() {
        if (has_event_) yaml_event_delete(&event_);
        yaml_parser_delete(&parser_);
    }

    /// The next event; throws YamlProblem with libyaml's words where the text is malformed.
    const yaml_event_t& next() {
        if (has_event_) yaml_event_delete(&event_);
        has_event_ = false;
        if (yaml_parser_parse(&parser_, &event_) == 0) throw problem();
        has_event_ = true;
        return event_;
    }

  private:
    [[nodiscard]] YamlProblem problem() const {
        std::string what = "malformed YAML: ";
        if (parser_.context != nullptr) what += std::string(parser_.context) + ": ";
        what += parser_.problem != nullptr ? parser_.problem : "unreadable text";
        if (parser_.error == YAML_READER_ERROR) {
            // A reader error (bad encoding, a control character) has a byte offset, not a mark.
            YamlMark at{0, 0, std::min(parser_.problem_offset, text_.size())};
            for (std::size_t i = 0; i < at.pos; ++i) {
                at.column = text_[i] == '\n' ? 0 : at.column + 1;
                at.line += text_[i] == '\n' ? 1 : 0;
            }
            return YamlProblem{at, what};
        }
        return YamlProblem{mark_of(parser_.problem_mark), what};
    }

    std::string_view text_;
    yaml_parser_t parser_{};
    yaml_event_t event_{};
    bool has_event_ = false;
};

std::string text_of(const unsigned char* s) {
    return s == nullptr ? std::string() : reinterpret_cast<const char*>(s);
}

bool reads_as_null(const yaml_event_t& e) {
    if (e.data.scalar.plain_implicit == 0) return false;  // quoted or tagged: a string
    const std::string_view v(reinterpret_cast<const char*>(e.data.scalar.value),
                             e.data.scalar.length);
    return v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL";
}

}  // namespace

YamlType YamlNode::type() const {
    return data_ == nullptr ? YamlType::kUndefined : data_->type;
}
const std::string& YamlNode::scalar() const {
    return data_ == nullptr ? kNoText : data_->scalar;
}
bool YamlNode::plain() const {
    return data_ != nullptr && data_->plain;
}
YamlMark YamlNode::mark() const {
    return data_ == nullptr ? YamlMark{} : data_->mark;
}
std::span<const YamlNode> YamlNode::items() const {
    return data_ == nullptr ? std::span<const YamlNode>() : std::span<const YamlNode>(data_->items);
}
std::span<const YamlEntry> YamlNode::entries() const {
    return data_ == nullptr ? std::span<const YamlEntry>()
                            : std::span<const YamlEntry>(data_->entries);
}

YamlTree YamlTree::parse(std::string_view text, std::size_t max_nesting) {
    YamlTree tree;
    EventReader events(text);
    std::map<std::string, const YamlData*> anchors;
    // The collections open from the root to the current one; a mapping's pending key waits in
    // `key` until its value arrives.
    struct Open {
        YamlData* data;
        YamlNode key;
        bool has_key = false;
    };
    std::vector<Open> open;
    std::size_t documents = 0;
    bool done = false;

    const auto add = [&](YamlNode node) {
        if (open.empty()) {
            tree.root_ = node;
            return;
        }
        Open& parent = open.back();
        if (parent.data->type == YamlType::kSequence) {
            parent.data->items.push_back(node);
        } else if (!parent.has_key) {
            parent.key = node;
            parent.has_key = true;
        } else {
            parent.data->entries.push_back(YamlEntry{parent.key, node});
            parent.has_key = false;
        }
    };
    const auto make = [&](YamlType type, const yaml_event_t& e,
                          const unsigned char* anchor) -> YamlData& {
        YamlData& data = tree.nodes_->emplace_back();
        data.type = type;
        data.mark = mark_of(e.start_mark);
        if (anchor != nullptr) anchors[text_of(anchor)] = &data;
        return data;
    };

    while (!done) {
        const yaml_event_t& e = events.next();
        switch (e.type) {
            case YAML_STREAM_END_EVENT:
                done = true;
                break;
            case YAML_DOCUMENT_START_EVENT:
                // limits.128: one document per file; the second is refused where its content
                // starts (its `---` when it has none).
                if (documents++ > 0) {
                    YamlMark at = mark_of(e.start_mark);
                    const yaml_event_t& content = events.next();
                    const bool empty = content.type == YAML_SCALAR_EVENT &&
                                       content.data.scalar.length == 0 &&
                                       content.data.scalar.plain_implicit != 0;
                    if (!empty) at = mark_of(content.start_mark);
                    throw YamlProblem{at,
                                      "a second YAML document (a config file holds 1 document)"};
                }
                break;
            case YAML_SCALAR_EVENT: {
                const bool null = reads_as_null(e);
                YamlData& data =
                    make(null ? YamlType::kNull : YamlType::kScalar, e, e.data.scalar.anchor);
                data.plain = e.data.scalar.plain_implicit != 0;
                if (!null)
                    data.scalar.assign(reinterpret_cast<const char*>(e.data.scalar.value),
                                       e.data.scalar.length);
                add(YamlNode(&data));
                break;
            }
            case YAML_ALIAS_EVENT: {
                const auto it = anchors.find(text_of(e.data.alias.anchor));
                if (it == anchors.end())
                    throw YamlProblem{mark_of(e.start_mark),
                                      "malformed YAML: the alias *" + text_of(e.data.alias.anchor) +
                                          " names no anchor written before it"};
                // A collection holding an alias of itself would make the tree a cycle.
                for (const Open& o : open)
                    if (o.data == it->second)
                        throw YamlProblem{mark_of(e.start_mark),
                                          "malformed YAML: the alias *" +
                                              text_of(e.data.alias.anchor) +
                                              " is used inside the collection it names"};
                add(YamlNode(it->second));
                break;
            }
            case YAML_SEQUENCE_START_EVENT:
            case YAML_MAPPING_START_EVENT: {
                // limits.131: refused where the collection one level too deep opens.
                if (open.size() + 1 > max_nesting)
                    throw YamlProblem{mark_of(e.start_mark),
                                      "collections nested deeper than " +
                                          std::to_string(max_nesting) +
                                          " levels (the YAML nesting limit)"};
                const bool sequence = e.type == YAML_SEQUENCE_START_EVENT;
                YamlData& data =
                    make(sequence ? YamlType::kSequence : YamlType::kMap, e,
                         sequence ? e.data.sequence_start.anchor : e.data.mapping_start.anchor);
                add(YamlNode(&data));
                open.push_back(Open{&data, YamlNode(), false});
                break;
            }
            case YAML_SEQUENCE_END_EVENT:
            case YAML_MAPPING_END_EVENT:
                open.pop_back();
                break;
            default:  // stream start, document end, no event
                break;
        }
    }
    return tree;
}

}  // namespace nucleo::config_internal
