// saved-agent: a host program whose conversations outlive it. Each run is one turn of an agent
// on a conversation kept in the stores the operator's nucleo.yaml chooses; the first run mints
// the conversation, a later run resumes it by id, in another process or on another host.
//
// What a host writes (nucleo/configured.hpp):
//   1. the config from the usual places (Config::default_path: NUCLEO_CONFIG, the user's, the
//      install's), its default model (Config::default_model: NUCLEO_MODEL, defaults.model, ...);
//   2. the configured stores and summarizer, opened as `nucleo chat` opens them;
//   3. a ConversationService over those stores and an Agent whose thinker mints a conversation
//      id, or adopts the one it is given;
//   4. Agent::run_turn through the service: the user's message and the answer are saved with the
//      turn, and a failed turn leaves the store as it was.
//
// usage: saved-agent [--config FILE] [--model ID] [--user NAME] [--conversation ID] MESSAGE
// Prints `conversation: ID`, `answer: TEXT` and `messages: N` (the conversation's messages as
// stored after the turn). Exit status: 0 with a final answer, 1 when the turn failed or ended
// without one, 2 on bad arguments or a bad config.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "nucleo/agent.hpp"
#include "nucleo/compaction.hpp"
#include "nucleo/config.hpp"
#include "nucleo/configured.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/service.hpp"

namespace {

struct Options {
    std::string config, model, user = "local", conversation, message;
};

bool parse(int argc, char** argv, Options& o) {
    const std::map<std::string, std::string*> valued = {{"--config", &o.config},
                                                        {"--model", &o.model},
                                                        {"--user", &o.user},
                                                        {"--conversation", &o.conversation}};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (auto it = valued.find(a); it != valued.end() && i + 1 < argc) {
            *it->second = argv[++i];
        } else if (!a.empty() && a[0] != '-' && o.message.empty()) {
            o.message = a;
        } else {
            std::cerr << "saved-agent: unexpected argument '" << a << "'\n";
            return false;
        }
    }
    if (o.message.empty()) std::cerr << "saved-agent: no message\n";
    return !o.message.empty();
}

int run(const Options& o) {
    const nucleo::Config config = nucleo::Config::load(
        o.config.empty() ? nucleo::Config::default_path() : std::filesystem::path(o.config));
    const nucleo::ModelSpec& model =
        o.model.empty() ? config.default_model() : config.catalog().find(o.model);
    const nucleo::PluginLoader loader(config.plugin_paths());

    nucleo::ConfiguredStores stores = nucleo::open_configured_stores(config, loader);
    if (!stores.persistent) {
        std::cerr << "saved-agent: " << config.path().string()
                  << " chooses no stores.persistent, so nothing would outlive this run\n";
        return 2;
    }
    const nucleo::PersistentStore store = *stores.persistent;  // a handle: copies share the store
    nucleo::ConversationServiceOptions service_options;
    service_options.persistent = std::move(stores.persistent);
    service_options.session = std::move(stores.session);
    nucleo::ConversationService service(std::move(service_options));

    nucleo::ProviderClient client =
        nucleo::ProviderClient::from_config(config, loader, model.provider);
    nucleo::AgentOptions agent_options;
    agent_options.objective = "You are a helpful assistant. Answer concisely.";
    // Compaction with the configured summarizer when the conversation outgrows its window.
    agent_options.window = std::make_shared<nucleo::ContextWindowManager>(
        nucleo::make_configured_summarizer(config, loader));
    nucleo::Agent agent(client, model, std::move(agent_options));

    const std::shared_ptr<nucleo::Thinker> thinker =
        agent.make_thinker(o.user, nucleo::OutputDeclaration{nucleo::OutputSize::kMedium});
    if (o.conversation.empty()) {
        thinker->mint_conversation_id();
    } else {
        thinker->set_conversation_id(o.conversation);  // must exist in the store
    }
    const nucleo::TurnReport report = agent.run_turn(service, thinker, o.message);
    std::cout << "conversation: " << thinker->conversation_id() << "\n";
    std::cout << "answer: " << report.answer << "\n";
    // What the store now holds: a later run, anywhere, resumes from it.
    const nucleo::ConversationParts stored = store.load(o.user, thinker->conversation_id());
    std::cout << "messages: " << stored.messages.size() << "\n";
    return report.end == nucleo::TurnEnd::kFinalAnswer ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) return 2;
    try {
        return run(o);
    } catch (const nucleo::Error& e) {
        std::cerr << "saved-agent: " << e.what() << "\n";
        const auto kind = e.kind();
        return kind == nucleo::ErrorKind::kConfig || kind == nucleo::ErrorKind::kNotFound ||
                       kind == nucleo::ErrorKind::kPlugin
                   ? 2
                   : 1;
    }
}
