// `nucleo ask [PROMPT] [--model ID] [--system TEXT] [--emulator] [--json] [--config FILE]`: one
// turn, no conversation kept. The prompt is the arguments joined by spaces, else all of stdin.
//
// Decisions:
//  - The conversation declares nothing: its depth and output come from the config's `defaults:`
//    (IMMEDIATE and MEDIUM unless set, budget.102), so a config that opts out (`none`) makes
//    ask fail as budget.2 says.
//  - The model is --model, else the config's default model (the first catalog entry whose
//    provider has a key, config_loading.hpp).
//  - Without --json the answer streams to stdout as it arrives (control characters other than
//    newline and tab shown as escapes when stdout is a terminal, so an answer cannot move the
//    cursor), ends with a newline, and one usage line goes to stderr. With --json nothing
//    streams: one document {schema_version, model, wire_model, text, stop_reason, usage, cost}
//    (docs/cli-json.md).
//  - --emulator starts nucleo-emulator for the run and aims every provider of the config at it
//    with stand-in keys, as `nucleo demo` does (cli.102); a note on stderr names it.
//  - A truncated answer retried at a larger budget (budget.7) is said on stderr; what streamed
//    of it stays on the screen, the retry's answer follows.
//  - The log level is warn unless NUCLEO_LOG_LEVEL says otherwise, as in chat: the usage line is
//    the call's summary for a person; the call records (obs.101) are there at
//    NUCLEO_LOG_LEVEL=info, for a script that wants them.
#include <unistd.h>

#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "args.hpp"
#include "commands.hpp"
#include "commands/demo_support.hpp"
#include "commands/provider_output.hpp"
#include "common/cost.hpp"
#include "config_loading.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo::cli {
namespace {

/// `text` safe for a terminal: control characters but newline and tab as \xNN, ESC included.
std::string neutralized(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 0xf];
        } else {
            out += c;
        }
    }
    return out;
}

std::string prompt_of(const Args& args) {
    std::string prompt;
    for (const std::string& word : args.positionals()) prompt += (prompt.empty() ? "" : " ") + word;
    if (prompt.empty()) prompt.assign(std::istreambuf_iterator<char>(std::cin), {});
    if (prompt.find_first_not_of(" \t\r\n") == std::string::npos)
        throw UsageError{"no prompt: give it as arguments or on stdin"};
    return prompt;
}

std::string answer_text(const Message& message) {
    std::string text;
    for (const ContentBlock& b : message.blocks) {
        if (const auto* t = std::get_if<TextBlock>(&b.value)) text += t->text;
    }
    return text;
}

void print_json(const ModelSpec& model, const LLMResponse& r) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    w.Key("model");
    w.String(model.id);
    w.Key("wire_model");
    w.String(r.model);
    const std::string text = answer_text(r.message);
    w.Key("text");
    w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
    w.Key("stop_reason");
    w.String(r.stop_reason);
    w.Key("usage");
    w.StartObject();
    w.Key("input_tokens");
    w.Int64(r.usage.input_tokens);
    w.Key("output_tokens");
    w.Int64(r.usage.output_tokens);
    w.Key("cache_write_tokens");
    w.Int64(r.usage.cache_write_tokens);
    w.Key("cache_read_tokens");
    w.Int64(r.usage.cache_read_tokens);
    w.EndObject();
    w.Key("cost");
    w.Double(internal::rounded_usd(r.cost));  // obs.109
    w.Key("calls");
    w.Uint64(r.calls.size());
    w.EndObject();
    std::cout << buf.GetString() << "\n";
}

int run_ask(const Args& args) {
    if (std::getenv("NUCLEO_LOG_LEVEL") == nullptr) log::set_level(log::Level::kWarn);
    const std::string prompt = prompt_of(args);
    // cli.102: --emulator answers from a nucleo-emulator of this run's own, every provider aimed
    // at it (stopped, with its folder, when ask returns).
    std::optional<demo::OwnEmulator> emulator;
    const Config config = args.has("emulator")
                              ? demo::with_own_emulator(load_config(args), emulator, "ask")
                              : load_config(args);
    const ModelSpec& model =
        args.get("model") ? config.catalog().find(*args.get("model")) : default_model(config);
    ProviderClient client = provider_client_for(config, model);

    ConversationContext conversation;
    if (auto system = args.get("system")) conversation.put_main_objective("system", *system);
    conversation.add_message(Message::outgoing_text(prompt));

    const bool json = args.has("json");
    const bool terminal = ::isatty(STDOUT_FILENO) == 1;
    bool line_open = false;  // the streamed text so far does not end with a newline
    StreamCallbacks stream;
    stream.on_text_delta = [&](std::size_t, std::string_view text) {
        if (text.empty()) return;
        std::cout << (terminal ? neutralized(text) : std::string(text)) << std::flush;
        line_open = text.back() != '\n';
    };
    stream.on_discard = [&](std::string_view reason) {
        if (line_open) std::cout << "\n" << std::flush;
        line_open = false;
        std::cerr << "nucleo ask: " << reason << "\n";
    };
    CallOptions options;
    if (!json) options.stream = &stream;
    const LLMResponse r = client.call(conversation, model, options);
    if (json) {
        print_json(model, r);
        return kExitOk;
    }
    // A dialect that does not stream delivers the answer at the end.
    if (!client.capabilities().streaming) {
        const std::string text = answer_text(r.message);
        std::cout << (terminal ? neutralized(text) : text);
        line_open = !text.empty() && text.back() != '\n';
    }
    if (line_open) std::cout << "\n";
    std::cout << std::flush;
    std::cerr << "model " << model.id << " (" << r.model << "): stop " << r.stop_reason
              << ", input " << r.usage.input_tokens << ", output " << r.usage.output_tokens
              << ", cache read " << r.usage.cache_read_tokens << ", cost $" << std::fixed
              << std::setprecision(6) << r.cost << "\n";
    return kExitOk;
}

}  // namespace

const CommandSpec& ask_command() {
    static const CommandSpec spec{
        "ask",
        "one question to a model, the answer streamed (the prompt as arguments or on stdin)",
        {{"--model", "ID", "a catalog id (default: the first model whose provider has a key)"},
         {"--system", "TEXT", "standing instructions for the model"},
         {"--emulator", "",
          "answer from nucleo-emulator, started for this run on a free loopback port (no key, "
          "nothing billed)"},
         json_option(),
         config_option()},
        "PROMPT",
        "the question; without it, stdin is read to its end",
        "The thinking depth and answer length are the config's `defaults:` (IMMEDIATE and MEDIUM "
        "unless "
        "set). Usage and cost go to stderr.",
        run_ask};
    return spec;
}

}  // namespace nucleo::cli
