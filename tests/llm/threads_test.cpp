// wire.211 end to end: Anthropic message threads through ProviderClient, the real Anthropic plugin
// and nucleo-emulator, which holds threads as the Messages API does (docs/emulator.md "Message
// threads"). With `options.threads: true` a call continues the thread the previous answer ended
// and sends only the turns since; a thread the provider cannot continue is replayed whole once; a
// conversation restored in another process continues the thread; threads are off by default.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "canned_reply.hpp"
#include "cli_run.hpp"
#include "emulator_client.hpp"
#include "nucleo/config.hpp"
#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo {
namespace {

namespace fs = std::filesystem;

const std::string kConfigPath = std::string(NUCLEO_SOURCE_DIR) + "/config/threads_test.yaml";

/// The shipped catalog on the emulator; `threads` is the anthropic instance's options.threads as
/// YAML ("" leaves the option out).
std::string providers_yaml(int port, const std::string& threads) {
    return emulator_test::shipped_config_yaml(port, threads.empty() ? "" : "threads: " + threads);
}

/// Long enough standing instructions that the head dominates a short turn's bytes.
std::string instructions() {
    std::string text;
    for (int i = 0; i < 120; ++i)
        text += "You answer questions about the documentation, citing the page you read. ";
    return text;
}

class ThreadedCalls : public ::testing::Test {
  protected:
    ThreadedCalls()
        : threaded_config_(Config::parse(providers_yaml(emulator_.port(), "true"), kConfigPath)),
          plain_config_(Config::parse(providers_yaml(emulator_.port(), ""), kConfigPath)),
          threaded_(client(threaded_config_)),
          plain_(client(plain_config_)),
          model_(threaded_config_.catalog().all().front()) {}

    static ProviderClient client(const Config& config) {
        return ProviderClient::from_config(config, PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}),
                                           "anthropic");
    }

    static ConversationContext conversation(const std::string& id) {
        ConversationContext c(id, "alice");
        c.put_main_objective("task", instructions());
        c.set_output(OutputSize::kShort);
        c.add_message(Message::outgoing_text("Where is the install guide?"));
        return c;
    }

    rapidjson::Document stats() const {
        const emulator_test::HttpResult r = emulator_.get("/stats");
        EXPECT_EQ(r.status, 200);
        return emulator_test::parse(r.body);
    }
    std::int64_t request_bytes() const { return stats()["request_bytes"].GetInt64(); }
    std::int64_t threads(const char* counter) const {
        return stats()["threads"][counter].GetInt64();
    }

    emulator_test::EmulatorProcess emulator_;
    Config threaded_config_;
    Config plain_config_;
    ProviderClient threaded_;
    ProviderClient plain_;
    const ModelSpec& model_;
};

TEST_F(ThreadedCalls, AContinueSendsOnlyTheTurnsSinceTheLastAnswerAndIsAnsweredAsTheWhole) {
    ASSERT_EQ(model_.id, "claude-sonnet-5-5") << "the shipped default model";
    ASSERT_TRUE(model_.threads);
    ConversationContext c = conversation("threads-delta");
    const LLMResponse first = threaded_.call(c, model_);
    ASSERT_TRUE(first.appended);
    EXPECT_EQ(first.thread, "create");
    EXPECT_FALSE(c.messages().back().thread_digest.empty());

    c.add_message(Message::outgoing_text("And the upgrade notes?"));
    ConversationContext whole = c;  // the same conversation, sent without a thread
    const std::size_t whole_bytes = plain_.build_request(whole, model_).body.size();
    const std::int64_t before = request_bytes();
    const LLMResponse second = threaded_.call(c, model_);
    const std::int64_t sent = request_bytes() - before;
    ASSERT_TRUE(second.appended);
    EXPECT_EQ(second.thread, "continue");
    EXPECT_LT(sent * 4, static_cast<std::int64_t>(whole_bytes))
        << "a continue leaves out the head and the turns the thread holds";
    EXPECT_EQ(threads("created"), 1);
    EXPECT_EQ(threads("continued"), 1);

    // The provider reads a continue as the whole conversation (its thread holds the answer as
    // the provider wrote it, which our rendering of it may spell a few tokens apart).
    const LLMResponse unthreaded = plain_.call(whole, model_);
    EXPECT_EQ(unthreaded.thread, "");
    EXPECT_NEAR(static_cast<double>(second.usage.total_input_tokens()),
                static_cast<double>(unthreaded.usage.total_input_tokens()),
                0.01 * static_cast<double>(unthreaded.usage.total_input_tokens()));

    // The next turn continues from the answer the continue brought.
    c.add_message(Message::outgoing_text("Thanks."));
    EXPECT_EQ(threaded_.call(c, model_).thread, "continue");
    EXPECT_EQ(threads("continued"), 2);
}

/// Calls `c` once threaded after one created turn and one new user turn, with `options`.
LLMResponse second_turn(ProviderClient& client, const ModelSpec& model, ConversationContext& c,
                        const CallOptions& options = {}) {
    EXPECT_EQ(client.call(c, model).thread, "create");
    c.add_message(Message::outgoing_text("And the upgrade notes?"));
    return client.call(c, model, options);
}

TEST_F(ThreadedCalls, AThreadLostBusyOrExpiredIsReplayedWholeOnce) {
    for (const std::string fault : {"thread-lost", "thread-busy", "expired"}) {
        SCOPED_TRACE(fault);
        ConversationContext c = conversation("threads-" + fault);
        CallOptions options;
        ASSERT_EQ(threaded_.call(c, model_).thread, "create");
        c.add_message(Message::outgoing_text("And the upgrade notes?"));
        if (fault == "expired")
            emulator_test::advance_clock(emulator_, 300);  // the page's 5 minutes
        else
            options.extra_headers.emplace_back("x-emulator-fault", fault);
        const std::int64_t created = threads("created");
        const std::size_t messages = c.messages().size();
        const LLMResponse r = threaded_.call(c, model_, options);
        EXPECT_EQ(r.thread, "replay");
        ASSERT_TRUE(r.appended);
        EXPECT_EQ(c.messages().size(), messages + 1);
        EXPECT_EQ(threads("created"), created + 1) << "one replay, with a new thread";
        EXPECT_EQ(r.calls.size(), 1U) << "the refused continue is not billed";
        // The replay's answer holds the new thread: the next turn continues it.
        c.add_message(Message::outgoing_text("Thanks."));
        EXPECT_EQ(threaded_.call(c, model_).thread, "continue");
    }
}

TEST_F(ThreadedCalls, AnAnswerContinuedAlreadyIsReplayed) {
    ConversationContext c = conversation("threads-twice");
    ASSERT_EQ(threaded_.call(c, model_).thread, "create");
    c.add_message(Message::outgoing_text("And the upgrade notes?"));
    // The same conversation, restored from its document: another host holding it.
    ConversationContext copy = read_conversation_document(write_conversation_document(c));
    ASSERT_EQ(threaded_.call(c, model_).thread, "continue");
    const LLMResponse r = threaded_.call(copy, model_);
    EXPECT_EQ(r.thread, "replay") << "each answer is continued once";
    EXPECT_TRUE(r.appended);
}

/// A 200 answer carrying an Anthropic error with `error_code`, for the first call of the request
/// id only: the replay (a create, under the same id) is answered as usual.
CallOptions refused_once(const std::string& code, const std::string& request_id) {
    CallOptions o;
    o.extra_headers = canned::reply(
        R"({"type":"error","error":{"type":"invalid_request_error","message":"thread: refused",)"
        R"("details":{"error_code":")" +
        code + R"("}},"request_id":"req_canned"})");
    o.extra_headers.emplace_back("x-emulator-reply-first", "1");
    o.extra_headers.emplace_back("x-emulator-request-id", request_id);
    return o;
}

TEST_F(ThreadedCalls, AFingerprintMismatchIsReplayedAndAnUnknownCodeIsTheCallsError) {
    ConversationContext c = conversation("threads-mismatch");
    EXPECT_EQ(
        second_turn(threaded_, model_, c, refused_once("thread_fingerprint_mismatch", "mismatch"))
            .thread,
        "replay");

    ConversationContext d = conversation("threads-unknown");
    ASSERT_EQ(threaded_.call(d, model_).thread, "create");
    d.add_message(Message::outgoing_text("And the upgrade notes?"));
    const std::size_t messages = d.messages().size();
    const std::int64_t created = threads("created");
    try {
        (void)threaded_.call(d, model_, refused_once("thread_exploded", "unknown"));
        ADD_FAILURE() << "an error code no thread rule names is not replayed";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("thread_exploded"), std::string::npos) << e.what();
    }
    EXPECT_EQ(d.messages().size(), messages) << "the conversation is as it was";
    EXPECT_EQ(threads("created"), created);
}

TEST_F(ThreadedCalls, AHistoryChangedBeforeTheAnswerCreatesANewThread) {
    ConversationContext c = conversation("threads-rewrite");
    ASSERT_EQ(threaded_.call(c, model_).thread, "create");
    // The host edits the question the thread's answer followed.
    std::vector<Message> edited(c.messages().begin(), c.messages().end());
    edited[0].blocks = {TextBlock{"Where is the installation guide?"}};
    c.replace_messages(std::move(edited), {0, 1});
    c.add_message(Message::outgoing_text("And the upgrade notes?"));
    const LLMResponse r = threaded_.call(c, model_);
    EXPECT_EQ(r.thread, "create");
    EXPECT_EQ(threads("continued"), 0);
}

TEST_F(ThreadedCalls, ThreadsAreOffByDefault) {
    ConversationContext c = conversation("threads-off");
    EXPECT_EQ(plain_.call(c, model_).thread, "");
    c.add_message(Message::outgoing_text("And the upgrade notes?"));
    EXPECT_EQ(plain_.call(c, model_).thread, "");
    EXPECT_TRUE(c.messages().back().thread_digest.empty());
    EXPECT_EQ(threads("created"), 0);
    // The shipped configuration leaves the option out.
    const Config shipped = Config::load(std::string(NUCLEO_SOURCE_DIR) + "/config/nucleo.yaml");
    EXPECT_EQ(shipped.provider("anthropic").options_json.find("threads"), std::string::npos);
}

TEST_F(ThreadedCalls, AThreadsOptionThatIsNotABooleanIsRefusedNamingIt) {
    const Config bad = Config::parse(providers_yaml(emulator_.port(), "\"yes\""), kConfigPath);
    try {
        (void)client(bad);
        ADD_FAILURE() << "threads: \"yes\" was taken";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("threads"), std::string::npos) << e.what();
    }
}

TEST_F(ThreadedCalls, AConversationRestoredInAnotherProcessContinuesTheThread) {
    ConversationContext c = conversation("threads-restore");
    ASSERT_EQ(threaded_.call(c, model_).thread, "create");
    c.add_message(Message::outgoing_text("And the upgrade notes?"));
    const fs::path dir =
        fs::temp_directory_path() / ("nucleo-threads-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "doc.json") << write_conversation_document(c);
    std::ofstream(dir / "nucleo.yaml") << providers_yaml(emulator_.port(), "true");
    const test_support::CliRun r = test_support::run_command(
        "env ANTHROPIC_API_KEY=test NUCLEO_PLUGIN_PATH=" + std::string(NUCLEO_BUILD_PLUGIN_DIR) +
        " " + NUCLEO_CLI + " send --in " + (dir / "doc.json").string() +
        " --model claude-sonnet-5-5 --config " + (dir / "nucleo.yaml").string());
    fs::remove_all(dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find(", thread continue"), std::string::npos) << r.err;
    EXPECT_EQ(threads("continued"), 1);
    const ConversationContext after = read_conversation_document(r.out);
    EXPECT_FALSE(after.messages().back().thread_digest.empty())
        << "the new answer keeps its thread for the next process";
}

}  // namespace
}  // namespace nucleo
