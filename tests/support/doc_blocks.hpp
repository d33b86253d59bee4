// The fenced code blocks of a Markdown document, for the tests that build a doc's snippets from
// fixtures and check that the doc shows them as they are.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo::test_support {

/// The blocks of `markdown` fenced with ``` whose info string is one of `languages` (```cpp,
/// ```c), each its lines, '\n' after every one, in the document's order.
inline std::vector<std::string> fenced_blocks(const std::string& markdown,
                                              std::initializer_list<std::string_view> languages) {
    std::vector<std::string> blocks;
    std::istringstream lines(markdown);
    std::string line;
    bool fenced = false;  // inside any fence
    bool kept = false;    // inside a fence of one of `languages`
    std::string block;
    while (std::getline(lines, line)) {
        const std::size_t indent = line.find_first_not_of(' ');
        const bool fence = indent != std::string::npos && line.compare(indent, 3, "```") == 0;
        if (fence && !fenced) {
            const std::string info = line.substr(indent + 3);
            fenced = true;
            kept = std::find(languages.begin(), languages.end(), info) != languages.end();
            block.clear();
        } else if (fence) {
            if (kept) blocks.push_back(block);
            fenced = kept = false;
        } else if (kept) {
            block += line + "\n";
        }
    }
    return blocks;
}

}  // namespace nucleo::test_support
