// The second host of the two-process test (service_hosts_test.cpp): a ConversationService over
// PostgreSQL (persistent) and Redis (session + lease) that adopts a conversation, waits to be
// handed it, appends one message, saves and releases. Prints one line per step (flushed):
//   obtaining / obtained <messages> / saved <version>
//
//   service_host POSTGRES_URL REDIS_URL USER CONVERSATION_ID
#include <cstdio>
#include <exception>
#include <string>

#include "nucleo/plugins.hpp"
#include "nucleo/service.hpp"

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: service_host POSTGRES_URL REDIS_URL USER CONVERSATION_ID\n");
        return 2;
    }
    try {
        nucleo::PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
        const std::string redis_config = std::string(R"({"url":")") + argv[2] + "\"}";
        nucleo::ConversationServiceOptions options;
        options.persistent.emplace(
            loader.load("postgres").make_store(std::string(R"({"url":")") + argv[1] + "\"}"));
        auto redis = loader.load("redis").make_store(redis_config);
        options.session.emplace(redis);
        options.lease.emplace(redis);
        options.host_id = "child-host";
        options.cleanup_thread = false;
        nucleo::ConversationService service(std::move(options));

        auto thinker = std::make_shared<nucleo::Thinker>();
        thinker->name = "ChildThinker";
        thinker->job_id = "child-job";
        thinker->user_id = argv[3];
        thinker->workflow_id = "child-workflow";
        thinker->set_conversation_id(argv[4]);
        std::printf("obtaining\n");
        std::fflush(stdout);
        auto context = service.obtain_conversation(argv[4], thinker, {}, true).get();
        std::printf("obtained %zu\n", context->messages().size());
        std::fflush(stdout);
        context->add_message(nucleo::Message::outgoing_text("from the child host"));
        const auto saved = service.save_conversation(*context, *thinker);
        std::printf("saved %s\n", saved ? saved->version.c_str() : "nothing");
        std::fflush(stdout);
        service.release(*thinker);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "service_host: %s\n", e.what());
        return 1;
    }
}
