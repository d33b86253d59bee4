// host-agent: a C++ host application that embeds libnucleo and runs an agent with two typed tools.
// What a host writes:
//   1. a struct per tool input, described once with nucleo::Describe (its JSON Schema, and the
//      reading of the model's arguments, come from that description);
//   2. a ProviderClient for the provider (from a nucleo.yaml, or built from a base URL);
//   3. an Agent with its tools, run for one turn on a ConversationContext, with callbacks that
//      show each tool call and stream the answer.
//
// usage: host-agent (--config FILE --model ID | --base-url URL [--dialect anthropic|openai]
//                    [--api-key KEY] [--wire-model NAME]) [--header NAME:VALUE]... [QUESTION]
// Prints every tool call with its result, then `answer: ...` and one line of usage. Exit status:
// 0 with a final answer, 1 when the turn failed or ended without one, 2 on bad arguments.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "nucleo/agent.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"

namespace host {

enum class Operation { kAdd, kSubtract, kMultiply, kDivide };

/// The calculator's input: two numbers and what to do with them.
struct CalculateInput {
    double a = 0;
    double b = 0;
    Operation op = Operation::kAdd;
};

/// The notebook's input: one line to keep.
struct SaveNoteInput {
    std::string text;
};

}  // namespace host

template <>
struct nucleo::Describe<host::Operation> {
    static auto constants() {
        return std::array{schema::constant(host::Operation::kAdd, "add"),
                          schema::constant(host::Operation::kSubtract, "subtract"),
                          schema::constant(host::Operation::kMultiply, "multiply"),
                          schema::constant(host::Operation::kDivide, "divide")};
    }
};

template <>
struct nucleo::Describe<host::CalculateInput> {
    static constexpr std::string_view name = "CalculateInput";
    static auto fields() {
        using schema::field;
        return std::tuple(
            field("a", &host::CalculateInput::a).required().description("Left operand"),
            field("b", &host::CalculateInput::b).required().description("Right operand"),
            field("op", &host::CalculateInput::op).required().description("The operation"));
    }
};

template <>
struct nucleo::Describe<host::SaveNoteInput> {
    static constexpr std::string_view name = "SaveNoteInput";
    static auto fields() {
        return std::tuple(schema::field("text", &host::SaveNoteInput::text)
                              .required()
                              .description("The note to keep, one line"));
    }
};

namespace {

constexpr const char* kUsage =
    "usage: host-agent (--config FILE --model ID | --base-url URL [--dialect anthropic|openai]\n"
    "                   [--api-key KEY] [--wire-model NAME]) [--header NAME:VALUE]... [QUESTION]\n";

struct Options {
    std::string config, model, base_url, dialect = "anthropic", api_key, wire_model;
    nucleo::HttpHeaders headers;
    std::string question = "What is 6 times 7? Keep the result in a note.";
};

/// Parses argv; returns false (after printing why) on bad arguments.
bool parse(int argc, char** argv, Options& o) {
    const std::map<std::string, std::string*> valued = {
        {"--config", &o.config},   {"--model", &o.model},     {"--base-url", &o.base_url},
        {"--dialect", &o.dialect}, {"--api-key", &o.api_key}, {"--wire-model", &o.wire_model}};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--header" && i + 1 < argc) {
            const std::string h = argv[++i];
            const auto colon = h.find(':');
            if (colon == std::string::npos || colon == 0) {
                std::cerr << "host-agent: --header wants NAME:VALUE, got '" << h << "'\n";
                return false;
            }
            o.headers.emplace_back(h.substr(0, colon), h.substr(colon + 1));
        } else if (auto it = valued.find(a); it != valued.end() && i + 1 < argc) {
            *it->second = argv[++i];
        } else if (!a.starts_with("--")) {
            o.question = a;
        } else {
            std::cerr << "host-agent: unknown option or missing value: " << a << "\n" << kUsage;
            return false;
        }
    }
    if (o.config.empty() == o.base_url.empty() || (!o.config.empty() && o.model.empty())) {
        std::cerr << kUsage;
        return false;
    }
    return true;
}

/// A catalog entry for a provider reached by base URL only: limits and prices are the host's to
/// state (here: small budgets; prices of a mid-size model, so the cost line means something).
nucleo::ModelSpec inline_model(const Options& o) {
    nucleo::ModelSpec m;
    m.id = "host-agent-model";
    m.provider = o.dialect;
    m.wire_model = !o.wire_model.empty()   ? o.wire_model
                   : o.dialect == "openai" ? "gpt-6-luna"
                                           : "claude-sonnet-5-5";
    m.max_context_tokens = 200000;
    m.max_output_tokens = 4096;
    m.output_budget = {{nucleo::OutputSize::kShort, 1024},
                       {nucleo::OutputSize::kMedium, 2048},
                       {nucleo::OutputSize::kLong, 4096},
                       {nucleo::OutputSize::kExtended, 4096}};
    m.supports_caching = o.dialect == "anthropic";
    m.native_tools = true;
    m.prices = {.input = 3.0, .output = 15.0, .cache_write = 3.75, .cache_read = 0.30};
    return m;
}

double calculate(const host::CalculateInput& in) {
    switch (in.op) {
        case host::Operation::kAdd:
            return in.a + in.b;
        case host::Operation::kSubtract:
            return in.a - in.b;
        case host::Operation::kMultiply:
            return in.a * in.b;
        case host::Operation::kDivide:
            break;
    }
    // A tool that throws becomes an is_error result the model reads; the host never crashes.
    if (in.b == 0) throw std::invalid_argument("division by zero");
    return in.a / in.b;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) return 2;
    try {
        std::optional<nucleo::Config> config;
        nucleo::ModelSpec model;
        std::optional<nucleo::ProviderClient> client;
        if (!o.config.empty()) {
            config = nucleo::Config::load(o.config);
            model = config->catalog().find(o.model);
            client.emplace(nucleo::ProviderClient::from_config(
                *config, nucleo::PluginLoader(config->plugin_paths()), model.provider));
        } else {
            nucleo::ProviderConfig pc;
            pc.name = o.dialect;
            pc.plugin = o.dialect;
            pc.base_url = o.base_url;
            const char* env_key =
                std::getenv(o.dialect == "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY");
            pc.credentials.api_key = !o.api_key.empty()   ? o.api_key
                                     : env_key != nullptr ? env_key
                                                          : "";
            model = inline_model(o);
            client.emplace(pc, nucleo::PluginLoader().load(pc.plugin).make_provider());
        }

        nucleo::AgentOptions options;
        options.objective =
            "You are a careful assistant. Use the calculator for arithmetic and "
            "keep results the user wants remembered with save_note.";
        options.extra_headers = o.headers;
        nucleo::Agent agent(*client, model, options);

        std::vector<std::string> notes;
        agent.add_tool<host::CalculateInput>(
            "calculate", "Adds, subtracts, multiplies or divides two numbers.",
            [](const host::CalculateInput& in) {
                char out[64];
                std::snprintf(out, sizeof out, "%g", calculate(in));
                return std::string(out);
            });
        agent.add_tool<host::SaveNoteInput>(
            "save_note", "Keeps a one-line note for later.",
            [&notes](const host::SaveNoteInput& in) {
                notes.push_back(in.text);
                return "saved note " + std::to_string(notes.size()) + ": " + in.text;
            });

        nucleo::TurnCallbacks callbacks;
        callbacks.on_tool_call_finished = [](const nucleo::ToolCallEvent& call,
                                             const nucleo::ToolOutput& out) {
            std::cout << "tool " << call.name << " " << call.input_json << " -> "
                      << (out.is_error ? "error: " : "") << out.text << "\n";
        };

        nucleo::ConversationContext conversation("host-agent-conversation", "host-user");
        conversation.set_output(nucleo::OutputSize::kShort);
        conversation.set_depth(nucleo::Depth::kImmediate);
        const nucleo::TurnReport report = agent.run_turn(conversation, o.question, callbacks);
        if (report.end != nucleo::TurnEnd::kFinalAnswer) {
            std::cerr << "host-agent: the turn ended without an answer ("
                      << nucleo::to_string(report.end) << ")\n";
            return 1;
        }
        std::cout << "answer: " << report.answer << "\n";
        std::cout << "rounds " << report.rounds << ", tool calls " << report.tool_calls
                  << ", notes " << notes.size() << ", input tokens "
                  << report.usage.total_input_tokens() << ", output tokens "
                  << report.usage.output_tokens << ", cost $" << report.cost << "\n";
        return 0;
    } catch (const nucleo::Error& e) {
        std::cerr << "host-agent: " << e.what() << "\n";
        return 1;
    }
}
