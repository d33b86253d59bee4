// obs.106: the log's format for every `nucleo` command, `--log-format text|json` anywhere on the
// command line, else NUCLEO_LOG_FORMAT.
#pragma once

#include <string>
#include <vector>

namespace nucleo::cli {

/// Removes `--log-format VALUE` / `--log-format=VALUE` from `args` and applies it (else
/// NUCLEO_LOG_FORMAT's value). Throws UsageError naming the option or the variable and the
/// values it takes when the format is not `text` or `json`.
void take_log_format(std::vector<std::string>& args);

}  // namespace nucleo::cli
