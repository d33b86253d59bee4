// The child of the kill -9 test (crash_test.cpp): creates a conversation in a store plugin, then
// appends a message and saves it, forever, printing each committed version on its own line to
// stdout (flushed) the moment the save returns. The parent kills it with SIGKILL mid-save.
//
//   store_saver PLUGIN CONFIG_JSON PRINCIPAL CONVERSATION_ID MESSAGE_BYTES
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "nucleo/plugins.hpp"
#include "nucleo/store.hpp"

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: store_saver PLUGIN CONFIG PRINCIPAL ID MESSAGE_BYTES\n");
        return 2;
    }
    try {
        nucleo::PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
        nucleo::PersistentStore store(loader.load(argv[1]).make_store(argv[2]));
        const std::string principal = argv[3];
        const std::size_t bytes = std::strtoul(argv[5], nullptr, 10);
        nucleo::ConversationParts saved;
        saved.conversation_id = argv[4];
        auto add = [&](nucleo::ConversationParts& parts) {
            const std::size_t n = parts.messages.size() + 1;
            nucleo::Message m = nucleo::Message::outgoing_text("message " + std::to_string(n) +
                                                               " " + std::string(bytes, 'x'));
            m.id = "m" + std::to_string(n);
            parts.messages.push_back(std::move(m));
        };
        add(saved);
        std::string version = store.create(principal, saved, "crash").version;
        std::printf("%s\n", version.c_str());
        std::fflush(stdout);
        for (;;) {
            nucleo::ConversationParts now = saved;
            add(now);
            version = store
                          .update(principal, saved.conversation_id, version,
                                  nucleo::SnapshotDelta::between(saved, now))
                          .version;
            saved = std::move(now);
            std::printf("%s\n", version.c_str());
            std::fflush(stdout);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "store_saver: %s\n", e.what());
        return 1;
    }
}
