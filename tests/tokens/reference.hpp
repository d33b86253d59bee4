// The parity test's reference: the corpus and the token ids the npm packages give for it,
// produced by tests/tokens/peers/reference.mjs (run here when missing or older than the scripts).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nucleo::testing {

/// One package's ids per document; nullopt where the package did not encode that document.
using IdTable = std::vector<std::optional<std::vector<std::uint32_t>>>;

struct Reference {
    std::vector<std::string> docs;
    std::string versions;  ///< "tiktoken 1.0.22\njs-tiktoken 1.0.21\n"
    IdTable ids(const std::string& encoding, const std::string& package) const;
    std::string dir;
};

/// Makes (if needed, under a file lock) and reads the reference in the build dir. Throws
/// std::runtime_error with the reason and the fix when node or the npm packages are missing.
const Reference& reference();

/// The same for the code points assigned after Unicode 15.0, each in a few contexts
/// (tests/tokens/peers/code_points.mjs); only the "tiktoken" ids. Needs scripts/fetch-unicode-data.
const Reference& code_points_reference();

}  // namespace nucleo::testing
