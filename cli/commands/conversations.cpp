// `nucleo conversations --user U VERB ...` (persistence.3, persistence.10,
// persistence.30): a user's stored conversations in the configured persistent store
// (config stores.persistent, `--config FILE`).
//
//   list                         one line per conversation: id, title, created, updated (tabs)
//   show ID                      the conversation's facts: title, dates, versions, messages
//   history ID                   one line per version: version, saved_at (tabs), oldest first
//   transcript ID [--version V]  the conversation (or one version) as text for a reader
//   export ID                    the stored conversation document, byte for byte (one line)
//   import FILE                  creates a conversation from a document ("-": stdin); the title
//                                is its first human utterance's first line
//   delete ID                    deletes the conversation and its history
//
// Every id is the acting user's: another user's conversation is "not found" (exit 2).
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "args.hpp"
#include "commands.hpp"
#include "config_loading.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/store.hpp"
#include "nucleo/transcript.hpp"

namespace nucleo::cli {

namespace {

PersistentStore open_persistent_store(const Args& args) {
    const Config config = load_config(args);
    const auto& choice = config.persistent_store();
    if (!choice) {
        throw Error(ErrorKind::kConfig, config_path(args).string() +
                                            ": stores.persistent is not configured (choose a "
                                            "store plugin, e.g. sqlite)");
    }
    PluginLoader loader(config.plugin_paths());
    return PersistentStore(loader.load(choice->plugin).make_store(choice->options_json));
}

// The one positional argument `verb` takes.
std::string operand(const Args& args, const char* verb, const char* what) {
    if (args.positionals().size() != 2) {
        throw UsageError{std::string("usage: nucleo conversations --user U ") + verb + " " + what};
    }
    return args.positionals()[1];
}

std::string read_input(const std::string& path) {
    if (path == "-") {
        return std::string(std::istreambuf_iterator<char>(std::cin), {});
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::kNotFound, path + ": cannot open the file");
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::optional<ConversationSummary> find_summary(const PersistentStore& store,
                                                const std::string& user, const std::string& id) {
    std::optional<std::string> cursor;
    do {
        ConversationPage page = store.list(user, 1000, cursor);
        for (auto& c : page.conversations) {
            if (c.conversation_id == id) return std::move(c);
        }
        cursor = std::move(page.next_cursor);
    } while (cursor);
    return std::nullopt;
}

// ownership.21: the title derives from the first user message (app-authored turns skipped); its
// first line, as ConversationService titles a first save.
std::string title_of(const ConversationParts& parts) {
    const auto utterance = ConversationContext::from_parts(parts).first_user_utterance();
    return utterance ? utterance->substr(0, utterance->find('\n')) : std::string();
}

}  // namespace

int run_conversations(const Argv& argv) {
    Args args(argv, {});
    args.allow_only({"user", kConfigOption, "version"});
    const std::string user = args.require("user");
    if (user.empty()) throw UsageError{"--user: empty user id"};
    if (args.positionals().empty()) {
        throw UsageError{
            "usage: nucleo conversations --user U list | show ID | history ID | transcript ID "
            "[--version V] | export ID | import FILE | delete ID"};
    }
    const std::string& verb = args.positionals()[0];
    if (args.has("version") && verb != "transcript") {
        throw UsageError{"--version applies to transcript only"};
    }
    if (verb == "list") {
        if (args.positionals().size() != 1) throw UsageError{"usage: nucleo conversations list"};
        const PersistentStore store = open_persistent_store(args);
        std::optional<std::string> cursor;
        do {
            const ConversationPage page = store.list(user, 1000, cursor);
            for (const auto& c : page.conversations) {
                std::cout << c.conversation_id << '\t' << c.title << '\t' << c.created_at << '\t'
                          << c.updated_at << '\n';
            }
            cursor = page.next_cursor;
        } while (cursor);
    } else if (verb == "show") {
        const std::string id = operand(args, "show", "ID");
        const PersistentStore store = open_persistent_store(args);
        const ConversationParts parts = store.load(user, id);  // kNotFound when absent
        const auto summary = find_summary(store, user, id);
        const auto versions = store.versions(user, id);
        std::cout << "conversation: " << id << '\n'
                  << "title: " << (summary ? summary->title : std::string()) << '\n'
                  << "created: " << (summary ? summary->created_at : std::string()) << '\n'
                  << "updated: " << (summary ? summary->updated_at : std::string()) << '\n'
                  << "versions: " << versions.size() << '\n'
                  << "messages: " << parts.messages.size() << '\n';
    } else if (verb == "history") {
        const std::string id = operand(args, "history", "ID");
        for (const auto& v : open_persistent_store(args).versions(user, id)) {
            std::cout << v.version << '\t' << v.saved_at << '\n';
        }
    } else if (verb == "transcript") {
        const std::string id = operand(args, "transcript", "ID [--version V]");
        const PersistentStore store = open_persistent_store(args);
        const auto version = args.get("version");
        ConversationParts parts =
            version ? store.load_version(user, id, *version) : store.load(user, id);
        std::cout << Transcript::render(ConversationContext::from_parts(std::move(parts)));
    } else if (verb == "export") {
        const std::string id = operand(args, "export", "ID");
        std::cout << open_persistent_store(args).load_document(user, id) << '\n';
    } else if (verb == "import") {
        const std::string file = operand(args, "import", "FILE");
        const std::string json = read_input(file);
        ConversationParts parts;
        try {
            parts = read_conversation_parts(json);
        } catch (const Error& e) {
            throw Error(e.kind(), file + ": " + e.what());
        }
        if (parts.conversation_id.empty()) {
            throw Error(ErrorKind::kInvalidArgument, file + ": conversation_id is empty");
        }
        parts.user_id = user;
        const SaveResult saved = open_persistent_store(args).create(user, parts, title_of(parts));
        std::cout << "imported " << parts.conversation_id << " version " << saved.version << '\n';
    } else if (verb == "delete") {
        const std::string id = operand(args, "delete", "ID");
        open_persistent_store(args).remove(user, id);
        std::cout << "deleted " << id << '\n';
    } else {
        throw UsageError{"unknown verb '" + verb +
                         "' (list, show, history, transcript, export, import, delete)"};
    }
    return kExitOk;
}

}  // namespace nucleo::cli
