// Token counting: byte-pair tokenizers with exact tiktoken parity, and named approximations.
//
// tokens.10: messages are counted by the model's TokenCounter from their raw
// content; the catalog names each model's counter (ModelSpec::token_counter). This header gives
// the counters by that name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nucleo {

/// A named token counter (tokens.1-5: the model's token counter).
///
/// Known names:
///  - "o200k_base", "cl100k_base": byte-pair encoders giving exactly tiktoken's ids, the regex
///    pre-split included. Special-token text ("<|endoftext|>") is encoded as ordinary text (as
///    tiktoken's encode_ordinary): counting untrusted content never yields control tokens.
///    Invalid UTF-8 (which tiktoken, taking a str, never sees): each invalid byte is its own
///    piece and becomes its byte token; the valid runs around it are split as separate texts.
///    So decode(encode(b)) == b for any bytes, and on valid UTF-8 the ids are tiktoken's.
///  - "anthropic_approx": Anthropic publishes no tokenizer; its count is
///    ceil(cl100k_base count × 1.2), an over-estimate on purpose (a context window is safer
///    over-counted: compaction starts a little early instead of the API refusing the call).
///    It counts only: encode()/decode() throw NotImplementedException. A provider plugin with
///    exact counting (count-tokens endpoints) replaces it per model.
///
/// Rank files: "<name>.tiktoken" (tiktoken's "BASE64 RANK" lines) and optionally
/// "<name>.special.tsv", looked for in $NUCLEO_TOKENIZER_DIR when set, else in the source tree's
/// .cache/tokenizer (made by scripts/fetch-tokenizer-ranks), else in the installed
/// <datadir>/nucleo/tokenizer. Loaded once per process on first use.
///
/// Thread-safe: get() may race, and one Tokenizer is used by any number of threads at once.
class Tokenizer {
public:
    /// The counter of that name, loaded on first use and kept for the process's lifetime.
    /// Throws Error kNotFound naming the name and the known ones, or naming the missing rank
    /// file and the command that fetches it.
    static const Tokenizer& get(std::string_view name);
    /// The names get() accepts.
    static std::vector<std::string> names();

    [[nodiscard]] const std::string& name() const noexcept;
    /// True for the tiktoken-parity encoders, false for approximations (count only).
    [[nodiscard]] bool exact() const noexcept;

    /// Token ids of `text`.
    [[nodiscard]] std::vector<std::uint32_t> encode(std::string_view text) const;
    /// Number of tokens of `text` (encode(text).size() for exact counters, without the vector).
    [[nodiscard]] std::size_t count(std::string_view text) const;
    /// The bytes of `ids` concatenated; special ids give their text. Throws Error
    /// kInvalidArgument naming an id the encoding does not have.
    [[nodiscard]] std::string decode(std::span<const std::uint32_t> ids) const;
    /// The pre-split pieces of `text` (the regex step before BPE), for tests and diagnostics.
    [[nodiscard]] std::vector<std::string_view> split(std::string_view text) const;

    class Impl;
    explicit Tokenizer(std::unique_ptr<Impl> impl);
    ~Tokenizer();
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace nucleo
