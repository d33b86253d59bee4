// Shared by the store tests: real stores from the build's plugins, the services' URLs, unique
// names so tests never see each other's rows, and conversation builders.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nucleo/conversation.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace store_test {

/// The env file's URLs (the CTest fixture wrote it; a direct run starts the services itself).
std::string postgres_url();
std::string redis_url();
/// The services folder (its pg/ holds the PostgreSQL data folder).
std::string services_dir();

/// A store plugin instance: "memory", "sqlite" (a fresh file under the test's temp folder unless
/// `sqlite_path` is given), "postgres", "redis".
nucleo::StoreInstance make_store(const std::string& kind, const std::string& sqlite_path = {});
/// A store plugin instance of `kind` with the configuration `config_json`.
nucleo::StoreInstance make_store_with(const std::string& kind, const std::string& config_json);
/// The variables an env file of scripts/services exports.
std::map<std::string, std::string> read_env_file(const std::filesystem::path& file);
/// A fresh sqlite file path.
std::string temp_sqlite_path();

/// A name no other test (or earlier run against the same server) used: prefix + pid + counter +
/// random.
std::string unique(std::string_view prefix);

/// A conversation `id` of `messages` alternating outgoing/incoming text messages of about
/// `bytes` each, ids m1..mN.
nucleo::ConversationParts conversation(const std::string& id, std::size_t messages,
                                       std::size_t bytes = 40);
/// The next text message for `parts` (id m<N+1>), alternating direction.
nucleo::Message next_message(const nucleo::ConversationParts& parts, std::size_t bytes = 40);

/// The kind of the nucleo::Error `fn` throws, or nullopt when it throws nothing.
std::optional<nucleo::ErrorKind> error_kind(const std::function<void()>& fn,
                                            std::string* message = nullptr);

}  // namespace store_test
