// obs.101-obs.106: every model call observable. ProviderClient against the real nucleo-emulator
// through the real Anthropic plugin: one record per call and per HTTP attempt with the provider's
// request id, tokens and cost, delivered to the host's observer and logged (text or JSON); the
// progress of a waiting call; the User-Agent on every request.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "emulator_client.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/log.hpp"
#include "nucleo/observability.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/version.hpp"

namespace nucleo {
namespace {

using emulator_test::EmulatorProcess;

ModelSpec claude() {
    ModelSpec m;
    m.id = "claude-test";
    m.provider = "anthropic";
    m.wire_model = "claude-sonnet-5-5";
    m.max_context_tokens = 200000;
    m.max_output_tokens = 8192;
    m.output_budget = {{OutputSize::kShort, 1024}};
    m.native_tools = true;
    m.prices = {.input = 3.0, .output = 15.0, .cache_write = 3.75, .cache_read = 0.30};
    return m;
}

ConversationContext conversation() {
    ConversationContext c("conv-observed", "alice");
    c.set_output(OutputSize::kShort);
    c.set_depth(Depth::kImmediate);
    c.add_message(Message::outgoing_text("Where is order 42?"));
    return c;
}

/// Installs observers that collect what they get; uninstalls them at the end of the test.
struct Collected {
    std::vector<CallRecord> records;
    std::vector<CallProgress> progress;
    Collected() {
        set_call_record_observer([this](const CallRecord& r) { records.push_back(r); });
        set_call_progress_observer([this](const CallProgress& p) { progress.push_back(p); });
    }
    ~Collected() {
        set_call_record_observer({});
        set_call_progress_observer({});
    }
    Collected(const Collected&) = delete;
    Collected& operator=(const Collected&) = delete;
};

class CallRecordsTest : public ::testing::Test {
protected:
    void SetUp() override {
        emulator_ = std::make_unique<EmulatorProcess>();
        config_.name = "anthropic";
        config_.plugin = "anthropic";
        config_.base_url = "http://127.0.0.1:" + std::to_string(emulator_->port());
        config_.credentials.api_key = "sk-test-secret";
    }

    ProviderClient client(const ProviderConfig& config) const {
        PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
        TransportOptions transport;
        transport.retry.initial_backoff = std::chrono::milliseconds(5);
        return {config, loader.load(config.plugin).make_provider(config.options_json), transport};
    }

    std::unique_ptr<EmulatorProcess> emulator_;
    ProviderConfig config_;
};

TEST_F(CallRecordsTest, ARetriedCallGivesOneRecordPerAttemptAndOneForTheCall) {
    Collected seen;
    ConversationContext c = conversation();
    ProviderClient pc = client(config_);
    CallOptions options;
    options.extra_headers = {{"x-emulator-fault", "fail-first=1:429"},
                             {"x-emulator-request-id", "observed-retry"}};
    const LLMResponse r = pc.call(c, claude(), options);

    ASSERT_EQ(seen.records.size(), 3U);
    const CallRecord& refused = seen.records[0];
    const CallRecord& served = seen.records[1];
    const CallRecord& call = seen.records[2];
    EXPECT_EQ(refused.kind, CallRecord::Kind::kAttempt);
    EXPECT_EQ(refused.attempt, 1);
    EXPECT_EQ(refused.max_attempts, 4);
    EXPECT_EQ(refused.http_status, 429);
    EXPECT_EQ(refused.status, "error");
    EXPECT_EQ(refused.error_type, "429");
    EXPECT_TRUE(refused.request_id.starts_with("req_emu_")) << refused.request_id;
    EXPECT_EQ(served.kind, CallRecord::Kind::kAttempt);
    EXPECT_EQ(served.attempt, 2);
    EXPECT_EQ(served.http_status, 200);
    EXPECT_EQ(served.status, "ok");
    EXPECT_TRUE(served.request_id.starts_with("req_emu_")) << served.request_id;
    EXPECT_NE(served.request_id, refused.request_id);

    EXPECT_EQ(call.kind, CallRecord::Kind::kCall);
    EXPECT_EQ(call.status, "ok");
    EXPECT_EQ(call.provider, "anthropic");
    EXPECT_EQ(call.provider_system, "anthropic");
    EXPECT_EQ(call.model, "claude-test");
    EXPECT_EQ(call.wire_model, "claude-sonnet-5-5");
    EXPECT_EQ(call.conversation_id, "conv-observed");
    EXPECT_EQ(call.attempt, 2);
    EXPECT_EQ(call.http_status, 200);
    EXPECT_EQ(call.request_id, served.request_id);
    EXPECT_EQ(call.stop_reason, "end_turn");
    EXPECT_EQ(call.input_tokens, r.usage.input_tokens);
    EXPECT_EQ(call.output_tokens, r.usage.output_tokens);
    EXPECT_GT(call.output_tokens, 0);
    EXPECT_DOUBLE_EQ(call.cost, r.cost);
    EXPECT_GE(call.latency, served.latency);

    // obs.104: what a waiting caller is told, in order.
    ASSERT_EQ(seen.progress.size(), 3U);
    EXPECT_EQ(seen.progress[0].kind, CallProgress::Kind::kConnecting);
    EXPECT_EQ(seen.progress[1].kind, CallProgress::Kind::kRetryWait);
    EXPECT_EQ(seen.progress[1].attempt, 2);
    EXPECT_EQ(seen.progress[1].http_status, 429);
    EXPECT_EQ(seen.progress[2].kind, CallProgress::Kind::kConnecting);
    EXPECT_EQ(describe(seen.progress[0]), "connecting to anthropic (claude-test)");
    // The emulator's 429 says retry-after: 1.
    EXPECT_EQ(describe(seen.progress[1]), "rate limited (429): retry 2 of 4 in 1 s");
    EXPECT_EQ(describe(seen.progress[2]), "connecting to anthropic (claude-test), attempt 2 of 4");
}

TEST_F(CallRecordsTest, TheRecordsAttributesAreTheGenAiSemanticConventions) {
    Collected seen;
    ConversationContext c = conversation();
    ProviderClient pc = client(config_);
    pc.call(c, claude());
    ASSERT_EQ(seen.records.size(), 2U);
    const std::string json = to_otel_attributes_json(seen.records[1]);
    rapidjson::Document d;
    d.Parse(json.c_str());
    ASSERT_FALSE(d.HasParseError()) << json;
    EXPECT_STREQ(d["gen_ai.operation.name"].GetString(), "chat");
    EXPECT_STREQ(d["gen_ai.provider.name"].GetString(), "anthropic");
    EXPECT_STREQ(d["gen_ai.request.model"].GetString(), "claude-sonnet-5-5");
    EXPECT_STREQ(d["gen_ai.conversation.id"].GetString(), "conv-observed");
    EXPECT_STREQ(d["gen_ai.response.finish_reasons"][0].GetString(), "end_turn");
    EXPECT_EQ(d["gen_ai.usage.input_tokens"].GetInt64(), seen.records[1].input_tokens);
    EXPECT_EQ(d["gen_ai.usage.output_tokens"].GetInt64(), seen.records[1].output_tokens);
    EXPECT_EQ(d["gen_ai.usage.cache_read.input_tokens"].GetInt64(), 0);
    EXPECT_EQ(d["gen_ai.usage.cache_creation.input_tokens"].GetInt64(), 0);
    EXPECT_EQ(d["http.response.status_code"].GetInt(), 200);
    EXPECT_STREQ(d["nucleo.record"].GetString(), "call");
    EXPECT_STREQ(d["nucleo.provider.request_id"].GetString(), seen.records[1].request_id.c_str());
    EXPECT_DOUBLE_EQ(d["nucleo.cost.usd"].GetDouble(), seen.records[1].cost);
    EXPECT_FALSE(d.HasMember("error.type"));
}

TEST_F(CallRecordsTest, ACallThatNeverGotAnAnswerIsRecordedAsAnErrorAndAThrowingObserverIsHarmless) {
    Collected seen;
    // Installed after Collected: this observer throws, the call's own error still surfaces.
    const CallRecordObserver previous = set_call_record_observer([&seen](const CallRecord& r) {
        seen.records.push_back(r);
        throw std::runtime_error("observer bug");
    });
    ProviderConfig down = config_;
    down.base_url = "http://127.0.0.1:9";  // the discard port: nothing listens
    ConversationContext c = conversation();
    ProviderClient pc = client(down);
    try {
        pc.call(c, claude());
        FAIL() << "nothing listens on port 9";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kTransport) << e.what();
    }
    ASSERT_EQ(seen.records.size(), 5U);  // four attempts, then the call
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(seen.records[i].kind, CallRecord::Kind::kAttempt);
        EXPECT_EQ(seen.records[i].attempt, i + 1);
        EXPECT_EQ(seen.records[i].http_status, 0);
        EXPECT_EQ(seen.records[i].error_type, "transport");
        EXPECT_FALSE(seen.records[i].error_message.empty());
    }
    const CallRecord& call = seen.records[4];
    EXPECT_EQ(call.kind, CallRecord::Kind::kCall);
    EXPECT_EQ(call.status, "error");
    EXPECT_EQ(call.error_type, "transport");
    EXPECT_EQ(call.attempt, 4);
    EXPECT_NE(call.error_message.find("127.0.0.1:9"), std::string::npos) << call.error_message;
    EXPECT_EQ(call.output_tokens, 0);
    EXPECT_EQ(c.messages().size(), 1U);
    EXPECT_NE(to_log_text(call).find("gen_ai call status=error error.type=transport"), std::string::npos)
        << to_log_text(call);
    ASSERT_EQ(seen.progress.back().kind, CallProgress::Kind::kConnecting);
    EXPECT_EQ(seen.progress[1].kind, CallProgress::Kind::kRetryWait);
    EXPECT_EQ(describe(seen.progress[1]).rfind("no answer (", 0), 0U) << describe(seen.progress[1]);
    set_call_record_observer(previous);
}

/// What the runtime writes to stderr while `body` runs.
template <typename F>
std::string stderr_of(F body) {
    char path[] = "/tmp/nucleo-log-XXXXXX";
    const int file = ::mkstemp(path);
    std::fflush(stderr);
    const int saved = ::dup(2);
    ::dup2(file, 2);
    body();
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    ::close(file);
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(path);
    return text;
}

TEST_F(CallRecordsTest, EveryCallIsLoggedAtInfoAsTextOrAsJson) {
    const log::Level level = log::level();
    log::set_level(log::Level::kInfo);
    ProviderClient pc = client(config_);
    const std::string text = stderr_of([&] {
        ConversationContext c = conversation();
        pc.call(c, claude());
    });
    EXPECT_NE(text.find("[info] gen_ai attempt status=ok"), std::string::npos) << text;
    EXPECT_NE(text.find("[info] gen_ai call status=ok gen_ai.provider.name=anthropic"), std::string::npos)
        << text;
    EXPECT_NE(text.find("gen_ai.conversation.id=conv-observed"), std::string::npos) << text;
    EXPECT_NE(text.find("request_id=req_emu_"), std::string::npos) << text;

    log::set_format(log::Format::kJson);
    const std::string json = stderr_of([&] {
        ConversationContext c = conversation();
        pc.call(c, claude());
    });
    log::set_format(log::Format::kText);
    log::set_level(level);
    std::vector<std::string> lines;
    for (std::size_t at = 0, end; (end = json.find('\n', at)) != std::string::npos; at = end + 1)
        lines.push_back(json.substr(at, end - at));
    ASSERT_EQ(lines.size(), 2U) << json;
    rapidjson::Document d;
    d.Parse(lines[1].c_str());
    ASSERT_FALSE(d.HasParseError()) << lines[1];
    EXPECT_STREQ(d["level"].GetString(), "info");
    EXPECT_STREQ(d["logger"].GetString(), "nucleo");
    EXPECT_EQ(std::string(d["message"].GetString()).rfind("gen_ai call status=ok", 0), 0U);
    EXPECT_STREQ(d["nucleo.record"].GetString(), "call");
    EXPECT_STREQ(d["gen_ai.conversation.id"].GetString(), "conv-observed");
    EXPECT_GT(d["gen_ai.usage.output_tokens"].GetInt64(), 0);
    EXPECT_EQ(log::parse_format("json"), log::Format::kJson);
    EXPECT_EQ(log::parse_format("text"), log::Format::kText);
    EXPECT_EQ(log::parse_format("yaml"), std::nullopt);
}

TEST_F(CallRecordsTest, ACallRefusedBeforeAnyRequestGivesNoRecord) {
    Collected seen;
    ProviderConfig no_key = config_;
    no_key.credentials.api_key.clear();
    ConversationContext c = conversation();
    ProviderClient pc = client(no_key);
    EXPECT_THROW(pc.call(c, claude()), Error);
    EXPECT_TRUE(seen.records.empty());
    EXPECT_TRUE(seen.progress.empty());
}

TEST_F(CallRecordsTest, EveryRequestCarriesTheUserAgentUnlessTheCallerSetsOne) {
    ProviderClient pc = client(config_);
    ConversationContext c = conversation();
    const auto agents = [](const HttpRequest& request) {
        std::vector<std::string> values;
        for (const auto& [k, v] : request.headers)
            if (k == "user-agent" || k == "User-Agent") values.push_back(v);
        return values;
    };
    EXPECT_EQ(user_agent(), std::string("nucleo/") + version());
    EXPECT_EQ(agents(pc.build_request(c, claude())), std::vector<std::string>{user_agent()});
    CallOptions own;
    own.extra_headers = {{"User-Agent", "my-gateway/2"}};
    EXPECT_EQ(agents(pc.build_request(c, claude(), own)), std::vector<std::string>{"my-gateway/2"});
}

}  // namespace
}  // namespace nucleo
