// `nucleo tokens --model ID (--text S | --in FILE)`: the token count by the model's counter
// (tokens.10-14). A conversation document (JSON with "schema_version") prints get_total_tokens and
// its breakdown (objective, tools, messages, artifacts, then one line per message); any other
// file is counted as text. "-" reads stdin.
#include <fstream>
#include <iostream>
#include <iterator>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "args.hpp"
#include "commands.hpp"
#include "config_loading.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/tokens.hpp"

namespace nucleo::cli {

namespace {

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

/// --json: {"schema_version": 1, "model", "counter", "total"} and, for a conversation document,
/// "parts" {objective, tools, messages, artifacts} and "messages" [{id, tokens}].
void print_json(const ModelSpec& model, std::int64_t total, const TokenBreakdown* b,
                const ConversationContext* conversation) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    w.Key("model");
    w.String(model.id);
    w.Key("counter");
    w.String(model.token_counter);
    w.Key("total");
    w.Int64(total);
    if (b != nullptr && conversation != nullptr) {
        w.Key("parts");
        w.StartObject();
        w.Key("objective");
        w.Int64(b->objective);
        w.Key("tools");
        w.Int64(b->tools);
        w.Key("messages");
        w.Int64(b->messages);
        w.Key("artifacts");
        w.Int64(b->artifacts);
        w.EndObject();
        w.Key("messages");
        w.StartArray();
        for (std::size_t i = 0; i < b->per_message.size(); ++i) {
            w.StartObject();
            w.Key("id");
            w.String(conversation->messages()[i].id);
            w.Key("tokens");
            w.Int64(b->per_message[i]);
            w.EndObject();
        }
        w.EndArray();
    }
    w.EndObject();
    std::cout << buf.GetString() << "\n";
}

int run_tokens(const Args& args) {
    if (args.has("text") == args.has("in")) throw UsageError{"give exactly one of --text and --in"};
    const Config config = load_config(args);
    const ModelSpec& model = config.catalog().find(args.require("model"));
    const TokenCounter& counter = TokenCounter::for_model(model);
    const bool json = args.has("json");
    const std::string text = args.has("text") ? *args.get("text") : read_input(*args.get("in"));
    if (args.has("text") || !looks_like_document(text)) {
        const std::int64_t n = counter.count_text(text);
        if (json) {
            print_json(model, n, nullptr, nullptr);
        } else {
            std::cout << n << "\n";
        }
        return kExitOk;
    }
    const std::string path = *args.get("in");
    ConversationContext conversation;
    try {
        conversation = read_conversation_document(text);
    } catch (const Error& e) {
        throw Error(e.kind(), (path == "-" ? std::string("stdin") : path) + ": " + e.what());
    }
    const TokenBreakdown b = counter.breakdown(conversation);
    if (json) {
        print_json(model, b.total(), &b, &conversation);
        return kExitOk;
    }
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

}  // namespace

const CommandSpec& tokens_command() {
    static const CommandSpec spec{
        "tokens",
        "count the tokens of a text or a conversation",
        {{"--model", "ID", "a catalog id (nucleo models): its token_counter counts"},
         {"--text", "S", "count the text S"},
         {"--in", "FILE",
          "a conversation document v1 (total and per-part breakdown) or any text file; - reads "
          "stdin"},
         json_option(),
         config_option()},
        "",
        "",
        "Give exactly one of --text and --in.",
        run_tokens};
    return spec;
}

}  // namespace nucleo::cli
