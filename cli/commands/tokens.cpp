// `nucleo tokens --model ID (--text S | --in FILE)`: the token count by the model's counter
// (tokens.10-14). A conversation document (JSON with "schema_version") prints get_total_tokens and
// its breakdown (objective, tools, messages, artifacts, then one line per message); any other
// file is counted as text. "-" reads stdin.
#include <fstream>
#include <iostream>
#include <iterator>

#include "args.hpp"
#include "commands.hpp"
#include "config_loading.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo::cli {

namespace {

constexpr const char* kUsage =
    "usage: nucleo tokens --model ID (--text S | --in FILE) [--config FILE]\n"
    "  --model ID   a catalog id (nucleo models): its token_counter counts\n"
    "  --text S     count the text S\n"
    "  --in FILE    a conversation document v1 (total and per-part breakdown) or any text file;\n"
    "               - reads stdin";

std::string read_input(const std::string& path) {
    if (path == "-") {
        return {std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::kNotFound, path + ": cannot open the file");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A conversation document is a JSON object naming its schema_version; nothing else is read as one.
bool looks_like_document(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && text[first] == '{' &&
           text.find("\"schema_version\"") != std::string_view::npos;
}

}  // namespace

int run_tokens(const Argv& argv) {
    Args args(argv, {"help"});
    if (args.has("help")) {
        std::cout << kUsage << "\n";
        return kExitOk;
    }
    args.allow_only({"model", "text", "in", "help", kConfigOption});
    if (args.has("text") == args.has("in")) {
        std::cerr << kUsage << "\n";
        throw UsageError{"give exactly one of --text and --in"};
    }
    const Config config = load_config(args);
    const ModelSpec& model = config.catalog().find(args.require("model"));
    const TokenCounter& counter = TokenCounter::for_model(model);
    if (args.has("text")) {
        std::cout << counter.count_text(*args.get("text")) << "\n";
        return kExitOk;
    }
    const std::string path = args.require("in");
    const std::string text = read_input(path);
    if (!looks_like_document(text)) {
        std::cout << counter.count_text(text) << "\n";
        return kExitOk;
    }
    ConversationContext conversation;
    try {
        conversation = read_conversation_document(text);
    } catch (const Error& e) {
        throw Error(e.kind(), (path == "-" ? std::string("stdin") : path) + ": " + e.what());
    }
    const TokenBreakdown b = counter.breakdown(conversation);
    std::cout << "counter    " << model.token_counter << "\n"
              << "objective  " << b.objective << "\n"
              << "tools      " << b.tools << "\n"
              << "messages   " << b.messages << "\n"
              << "artifacts  " << b.artifacts << "\n"
              << "total      " << b.total() << "\n";
    for (std::size_t i = 0; i < b.per_message.size(); ++i) {
        std::cout << "  " << conversation.messages()[i].id << "  " << b.per_message[i] << "\n";
    }
    return kExitOk;
}

}  // namespace nucleo::cli
