// A ConversationService over a SQLite file, for the agent tests that save and restore.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "nucleo/service.hpp"
#include "support.hpp"

namespace agent_test {

/// A service over the SQLite file at `path`, as a (re)started process makes it.
inline std::unique_ptr<nucleo::ConversationService> sqlite_service(const std::string& path) {
    nucleo::ConversationServiceOptions so;
    so.persistent.emplace(store_test::make_store("sqlite", path));
    so.cleanup_thread = false;
    return std::make_unique<nucleo::ConversationService>(std::move(so));
}

}  // namespace agent_test
