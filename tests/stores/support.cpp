// Store test support (support.hpp).
#include "support.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

namespace store_test {

std::map<std::string, std::string> read_env_file(const std::filesystem::path& file) {
    std::map<std::string, std::string> out;
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("export ", 0) == 0) line = line.substr(7);
        const auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        std::string value = line.substr(eq + 1);
        if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
            value = value.substr(1, value.size() - 2);
        }
        out[line.substr(0, eq)] = value;
    }
    return out;
}

namespace {

const std::map<std::string, std::string>& services_env() {
    static std::once_flag once;
    static std::map<std::string, std::string> env;
    std::call_once(once, [] {
        const std::filesystem::path file = std::filesystem::path(services_dir()) / "env";
        if (!std::filesystem::exists(file)) {
            // Run outside CTest: start the services for this process and stop them at exit.
            const std::string start = std::string("\"") + NUCLEO_SOURCE_DIR +
                                      "/scripts/services\" start \"" + services_dir() +
                                      "\" >/dev/null";
            if (std::system(start.c_str()) != 0) {
                throw std::runtime_error("cannot start the services: " + start);
            }
            std::atexit([] {
                const std::string stop = std::string("\"") + NUCLEO_SOURCE_DIR +
                                         "/scripts/services\" stop \"" + services_dir() + "\"";
                (void)std::system(stop.c_str());
            });
        }
        env = read_env_file(file);
    });
    return env;
}

std::string env_value(const char* name) {
    const auto& env = services_env();
    auto it = env.find(name);
    if (it == env.end() || it->second.empty()) {
        throw std::runtime_error(std::string(name) + " missing from the services env file");
    }
    return it->second;
}

nucleo::Plugin plugin(const std::string& name) {
    static nucleo::PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
    return loader.load(name);
}

}  // namespace

std::string services_dir() {
    return NUCLEO_STORES_SERVICES_DIR;
}
std::string postgres_url() {
    return env_value("NUCLEO_TEST_POSTGRES_URL");
}
std::string redis_url() {
    return env_value("NUCLEO_TEST_REDIS_URL");
}

std::string unique(std::string_view prefix) {
    static std::atomic<int> counter{0};
    static const unsigned long salt = std::random_device{}();
    return std::string(prefix) + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(++counter) + "-" + std::to_string(salt % 100000);
}

std::string temp_sqlite_path() {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "nucleo-store-tests";
    std::filesystem::create_directories(dir);
    return (dir / (unique("conv") + ".db")).string();
}

nucleo::StoreInstance make_store(const std::string& kind, const std::string& sqlite_path) {
    if (kind == "memory") return plugin("memory").make_store("{}");
    if (kind == "sqlite") {
        const std::string path = sqlite_path.empty() ? temp_sqlite_path() : sqlite_path;
        return plugin("sqlite").make_store(R"({"path":")" + path + R"("})");
    }
    if (kind == "postgres") {
        return plugin("postgres").make_store(R"({"url":")" + postgres_url() + R"("})");
    }
    if (kind == "redis") return plugin("redis").make_store(R"({"url":")" + redis_url() + R"("})");
    throw std::invalid_argument("no such store kind: " + kind);
}

nucleo::StoreInstance make_store_with(const std::string& kind, const std::string& config_json) {
    return plugin(kind).make_store(config_json);
}

nucleo::Message next_message(const nucleo::ConversationParts& parts, std::size_t bytes) {
    const std::size_t n = parts.messages.size() + 1;
    std::string text = "message " + std::to_string(n) + " ";
    while (text.size() < bytes) text += "lorem ipsum ";
    nucleo::Message m =
        n % 2 == 1 ? nucleo::Message::outgoing_text(text) : nucleo::Message::incoming_text(text);
    m.id = "m" + std::to_string(n);
    return m;
}

nucleo::ConversationParts conversation(const std::string& id, std::size_t messages,
                                       std::size_t bytes) {
    nucleo::ConversationParts parts;
    parts.conversation_id = id;
    parts.user_id = "someone";
    parts.objective.push_back({"task", nucleo::TextBlock{"Answer questions about orders."}});
    for (std::size_t i = 0; i < messages; ++i) parts.messages.push_back(next_message(parts, bytes));
    return parts;
}

std::optional<nucleo::ErrorKind> error_kind(const std::function<void()>& fn, std::string* message) {
    try {
        fn();
    } catch (const nucleo::Error& e) {
        if (message != nullptr) *message = e.what();
        return e.kind();
    }
    return std::nullopt;
}

}  // namespace store_test
