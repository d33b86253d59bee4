// The files `nucleo ask -a/--attach FILE` puts before the question (cli.109).
#pragma once

#include <string>
#include <vector>

#include "nucleo/catalog.hpp"
#include "nucleo/content.hpp"

namespace nucleo::cli {

/// cli.109: each of `files`, in order, as the block the core carries it in: a png, jpeg, gif or
/// webp image as an ImageBlock, a PDF or a plain-text file as a FileBlock (base64 data, its
/// name the file's), its type told by its first bytes. A file that cannot be read, is empty, is
/// of no such type, or is of a type `model`'s record does not accept (its `accepts:`) is a
/// UsageError naming the file and the reason, so nothing is called or saved.
[[nodiscard]] std::vector<ContentBlock> attachment_blocks(const std::vector<std::string>& files,
                                                          const ModelSpec& model);

}  // namespace nucleo::cli
