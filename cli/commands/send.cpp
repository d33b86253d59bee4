// `nucleo send --in CONV.json --model ID`: performs one model call over a stored conversation
// and prints the updated conversation document; the call's usage, cache reads and cost go to
// stderr as one line (stdout stays a valid document for the next command).
#include <iomanip>
#include <iostream>

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "args.hpp"
#include "commands.hpp"
#include "commands/conversation_input.hpp"
#include "commands/provider_output.hpp"
#include "config_loading.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"

namespace nucleo::cli {

ProviderClient provider_client_for(const Config& config, const ModelSpec& model) {
    const PluginLoader loader(config.plugin_paths());
    return ProviderClient::from_config(config, loader, model.provider);
}

void print_wire_request(std::ostream& out, const HttpRequest& request) {
    rapidjson::StringBuffer buf;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
    w.SetIndent(' ', 2);
    w.StartObject();
    w.Key("method");
    w.String(request.method.c_str());
    w.Key("url");
    w.String(request.url.c_str());
    w.Key("headers");
    w.StartObject();
    for (const auto& [k, v] : request.headers) {
        w.Key(k.c_str());
        w.String(v.c_str());
    }
    w.EndObject();
    w.Key("body");
    rapidjson::Document body;
    body.Parse(request.body.data(), request.body.size());
    if (body.HasParseError()) {
        w.String(request.body.c_str(), static_cast<rapidjson::SizeType>(request.body.size()));
    } else {
        body.Accept(w);
    }
    w.EndObject();
    out << buf.GetString() << "\n";
}

namespace {

int run_send(const Args& args) {
    ConversationContext conversation = load_conversation(args.require("in"));
    const Config config = load_config(args);
    const ModelSpec& model = config.catalog().find(args.require("model"));
    ProviderClient client = provider_client_for(config, model);
    const LLMResponse r = client.call(conversation, model);
    std::cout << write_conversation_document(conversation) << "\n";
    std::cerr << "model " << model.id << " (" << r.model << "): stop " << r.stop_reason << ", input "
              << r.usage.input_tokens << ", output " << r.usage.output_tokens << ", cache write "
              << r.usage.cache_write_tokens << ", cache read " << r.usage.cache_read_tokens
              << ", hit rate " << std::fixed << std::setprecision(2) << r.cache_hit_rate() << ", cost $"
              << std::setprecision(6) << r.cost;
    // answers.105: the numbers above are the sum over every billed call; an escalation's
    // truncated call is named apart.
    if (r.calls.size() > 1) {
        std::cerr << " over " << count_of(static_cast<std::int64_t>(r.calls.size()), "billed call") << " (";
        for (std::size_t i = 0; i < r.calls.size(); ++i) {
            const CallAttempt& a = r.calls[i];
            std::cerr << (i == 0 ? "" : "; ") << to_string(a.status)
                      << " at " << a.max_tokens << ": output " << a.usage.output_tokens << ", $"
                      << std::setprecision(6) << a.cost;
        }
        std::cerr << ")";
    }
    if (!r.thread.empty()) std::cerr << ", thread " << r.thread;  // wire.211
    if (!r.appended) std::cerr << "; the answer was empty and was not appended";
    std::cerr << "\n";
    return kExitOk;
}

}  // namespace

const CommandSpec& send_command() {
    static const CommandSpec spec{
        "send",
        "call the model and print the updated conversation",
        {{"--in", "FILE", "a conversation document v1; - reads stdin"},
         {"--model", "ID", "a catalog id (nucleo models)"},
         config_option()},
        "",
        "",
        "Calls the model's provider with the conversation and prints the conversation document "
        "with the answer appended (stdout is a JSON document already). Usage, cache reads and "
        "cost are printed on stderr.",
        run_send};
    return spec;
}

}  // namespace nucleo::cli
