// `nucleo render --in CONV.json --model ID --prepared`: what the core decides for one call over
// a stored conversation (channel.14). Prints the PreparedConversation as JSON: system
// blocks, cache_system, the cache plan, tool definitions, USER/ASSISTANT turns.
#include <fstream>
#include <iostream>
#include <iterator>

#include "args.hpp"
#include "commands.hpp"
#include "commands/conversation_input.hpp"
#include "config_loading.hpp"
#include "nucleo/config.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/thinking.hpp"
#include "nucleo/provider_client.hpp"
#include "render/prepared_json.hpp"
#include "commands/provider_output.hpp"

namespace nucleo::cli {

namespace {

std::string read_all(std::istream& in) {
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

ConversationContext load_conversation(const std::string& path) {
    std::string text;
    if (path == "-") {
        text = read_all(std::cin);
    } else {
        std::ifstream in(path, std::ios::binary);
        if (!in)
            throw Error(ErrorKind::kNotFound, path + ": cannot open the conversation document");
        text = read_all(in);
    }
    try {
        return read_conversation_document(text);
    } catch (const Error& e) {
        throw Error(e.kind(), (path == "-" ? std::string("stdin") : path) + ": " + e.what());
    }
}

namespace {

int run_render(const Args& args) {
    ConversationContext conversation = load_conversation(args.require("in"));
    const Config config = load_config(args);
    const ModelSpec& model = config.catalog().find(args.require("model"));
    if (!args.has("prepared")) {
        ProviderClient client = provider_client_for(config, model);
        print_wire_request(std::cout, client.build_request(conversation, model, {}, /*redact_secrets=*/true));
        return kExitOk;
    }
    // The one predicate both the schema strip and the request use (tools.21).
    const bool thinking = conversation.depth() && thinking_active(model, *conversation.depth());
    const PreparedConversation prepared =
        conversation.prepare_messages_for_llm(FixedContentFormatter::for_model(model), thinking);
    std::cout << internal::prepared_to_json(prepared, /*pretty=*/true) << "\n";
    return kExitOk;
}

}  // namespace

const CommandSpec& render_command() {
    static const CommandSpec spec{
        "render",
        "print the wire request, or --prepared the prepared call",
        {{"--in", "FILE", "a conversation document v1 (docs/conversation-document.md); - reads stdin"},
         {"--model", "ID", "a catalog id (nucleo models): its provider instance, dialect, caching"},
         {"--prepared", "", "print the PreparedConversation the core hands a provider, as JSON"},
         config_option()},
        "",
        "",
        "Without --prepared, render prints the exact wire request the provider plugin encodes: "
        "method, URL, headers (secrets as ***) and body, as one JSON document.",
        run_render};
    return spec;
}

}  // namespace nucleo::cli
