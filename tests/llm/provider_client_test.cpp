// ProviderClient against the real nucleo-emulator, through the real Anthropic dialect plugin
// (end to end against the emulator: retries on each fault, truncation escalation and its refusal
// at the ceiling, cache read tokens on the second call of a growing conversation).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "emulator_client.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo {
namespace {

using emulator_test::EmulatorProcess;

ModelSpec claude(std::int64_t max_output = 8192) {
    ModelSpec m;
    m.id = "claude-test";
    m.provider = "anthropic";
    m.wire_model = "claude-sonnet-5-5";
    m.max_context_tokens = 200000;
    m.max_output_tokens = max_output;
    m.output_budget = {{OutputSize::kShort, 1024}};
    m.supports_caching = true;
    m.native_tools = true;
    m.min_cacheable_tokens = 1024;
    m.cache_ttl_1h = true;
    m.prices = {.input = 3.0, .output = 15.0, .cache_write = 3.75, .cache_read = 0.30};
    return m;
}

class ProviderClientTest : public ::testing::Test {
  protected:
    void SetUp() override {
        emulator_ = std::make_unique<EmulatorProcess>();
        config_.name = "anthropic";
        config_.plugin = "anthropic";
        config_.base_url = "http://127.0.0.1:" + std::to_string(emulator_->port());
        config_.credentials.api_key = "sk-test-secret";
    }

    ProviderClient client(ProviderConfig config) const {
        PluginLoader loader({NUCLEO_BUILD_PLUGIN_DIR});
        TransportOptions transport;
        transport.retry.initial_backoff = std::chrono::milliseconds(5);
        return {config, loader.load(config.plugin).make_provider(config.options_json), transport};
    }
    ProviderClient client() const { return client(config_); }

    static ConversationContext conversation(std::size_t objective_bytes = 200) {
        ConversationContext c("c-e2e", "alice");
        c.put_main_objective(
            "task", "You answer questions about orders. " + std::string(objective_bytes, 'x'));
        c.set_output(OutputSize::kShort);
        c.set_depth(Depth::kImmediate);
        Message q = Message::outgoing_text("Where is order 42?");
        q.cache = true;
        c.add_message(q);
        return c;
    }

    long requests_seen() const {
        // /stats: {"requests": {..., "total": N}, ...}
        const auto stats = emulator_->get("/stats");
        const auto pos = stats.body.find("\"total\"");
        return pos == std::string::npos
                   ? -1
                   : std::stol(stats.body.substr(stats.body.find(':', pos) + 1));
    }

    std::unique_ptr<EmulatorProcess> emulator_;
    ProviderConfig config_;
};

TEST_F(ProviderClientTest, AnswerIsAppendedWithUsageAndCost) {
    ConversationContext c = conversation();
    ProviderClient pc = client();
    const LLMResponse r = pc.call(c, claude());
    ASSERT_EQ(c.messages().size(), 2U);
    EXPECT_TRUE(c.messages().back().incoming());
    EXPECT_EQ(r.message.id, c.messages().back().id);
    EXPECT_EQ(r.stop_reason, "end_turn");
    EXPECT_GT(r.usage.input_tokens, 0);
    EXPECT_GT(r.usage.output_tokens, 0);
    EXPECT_DOUBLE_EQ(r.cost, claude().cost(r.usage.input_tokens, r.usage.output_tokens,
                                           r.usage.cache_write_tokens, r.usage.cache_read_tokens));
    EXPECT_EQ(r.max_tokens, 1024);
    EXPECT_EQ(c.prior_spec_id(), "claude-test");
}

// limits.143: a body past the cap is refused while the plugin writes it (its sink refuses the
// write), never assembled whole first; through the per-turn encode cache and the whole encode,
// and nothing is sent.
TEST_F(ProviderClientTest, ABodyPastTheCapIsRefusedWhileThePluginWritesIt) {
    for (const bool fragments : {true, false}) {
        SCOPED_TRACE(fragments ? "per-turn encode cache" : "whole encode");
        ConversationContext c = conversation();
        c.add_message(Message::incoming_text("It shipped."));
        c.add_message(Message::outgoing_text("Here is the log: " + std::string(1 << 20, 'y')));
        ProviderClient pc = client();
        pc.set_turn_fragment_cache(fragments);
        pc.set_request_body_limit(256 * 1024);
        try {
            (void)pc.call(c, claude());
            ADD_FAILURE() << "a 1 MiB body passed a 256 KiB cap";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
            const std::string what = e.what();
            EXPECT_NE(what.find("passed the cap of 262144 bytes while it was written"),
                      std::string::npos)
                << what;
            EXPECT_NE(what.find("plugin 'anthropic'"), std::string::npos) << what;
        }
        EXPECT_EQ(c.messages().size(), 3U);
        // Under the cap the same client sends it.
        pc.set_request_body_limit(4U << 20);
        EXPECT_TRUE(pc.call(c, claude()).appended);
    }
    EXPECT_EQ(requests_seen(), 2) << "only the calls under the cap reached the provider";
}

TEST_F(ProviderClientTest, AMissingKeyIsRefusedBeforeAnyRequest) {
    // Bad input: a missing key or URL is a clear error before any request.
    ProviderConfig no_key = config_;
    no_key.credentials.api_key.clear();
    ConversationContext c = conversation();
    ProviderClient pc = client(no_key);
    try {
        pc.call(c, claude());
        FAIL() << "a call without a key must be refused";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kConfig);
        EXPECT_NE(std::string(e.what()).find("no api_key"), std::string::npos) << e.what();
    }
    EXPECT_EQ(requests_seen(), 0);
    EXPECT_EQ(c.messages().size(), 1U);
}

TEST_F(ProviderClientTest, TheSecondCallOfAGrowingConversationReadsTheCache) {
    // caching.8: "a later request that begins with exactly the same content reads
    // it from that cache"; the objective is cached by default.
    ConversationContext c = conversation(8000);
    // The marked-turns policy, whose marks this test is about (the default, sliding, places
    // nothing on a head its counter finds under the model's minimum: caching.105).
    ProviderConfig config = config_;
    config.options_json = R"({"cache_policy":"seed"})";
    ProviderClient pc = client(config);
    const LLMResponse first = pc.call(c, claude());
    EXPECT_GT(first.cache_creation_input_tokens(), 0);
    EXPECT_EQ(first.cache_read_input_tokens(), 0);
    Message follow_up = Message::outgoing_text("And order 43?");
    follow_up.cache = true;
    c.add_message(follow_up);
    const LLMResponse second = pc.call(c, claude());
    EXPECT_GE(second.cache_read_input_tokens(), first.cache_creation_input_tokens());
    EXPECT_GT(second.cache_hit_rate(), 0.5);
    EXPECT_LT(second.cost, first.cost);
}

// caching.105, caching.107, caching.108: the provider's options choose the policy and the 1-hour
// head; the 1-hour part of the writes comes back apart and is priced at twice the input price.
TEST_F(ProviderClientTest, ProviderOptionsChooseThePolicyAndTheOneHourHeadIsPricedApart) {
    ProviderConfig config = config_;
    config.options_json = R"({"cache_policy":"sliding","cache_head_ttl":"1h"})";
    // Prose, so the model's counter (o200k) also sees well over the 1,024-token minimum in the
    // objective: a run of one letter counts a few tokens per dozen bytes.
    ConversationContext c("c-e2e", "alice");
    std::string rules;
    for (int i = 0; rules.size() < 8000; ++i)
        rules += "Rule " + std::to_string(i) + " about orders: answer precisely and cite it. ";
    c.put_main_objective("task", rules);
    c.set_output(OutputSize::kShort);
    c.set_depth(Depth::kImmediate);
    c.add_message(Message::outgoing_text("Where is order 42?"));
    Message unmarked = Message::outgoing_text("And order 43, which is not marked?");
    c.add_message(unmarked);
    ProviderClient pc = client(config);
    const LLMResponse first = pc.call(c, claude());
    EXPECT_GT(first.usage.cache_write_1h_tokens, 1500);  // the 8,000-byte objective (bytes / 4)
    EXPECT_LT(first.usage.cache_write_1h_tokens, first.usage.cache_write_tokens);
    // sliding ignores the marks: the unmarked last message was written too.
    EXPECT_EQ(first.usage.input_tokens, 0);
    const ModelSpec m = claude();
    EXPECT_DOUBLE_EQ(m.prices.cache_write_1h_price(), 6.0);
    EXPECT_DOUBLE_EQ(
        first.cost,
        m.cost(first.usage.input_tokens, first.usage.output_tokens, first.usage.cache_write_tokens,
               first.usage.cache_read_tokens, first.usage.cache_write_1h_tokens));
    const double hour_extra = 1e-6 * static_cast<double>(first.usage.cache_write_1h_tokens) *
                              (6.0 - m.prices.cache_write);
    EXPECT_NEAR(first.cost - hour_extra,
                m.cost(first.usage.input_tokens, first.usage.output_tokens,
                       first.usage.cache_write_tokens, first.usage.cache_read_tokens),
                1e-12);

    Message next = Message::outgoing_text("And order 44?");
    c.add_message(next);
    const LLMResponse second = pc.call(c, claude());
    EXPECT_GE(second.usage.cache_read_tokens, first.usage.cache_write_tokens);
    EXPECT_EQ(second.usage.cache_write_1h_tokens, 0);
}

// caching.130: a provider instance that names no policy plans `sliding`: the unmarked turns are
// written too, so nothing of the first call is left uncached; the marked-turns policy, named,
// caches only what is marked.
TEST_F(ProviderClientTest, TheDefaultPolicyIsSlidingAndSeedStaysSelectable) {
    const auto run = [&](const std::string& options, const std::string& id) {
        ProviderConfig config = config_;
        config.options_json = options;
        ConversationContext c(id, "alice");
        std::string rules;
        for (int i = 0; rules.size() < 8000; ++i)
            rules += "Rule " + std::to_string(i) + " about " + id + ": answer precisely. ";
        c.put_main_objective("task", rules);
        c.set_output(OutputSize::kShort);
        c.set_depth(Depth::kImmediate);
        std::string question = "Unmarked question about the ledger:";
        for (int i = 0; i < 200; ++i) question += " entry " + std::to_string(i);
        c.add_message(Message::outgoing_text(question));
        return client(config).call(c, claude());
    };
    const LLMResponse by_default = run("{}", "c-default-policy");
    EXPECT_EQ(by_default.usage.input_tokens, 0) << "sliding caches the unmarked turn";
    EXPECT_GT(by_default.usage.cache_write_tokens, 0);
    const LLMResponse seed = run(R"({"cache_policy":"seed"})", "c-seed-policy");
    EXPECT_GT(seed.usage.input_tokens, 200)
        << "the marked-turns policy leaves the unmarked turn uncached";
    EXPECT_GT(seed.usage.cache_write_tokens, 0) << "the objective is still cached";
}

// caching.109: a model whose catalog entry offers no 1-hour TTL gets the 5-minute head, even when
// the provider's options ask for the hour: nothing of the write is priced or reported as 1 h.
TEST_F(ProviderClientTest, AOneHourHeadOnAModelWithoutTheHourFallsBackToFiveMinutes) {
    ProviderConfig config = config_;
    config.options_json = R"({"cache_policy":"sliding","cache_head_ttl":"1h"})";
    // Two conversations with different objectives, so the second is not read from the first's
    // cache entry.
    auto conversation = [](const std::string& topic) {
        ConversationContext c("c-ttl-" + topic, "alice");
        std::string rules;
        for (int i = 0; rules.size() < 8000; ++i)
            rules += "Rule " + std::to_string(i) + " about " + topic + ": answer precisely. ";
        c.put_main_objective("task", rules);
        c.set_output(OutputSize::kShort);
        c.set_depth(Depth::kImmediate);
        c.add_message(Message::outgoing_text("Where is order 42?"));
        return c;
    };
    ModelSpec five_minutes_only = claude();
    five_minutes_only.cache_ttl_1h = false;
    ConversationContext orders = conversation("orders");
    const LLMResponse first = client(config).call(orders, five_minutes_only);
    EXPECT_GT(first.usage.cache_write_tokens, 1500);
    EXPECT_EQ(first.usage.cache_write_1h_tokens, 0);
    ConversationContext refunds = conversation("refunds");
    const LLMResponse hour = client(config).call(refunds, claude());
    EXPECT_GT(hour.usage.cache_write_1h_tokens, 0) << "the same request on a model with the hour";
}

TEST_F(ProviderClientTest, ABadCacheOptionIsRefusedNamingTheProviderAndTheValue) {
    for (const auto& [options, expected] : std::vector<std::pair<std::string, std::string>>{
             // abi.111: the host's own provider options are checked with the plugin's schema,
             // before the plugin's create.
             {R"({"cache_policy":"fast"})",
              "plugin 'anthropic' options: cache_policy: expected one of \"seed\", \"sliding\", "
              "\"automatic\", got \"fast\""},
             {R"({"cache_policy":3})",
              "plugin 'anthropic' options: cache_policy: expected a string (where the host places "
              "cache breakpoints; sliding when absent), got 3"},
             {R"({"cache_head_ttl":"2h"})",
              "plugin 'anthropic' options: cache_head_ttl: expected one of \"5m\", \"1h\", got "
              "\"2h\""}}) {
        ProviderConfig config = config_;
        config.options_json = options;
        try {
            (void)client(config);
            ADD_FAILURE() << options << " was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kConfig);
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
        }
    }
}

TEST_F(ProviderClientTest, RetriesEachTransientFaultThenSucceeds) {
    for (const std::string status : {"529", "500", "429"}) {
        ConversationContext c = conversation();
        ProviderClient pc = client();
        CallOptions options;
        options.extra_headers = {{"x-emulator-fault", "fail-first=2:" + status},
                                 {"x-emulator-request-id", "retry-" + status}};
        const LLMResponse r = pc.call(c, claude(), options);
        EXPECT_EQ(r.attempts, 3) << status;
        EXPECT_EQ(c.messages().size(), 2U) << status;
    }
}

TEST_F(ProviderClientTest, TruncationEscalatesOnceToTheCeiling) {
    // budget.7: "On truncation ... bumps the SENT message's requested_output_tokens to
    // the model's max_output_tokens" and the call is retried once.
    ConversationContext c = conversation();
    c.set_output(std::int64_t{2});  // too small for any answer
    ProviderClient pc = client();
    const LLMResponse r = pc.call(c, claude(4096));
    EXPECT_TRUE(r.escalated);
    EXPECT_EQ(r.max_tokens, 4096);
    EXPECT_EQ(r.stop_reason, "end_turn");
    EXPECT_EQ(c.messages().front().requested_output_tokens, 4096);
    EXPECT_EQ(c.messages().size(), 2U) << "only the complete answer is appended";
}

TEST_F(ProviderClientTest, TruncationAtTheCeilingIsUncorrectableAndAppendsNothing) {
    // budget.8: "a call issued at the ceiling has nowhere to grow ... it surfaces as
    // UncorrectableRuntimeLLMException". budget.9: a tool call cut off by truncation is never
    // handed to a tool.
    ConversationContext c = conversation();
    c.add_tool(ToolDefinitionBlock{
        "search_orders", "Search orders by text.",
        R"({"type":"object","properties":{"query":{"type":"string"}},"required":["query"]})"});
    ProviderClient pc = client();
    CallOptions options;
    options.extra_headers = {{"x-emulator-fault", "truncate"}};
    EXPECT_THROW(pc.call(c, claude(2), options), UncorrectableLLMException);
    EXPECT_EQ(c.messages().size(), 1U);
}

TEST_F(ProviderClientTest, AMalformedAnswerIsAProtocolErrorAndTheConversationIsUnchanged) {
    ConversationContext c = conversation();
    ProviderClient pc = client();
    CallOptions options;
    options.extra_headers = {{"x-emulator-fault", "malformed"}};
    try {
        pc.call(c, claude(), options);
        FAIL() << "a malformed answer must be refused";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kProtocol) << e.what();
    }
    EXPECT_EQ(c.messages().size(), 1U);
}

TEST_F(ProviderClientTest, RenderedRequestShowsSecretsAsStars) {
    ConversationContext c = conversation();
    ProviderClient pc = client();
    const HttpRequest req = pc.build_request(c, claude(), {}, /*redact_secrets=*/true);
    bool saw_key = false;
    for (const auto& [k, v] : req.headers) {
        EXPECT_EQ(v.find("sk-test-secret"), std::string::npos) << k;
        saw_key = saw_key || (k == "x-api-key" && v == "***");
    }
    EXPECT_TRUE(saw_key);
    EXPECT_EQ(req.url, config_.base_url + "/v1/messages");
}

}  // namespace
}  // namespace nucleo
