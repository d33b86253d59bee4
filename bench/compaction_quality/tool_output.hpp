// Text that looks like what a coding agent's tools return: source files, test and compiler logs
// with many noise lines, grep hits, directory listings, diffs and JSON. Every function draws only
// from the Rng it is given, so the same starting number makes the same text on every run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nucleo::quality {

/// A small deterministic generator (splitmix64): the same numbers on every platform, unlike the
/// standard distributions.
class Rng {
  public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();
    /// A whole number in [lo, hi].
    int between(int lo, int hi);
    /// True with probability `p`.
    bool chance(double p);
    /// One element of `items`.
    template <typename T>
    const T& pick(const std::vector<T>& items) {
        return items[static_cast<std::size_t>(between(0, static_cast<int>(items.size()) - 1))];
    }

  private:
    std::uint64_t state_;
};

/// Word lists the names are made of (shared with the planted facts, so a fact looks like noise).
const std::vector<std::string>& module_words();
const std::vector<std::string>& noun_words();

/// "src/net/frame_parser.cc": a path of the fake repository.
std::string random_path(Rng& rng);
/// "FrameParserState" or "frame_parser_state".
std::string random_camel(Rng& rng, int words);
std::string random_snake(Rng& rng, int words);

/// The kinds of tool the generated agent calls.
enum class ToolKind { kReadFile, kRunTests, kGrep, kBuild, kGitDiff, kListDir, kJson };

struct ToolCall {
    ToolKind kind;
    std::string name;        ///< the tool's name, as declared
    std::string input_json;  ///< its arguments
};

/// A call of a random kind, with arguments that fit it.
ToolCall random_call(Rng& rng);

/// The lines a call of `kind` returns: about `lines` of them, noise only (facts are planted by the
/// caller between them).
std::vector<std::string> tool_output(Rng& rng, ToolKind kind, int lines);

/// A few sentences of an assistant's working notes, or of a user's follow-up, with no fact in them.
std::string assistant_note(Rng& rng);
std::string user_follow_up(Rng& rng);

}  // namespace nucleo::quality
