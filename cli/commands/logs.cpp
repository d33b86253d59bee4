// `nucleo logs [-n N] [--user U] [--json]` (cli.108): the user's latest conversations in the
// configured persistent store, newest first: what `nucleo ask` saved, and chat's sessions too.
//
// Decisions:
//  - Newest is the latest updated_at (the last answer saved; ISO 8601 UTC, so its text orders
//    it), a tie going to the later created: the store lists in creation order only, so every
//    page is read and sorted here, as chat -c picks its latest (chat.109).
//  - A line is the id, when it was last updated, the model that last answered it (its
//    prior_spec_id, persistence.22; "-" when none) and its title, the first line of its first
//    question (ownership.21). Tokens and cost are not shown: the store keeps the conversation,
//    not the usage of the calls that made it (`nucleo ask` prints them when it answers).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "args.hpp"
#include "commands.hpp"
#include "commands/conversation_ids.hpp"
#include "config_loading.hpp"
#include "nucleo/store.hpp"

namespace nucleo::cli {

namespace {

/// How many conversations logs lists without -n.
constexpr std::int64_t kDefaultCount = 10;

struct Logged {
    ConversationSummary summary;
    std::optional<std::string> model;
    std::size_t messages = 0;
};

void put(rapidjson::Writer<rapidjson::StringBuffer>& w, const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

void print_json(const std::string& user, const std::vector<Logged>& logged) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    put(w, "user", user);
    w.Key("conversations");
    w.StartArray();
    for (const Logged& l : logged) {
        w.StartObject();
        put(w, "id", l.summary.conversation_id);
        put(w, "created_at", l.summary.created_at);
        put(w, "updated_at", l.summary.updated_at);
        w.Key("model");
        if (l.model) {
            w.String(*l.model);
        } else {
            w.Null();
        }
        put(w, "title", l.summary.title);
        w.Key("messages");
        w.Uint64(l.messages);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    std::cout << buf.GetString() << "\n";
}

int run_logs(const Args& args) {
    const std::string user = args.get("user").value_or(default_user());
    if (user.empty()) throw UsageError{"--user: empty user id"};
    const std::int64_t count =
        args.get("count") ? parse_positive("-n", *args.get("count")) : kDefaultCount;
    const ConfiguredStores stores =
        open_stores(load_config(args), " (choose a store plugin, e.g. sqlite)");
    std::vector<ConversationSummary> all = all_conversations(*stores.persistent, user);
    // Newest first; stable over the reversed creation order, so a tie lists the later created
    // first.
    std::reverse(all.begin(), all.end());
    std::stable_sort(all.begin(), all.end(),
                     [](const ConversationSummary& a, const ConversationSummary& b) {
                         return a.updated_at > b.updated_at;
                     });
    if (static_cast<std::int64_t>(all.size()) > count) all.resize(static_cast<std::size_t>(count));
    std::vector<Logged> logged;
    for (ConversationSummary& c : all) {
        const ConversationParts parts = stores.persistent->load(user, c.conversation_id);
        logged.push_back(Logged{std::move(c), parts.prior_spec_id, parts.messages.size()});
    }
    if (args.has("json")) {
        print_json(user, logged);
        return kExitOk;
    }
    for (const Logged& l : logged) {
        std::cout << l.summary.conversation_id << '\t' << l.summary.updated_at << '\t'
                  << l.model.value_or("-") << '\t' << l.summary.title << '\n';
    }
    return kExitOk;
}

}  // namespace

const CommandSpec& logs_command() {
    static const CommandSpec spec{
        "logs",
        "the latest asks and chats of a user in the persistent store, newest first",
        {{"-n,--count", "N", "list at most N (default: 10)"},
         {"--user", "U", "the user the conversations belong to (default: $USER, else local)"},
         json_option(),
         config_option()},
        "",
        "",
        "One line per conversation: id, updated (UTC), model, title (its first question's first "
        "line), tab-separated.\n"
        "nucleo ask --conversation ID continues one; nucleo conversations show ID tells more.",
        run_logs};
    return spec;
}

}  // namespace nucleo::cli
