// Internals of Tokenizer::get, exposed for tests: where rank files are looked for, and an
// uncached load from given folders.
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "nucleo/tokenizer.hpp"

namespace nucleo::tokens {

/// $NUCLEO_TOKENIZER_DIR alone when set, else the source tree's .cache/tokenizer and the
/// installed <datadir>/nucleo/tokenizer, in that order.
std::vector<std::filesystem::path> search_dirs();

/// Loads the exact tokenizer `name` from the first of `dirs` holding "<name>.tiktoken", without
/// the process-wide cache of Tokenizer::get (approximations come from get()).
std::unique_ptr<Tokenizer> load_tokenizer(std::string_view name,
                                          const std::vector<std::filesystem::path>& dirs);

}  // namespace nucleo::tokens
