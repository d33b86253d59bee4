// `nucleo conversations [--user U] VERB ...` (persistence.3, persistence.10,
// persistence.30): a user's stored conversations in the configured persistent store
// (config stores.persistent, `--config FILE`). The user is --user, else $USER, else "local",
// as for `nucleo chat`. --json prints list, show, history, import and delete as one JSON
// document each (docs/cli-json.md); transcript is text and export a document already.
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
// Every id is the acting user's: another user's conversation is "not found" (exit 2). An ID may
// be a unique prefix of the id (cli.106): an ambiguous one is an error listing the candidates.
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "args.hpp"
#include "commands.hpp"
#include "commands/conversation_ids.hpp"
#include "config_loading.hpp"
#include "nucleo/configured.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/store.hpp"
#include "nucleo/transcript.hpp"

namespace nucleo::cli {

namespace {

ConfiguredStores open_stores_of(const Args& args) {
    // persistence.106: the session store is opened too (a bad choice fails at start), and
    // delete drops the conversation's cached entry.
    return open_stores(load_config(args), " (choose a store plugin, e.g. sqlite)");
}

PersistentStore open_persistent_store(const Args& args) {
    return std::move(*open_stores_of(args).persistent);
}

// The one positional argument `verb` takes.
std::string operand(const Args& args, const char* verb, const char* what) {
    if (args.positionals().size() != 2) {
        throw UsageError{std::string("usage: nucleo conversations [--user U] ") + verb + " " + what};
    }
    return args.positionals()[1];
}

/// The conversation id `verb`'s operand names: the id or a unique prefix of it (cli.106).
std::string conversation_operand(const Args& args, const ConfiguredStores& stores,
                                 const std::string& user, const char* verb, const char* what) {
    return resolve_conversation_id(*stores.persistent, user, operand(args, verb, what),
                                   "conversation");
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
    for (ConversationSummary& c : all_conversations(store, user)) {
        if (c.conversation_id == id) return std::move(c);
    }
    return std::nullopt;
}

// ownership.21: the title derives from the first user message (app-authored turns skipped); its
// first line, as ConversationService titles a first save.
std::string title_of(const ConversationParts& parts) {
    const auto utterance = ConversationContext::from_parts(parts).first_user_utterance();
    return utterance ? utterance->substr(0, utterance->find('\n')) : std::string();
}

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void put(JsonWriter& w, const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

/// One compact JSON document on stdout, written by `body` inside {"schema_version": 1, ...}.
template <typename Body>
void print_json(Body&& body) {
    rapidjson::StringBuffer buf;
    JsonWriter w(buf);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    body(w);
    w.EndObject();
    std::cout << buf.GetString() << "\n";
}

int run_conversations(const Args& args) {
    const std::string user = args.get("user").value_or(default_user());
    if (user.empty()) throw UsageError{"--user: empty user id"};
    const bool json = args.has("json");
    if (args.positionals().empty()) {
        throw UsageError{
            "usage: nucleo conversations [--user U] list | show ID | history ID | transcript ID "
            "[--version V] | export ID | import FILE | delete ID"};
    }
    const std::string& verb = args.positionals()[0];
    if (args.has("version") && verb != "transcript") {
        throw UsageError{"--version applies to transcript only"};
    }
    if (verb == "list") {
        if (args.positionals().size() != 1) throw UsageError{"usage: nucleo conversations list"};
        const PersistentStore store = open_persistent_store(args);
        const std::vector<ConversationSummary> all = all_conversations(store, user);
        if (json) {
            print_json([&](JsonWriter& w) {
                put(w, "user", user);
                w.Key("conversations");
                w.StartArray();
                for (const auto& c : all) {
                    w.StartObject();
                    put(w, "id", c.conversation_id);
                    put(w, "title", c.title);
                    put(w, "created_at", c.created_at);
                    put(w, "updated_at", c.updated_at);
                    w.EndObject();
                }
                w.EndArray();
            });
        } else {
            for (const auto& c : all) {
                std::cout << c.conversation_id << '\t' << c.title << '\t' << c.created_at << '\t'
                          << c.updated_at << '\n';
            }
        }
    } else if (verb == "show") {
        const ConfiguredStores stores = open_stores_of(args);
        const std::string id = conversation_operand(args, stores, user, "show", "ID");
        const PersistentStore& store = *stores.persistent;
        const ConversationParts parts = store.load(user, id);  // kNotFound when absent
        const auto summary = find_summary(store, user, id);
        const auto versions = store.versions(user, id);
        if (json) {
            print_json([&](JsonWriter& w) {
                put(w, "id", id);
                put(w, "title", summary ? summary->title : std::string());
                put(w, "created_at", summary ? summary->created_at : std::string());
                put(w, "updated_at", summary ? summary->updated_at : std::string());
                w.Key("versions");
                w.Uint64(versions.size());
                w.Key("messages");
                w.Uint64(parts.messages.size());
            });
            return kExitOk;
        }
        std::cout << "conversation: " << id << '\n'
                  << "title: " << (summary ? summary->title : std::string()) << '\n'
                  << "created: " << (summary ? summary->created_at : std::string()) << '\n'
                  << "updated: " << (summary ? summary->updated_at : std::string()) << '\n'
                  << "versions: " << versions.size() << '\n'
                  << "messages: " << parts.messages.size() << '\n';
    } else if (verb == "history") {
        const ConfiguredStores stores = open_stores_of(args);
        const std::string id = conversation_operand(args, stores, user, "history", "ID");
        const auto versions = stores.persistent->versions(user, id);
        if (json) {
            print_json([&](JsonWriter& w) {
                put(w, "id", id);
                w.Key("versions");
                w.StartArray();
                for (const auto& v : versions) {
                    w.StartObject();
                    put(w, "version", v.version);
                    put(w, "saved_at", v.saved_at);
                    w.EndObject();
                }
                w.EndArray();
            });
            return kExitOk;
        }
        for (const auto& v : versions) std::cout << v.version << '\t' << v.saved_at << '\n';
    } else if (verb == "transcript") {
        const ConfiguredStores stores = open_stores_of(args);
        const std::string id =
            conversation_operand(args, stores, user, "transcript", "ID [--version V]");
        const PersistentStore& store = *stores.persistent;
        const auto version = args.get("version");
        ConversationParts parts =
            version ? store.load_version(user, id, *version) : store.load(user, id);
        std::cout << Transcript::render(ConversationContext::from_parts(std::move(parts)));
    } else if (verb == "export") {
        const ConfiguredStores stores = open_stores_of(args);
        const std::string id = conversation_operand(args, stores, user, "export", "ID");
        std::cout << stores.persistent->load_document(user, id) << '\n';
    } else if (verb == "import") {
        const std::string file = operand(args, "import", "FILE");
        const std::string document = read_input(file);
        ConversationParts parts;
        try {
            parts = read_conversation_parts(document);
        } catch (const Error& e) {
            throw Error(e.kind(), file + ": " + e.what());
        }
        if (parts.conversation_id.empty()) {
            throw Error(ErrorKind::kInvalidArgument, file + ": conversation_id is empty");
        }
        parts.user_id = user;
        const SaveResult saved = open_persistent_store(args).create(user, parts, title_of(parts));
        if (json) {
            print_json([&](JsonWriter& w) {
                put(w, "id", parts.conversation_id);
                put(w, "version", saved.version);
            });
        } else {
            std::cout << "imported " << parts.conversation_id << " version " << saved.version << '\n';
        }
    } else if (verb == "delete") {
        ConfiguredStores stores = open_stores_of(args);
        const std::string id = conversation_operand(args, stores, user, "delete", "ID");
        stores.persistent->remove(user, id);
        if (stores.session) stores.session->invalidate(user, id);
        if (json) {
            print_json([&](JsonWriter& w) {
                put(w, "id", id);
                w.Key("deleted");
                w.Bool(true);
            });
        } else {
            std::cout << "deleted " << id << '\n';
        }
    } else {
        // cli.101: the misspelled verb, and what it was likely meant as.
        throw UsageError{unknown_word("verb", verb,
                                      {"list", "show", "history", "transcript", "export", "import",
                                       "delete"}) +
                         "; verbs: list, show, history, transcript, export, import, delete"};
    }
    return kExitOk;
}

}  // namespace

const CommandSpec& conversations_command() {
    static const CommandSpec spec{
        "conversations",
        "a user's stored conversations: list, show, history, transcript, export, import, delete",
        {{"--user", "U", "the user the conversations belong to (default: $USER, else local)"},
         {"--version", "V", "transcript: that stored version instead of the latest"},
         json_option(),
         config_option()},
        "ARGS",
        "list | show ID | history ID | transcript ID | export ID | import FILE | delete ID",
        "Every id is the acting user's: another user's conversation is not found (exit 2).\n"
        "An ID may be a unique prefix of the id, or of its part after conv-.\n"
        "export prints the stored conversation document; import FILE (- reads stdin) creates one.",
        run_conversations};
    return spec;
}

}  // namespace nucleo::cli
