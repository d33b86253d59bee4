// Logging of the runtime. Records go to stderr by default (stdout belongs to the host and to the
// `nucleo` command's results); a host may install its own sink. Plugins log through the host's
// `nucleo.host.log/1` extension, which ends here too.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace nucleo::log {

enum class Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };

/// Records below `level` are dropped. Default kWarn (config.3), or NUCLEO_LOG_LEVEL (trace..off;
/// a name the logger does not know leaves kWarn, and level_variable_problem() refuses it).
void set_level(Level level);
Level level();

/// Parses a level name: trace, debug, info, warn (warning), error (err), critical (as error)
/// or off; nullopt for anything else.
std::optional<Level> parse_level(std::string_view name);

/// obs.108: "" when NUCLEO_LOG_LEVEL is unset or names a level, else the one-line refusal
/// "NUCLEO_LOG_LEVEL: unknown level 'verbose' (expected trace, debug, info, warn, error,
/// critical or off)". Config::load throws it as Error kConfig, so every host that loads
/// nucleo.yaml refuses the typo as the `nucleo` command does.
std::string level_variable_problem();

/// A sink receives every record that passes the level: its level, the logger's name ("nucleo",
/// "plugin:<name>", ...) and the formatted message. An empty function restores stderr.
using Sink = std::function<void(Level, std::string_view logger, std::string_view message)>;
void set_sink(Sink sink);

/// Writes one record (used by the host log extension and by code outside libnucleo).
void write(Level level, std::string_view logger, std::string_view message);

/// How records are written to stderr when no sink is installed (obs.106): kText, one line
/// `[level] message`; kJson, one JSON object per line with "level", "logger", "message" and the
/// record's attributes. Default kText, or NUCLEO_LOG_FORMAT (text | json).
enum class Format { kText, kJson };
void set_format(Format format);
Format format();

/// Parses "text" or "json"; nullopt for anything else.
std::optional<Format> parse_format(std::string_view text);

/// Writes one record with structured attributes (`attributes_json`: one JSON object). A host
/// sink receives `message` alone; the stderr writer in kJson puts the attributes beside it.
void write_with_attributes(Level level, std::string_view logger, std::string_view message,
                           std::string_view attributes_json);

}  // namespace nucleo::log
