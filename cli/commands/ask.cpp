// `nucleo ask [PROMPT...]`: one turn. The prompt is the arguments joined by spaces, then whatever
// is piped on stdin (cli.105), after the files of -a/--attach (cli.109).
//
// Decisions:
//  - cli.108: every answered ask is saved to the configured persistent store as a conversation of
//    the user (--user, else $USER, else "local"), through a ConversationService as chat's turns
//    are; a failed call is not kept (ownership.105). Without a persistent store ask still answers
//    and keeps nothing.
//  - cli.107: -c/--continue asks in the user's latest conversation (chat.109), --conversation ID
//    in that one (cli.106); it keeps the model that answered it unless -m says otherwise
//    (chat.113) and the instructions it started with (chat.112).
//  - The conversation declares what --depth and --max-tokens say, else nothing: its depth and
//    output come from the config's `defaults:` (IMMEDIATE and MEDIUM unless set, budget.102), so a
//    config that opts out (`none`) makes ask fail as budget.2 says.
//  - The model is -m/--model, else a continued conversation's, else the default model (config.2:
//    NUCLEO_MODEL, `defaults.model`, the first catalog entry whose provider has a key).
//  - Without --json the answer streams to stdout as it arrives (control characters other than
//    newline and tab shown as escapes when stdout is a terminal, so an answer cannot move the
//    cursor), ends with a newline, and one usage line goes to stderr. With --json nothing
//    streams: one document {schema_version, model, wire_model, text, stop_reason, usage, cost,
//    calls, conversation_id} (docs/cli-json.md); a failure is a document too (cli.103).
//  - While nothing has arrived, a terminal's stderr shows what the call is doing (cli.104).
//  - --emulator starts nucleo-emulator for the run and aims every provider of the config at it
//    with stand-in keys, as `nucleo demo` does (cli.102); a note on stderr names it.
//  - A truncated answer retried at a larger budget (budget.7) is said on stderr; what streamed
//    of it stays on the screen, the retry's answer follows.
//  - The log level is warn unless NUCLEO_LOG_LEVEL says otherwise, as in chat: the usage line is
//    the call's summary for a person; the call records (obs.101) are there at
//    NUCLEO_LOG_LEVEL=info, for a script that wants them.
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>

#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "args.hpp"
#include "commands.hpp"
#include "commands/attachments.hpp"
#include "commands/chat_terminal.hpp"
#include "commands/conversation_ids.hpp"
#include "commands/demo_support.hpp"
#include "commands/provider_output.hpp"
#include "commands/spinner.hpp"
#include "common/cost.hpp"
#include "config_loading.hpp"
#include "nucleo/catalog.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/observability.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/service.hpp"
#include "nucleo/thinker.hpp"

namespace nucleo::cli {
namespace {

/// What is piped into stdin, read to its end; "" when stdin is a terminal, /dev/null or anything
/// but a pipe or a file (cli.105: a prompt given as arguments must not wait on a terminal).
std::string piped_stdin() {
    struct stat st {};
    if (::fstat(STDIN_FILENO, &st) != 0) return {};
    if (!S_ISFIFO(st.st_mode) && !S_ISREG(st.st_mode)) return {};
    return std::string(std::istreambuf_iterator<char>(std::cin), {});
}

/// cli.105: the arguments, then the piped text after a blank line (`git diff | nucleo ask
/// review` asks about the diff); either alone is the prompt.
std::string prompt_of(const Args& args) {
    std::string prompt;
    for (const std::string& word : args.positionals()) prompt += (prompt.empty() ? "" : " ") + word;
    const std::string piped = piped_stdin();
    const bool has_piped = piped.find_first_not_of(" \t\r\n") != std::string::npos;
    if (prompt.empty()) {
        prompt = piped;
    } else if (has_piped) {
        prompt += "\n\n" + piped;
    }
    if (prompt.find_first_not_of(" \t\r\n") == std::string::npos)
        throw UsageError{"no prompt: give it as arguments or on stdin"};
    return prompt;
}

/// --depth and --max-tokens, over the config's defaults (budget.102).
void declare(const Args& args, ConversationContext& conversation) {
    if (auto depth = args.get("depth")) {
        std::string upper = *depth;
        for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        const auto parsed = parse_depth(upper);
        if (!parsed)
            throw UsageError{"--depth must be IMMEDIATE, STANDARD or DEEP, got '" + *depth + "'"};
        conversation.set_depth(*parsed);
    }
    if (auto tokens = args.get("max-tokens"))
        conversation.set_output(OutputDeclaration{parse_positive("--max-tokens", *tokens)});
}

std::string answer_text(const Message& message) {
    std::string text;
    for (const ContentBlock& b : message.blocks) {
        if (const auto* t = std::get_if<TextBlock>(&b.value)) text += t->text;
    }
    return text;
}

void print_json(const ModelSpec& model, const LLMResponse& r,
                const std::optional<std::string>& saved_as) {
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
    w.Key("conversation_id");  // cli.108: null when nothing was saved
    if (saved_as) {
        w.String(*saved_as);
    } else {
        w.Null();
    }
    w.EndObject();
    std::cout << buf.GetString() << "\n";
}

/// cli.107, cli.108: the conversation an ask is one turn of, obtained from a ConversationService
/// over the config's stores for an ask's own thinker and released when the ask ends.
class AskConversation {
  public:
    AskConversation(ConfiguredStores stores, const std::string& user,
                    const std::optional<std::string>& resume)
        : where_(stores.persistent_where) {
        ConversationServiceOptions so;
        so.persistent = std::move(stores.persistent);
        so.session = std::move(stores.session);
        so.cleanup_thread = false;  // one conversation, one turn: nothing to evict
        service_ = std::make_unique<ConversationService>(std::move(so));
        thinker_->name = "AskThinker";
        thinker_->user_id = user;
        thinker_->job_id = "nucleo-ask";
        if (!resume) {
            thinker_->mint_conversation_id();
        } else {
            thinker_->set_conversation_id(*resume);
        }
        try {
            conversation_ = service_->obtain_conversation(thinker_).get();
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::kNotFound || !resume) throw;
            throw Error(ErrorKind::kNotFound, "--conversation " + *resume +
                                                  ": no such conversation for user '" + user +
                                                  "' in " + where_);
        }
    }
    ~AskConversation() { service_->release(*thinker_); }
    AskConversation(const AskConversation&) = delete;
    AskConversation& operator=(const AskConversation&) = delete;

    [[nodiscard]] ConversationContext& context() const { return *conversation_; }

    /// Saves the answered turn; its id, or nullopt when there is no persistent store.
    std::optional<std::string> save() {
        if (!service_->save_conversation(*conversation_, *thinker_)) return std::nullopt;
        return thinker_->conversation_id();
    }

  private:
    std::string where_;
    std::unique_ptr<ConversationService> service_;
    std::shared_ptr<Thinker> thinker_ = std::make_shared<Thinker>();
    std::shared_ptr<ConversationContext> conversation_;
};

int run_ask(const Args& args) {
    if (args.has("conversation") && args.has("continue"))
        throw UsageError{"--conversation and --continue exclude each other"};
    const std::string prompt = prompt_of(args);
    if (auto system = args.get("system"); system && system->empty())
        throw UsageError{"--system needs a text"};
    const std::string user = args.get("user").value_or(default_user());
    if (user.empty()) throw UsageError{"--user: empty user id"};
    // cli.102: --emulator answers from a nucleo-emulator of this run's own, every provider aimed
    // at it (stopped, with its folder, when ask returns).
    std::optional<demo::OwnEmulator> emulator;
    const Config config = args.has("emulator")
                              ? demo::with_own_emulator(load_config(args), emulator, "ask")
                              : load_config(args);
    // cli.107: continuing needs the store; a plain ask saves when there is one (cli.108).
    const bool continuing = args.has("conversation") || args.has("continue");
    ConfiguredStores stores =
        open_stores(config, continuing ? ", so there is no conversation to continue" : "");
    std::optional<std::string> resume;
    if (auto given = args.get("conversation")) {
        resume = resolve_conversation_id(*stores.persistent, user, *given, "--conversation");
    } else if (args.has("continue")) {
        resume = latest_conversation(*stores.persistent, user);
        if (!resume) {
            std::cerr << "nucleo ask: user '" << user << "' has no conversation in "
                      << stores.persistent_where << " to continue; starting a new one\n";
        }
    }
    std::string model_note;
    const ModelSpec& model = chosen_model(
        args, config, stores.persistent ? &*stores.persistent : nullptr, user, resume, model_note);
    if (!model_note.empty()) std::cerr << "nucleo ask: " << model_note << "\n";
    // cli.109: every attachment read and checked against the model before anything is called or
    // saved.
    std::vector<ContentBlock> attached = attachment_blocks(args.all("attach"), model);
    ProviderClient client = provider_client_for(config, model);

    AskConversation asked(std::move(stores), user, resume);
    ConversationContext& conversation = asked.context();
    if (auto system = args.get("system")) {
        if (!resume) {
            conversation.put_main_objective("system", *system);
        } else {
            // chat.112: a continued conversation keeps the instructions it started with.
            std::cerr << "nucleo ask: --system is not applied: conversation " << *resume
                      << " keeps the instructions it was started with\n";
        }
    }
    declare(args, conversation);
    Message question = Message::outgoing_text(prompt);
    question.blocks.insert(question.blocks.begin(), std::make_move_iterator(attached.begin()),
                           std::make_move_iterator(attached.end()));
    conversation.add_message(std::move(question));

    const bool json = args.has("json");
    const bool terminal = ::isatty(STDOUT_FILENO) == 1;
    // cli.104: the waiting line, on a terminal's stderr until the answer begins.
    Spinner spinner(!json && ::isatty(STDERR_FILENO) == 1, neutralize("waiting for " + model.id));
    const CallProgressObserver previous = set_call_progress_observer(
        [&spinner](const CallProgress& p) { spinner.say(neutralize(describe(p))); });
    struct Restore {
        const CallProgressObserver& previous;
        ~Restore() { set_call_progress_observer(previous); }
    } restore{previous};
    bool line_open = false;  // the streamed text so far does not end with a newline
    StreamCallbacks stream;
    stream.on_text_delta = [&](std::size_t, std::string_view text) {
        if (text.empty()) return;
        spinner.stop();
        std::cout << (terminal ? neutralize(text) : std::string(text)) << std::flush;
        line_open = text.back() != '\n';
    };
    stream.on_discard = [&](std::string_view reason) {
        spinner.stop();
        if (line_open) std::cout << "\n" << std::flush;
        line_open = false;
        std::cerr << "nucleo ask: " << reason << "\n";
    };
    CallOptions options;
    if (!json) options.stream = &stream;
    const LLMResponse r = client.call(conversation, model, options);
    spinner.stop();
    const std::optional<std::string> saved_as = asked.save();  // cli.108
    if (json) {
        print_json(model, r, saved_as);
        return kExitOk;
    }
    // A dialect that does not stream delivers the answer at the end.
    if (!client.capabilities().streaming) {
        const std::string text = answer_text(r.message);
        std::cout << (terminal ? neutralize(text) : text);
        line_open = !text.empty() && text.back() != '\n';
    }
    if (line_open) std::cout << "\n";
    std::cout << std::flush;
    std::cerr << "model " << model.id << " (" << r.model << "): stop " << r.stop_reason
              << ", input " << r.usage.input_tokens << ", output " << r.usage.output_tokens
              << ", cache read " << r.usage.cache_read_tokens << ", cost $" << std::fixed
              << std::setprecision(6) << r.cost;
    if (saved_as) std::cerr << ", conversation " << *saved_as;
    std::cerr << "\n";
    return kExitOk;
}

}  // namespace

const CommandSpec& ask_command() {
    static const CommandSpec spec{
        "ask",
        "one question to a model, the answer streamed (the prompt as arguments or on stdin)",
        {{"-m,--model", "ID",
          "a catalog id (default: NUCLEO_MODEL, else the config's defaults.model, else the first "
          "model whose provider has a key)"},
         {"-s,--system", "TEXT",
          "standing instructions for the model (a continued conversation keeps its own)"},
         {"-a,--attach", "FILE",
          "attach a png, jpeg, gif or webp image, a PDF or a plain-text file, if the model's "
          "record accepts it (repeatable)",
          true},
         {"-c,--continue", "", "ask in this user's latest conversation, with its model"},
         {"--conversation", "ID",
          "ask in this stored conversation of the user (its id or a unique prefix), with its "
          "model"},
         {"--user", "U", "the user the conversation is saved for (default: $USER, else local)"},
         {"--max-tokens", "N",
          "the answer's budget in tokens (default: the config's defaults.output)"},
         {"--depth", "DEPTH",
          "IMMEDIATE, STANDARD or DEEP: how much the model thinks first (default: the config's "
          "defaults.depth)"},
         {"--emulator", "",
          "answer from nucleo-emulator, started for this run on a free loopback port (no key, "
          "nothing billed)"},
         json_option(),
         config_option()},
        "PROMPT",
        "the question; text piped on stdin is added after it (or is the question without it)",
        "The thinking depth and answer length are the config's `defaults:` (IMMEDIATE and MEDIUM "
        "unless set). Usage and cost go to stderr.\n"
        "Each answered ask is saved to the config's persistent store (nucleo logs lists them).",
        run_ask};
    return spec;
}

}  // namespace nucleo::cli
