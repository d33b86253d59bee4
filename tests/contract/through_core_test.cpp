// Every checked rule of the request contract (docs/spec/wire.md), through the core: one row per
// rule id with a conversation (or a plugin's body) that keeps it and one that breaks it. The
// broken side is decided or refused before sending: the error names the rule, where it broke and
// the provider's text, the real nucleo-emulator on loopback counts zero requests, and the
// conversation is unchanged. A family rule's bodies are the rule book's own cases
// (wire_cases.hpp), which the tampering plugin returns as its encode with what the core decided
// for the call (system content, reserved budget) spliced in, so the core's audit (wire.150) meets
// each one. A rule the core holds itself before any plugin sees the request (wire.170,
// wire.171) has a conversation on each side; a generic check a tampering mode. The list of rows
// is checked against the rule ids of docs/spec/wire.md, so a new rule without a row fails here.
#include <gtest/gtest.h>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core_support.hpp"
#include "emulator_client.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/provider_client.hpp"
#include "wire_cases.hpp"

namespace nucleo {
namespace {

using emulator_test::EmulatorProcess;
using nucleo::contract::WireFamily;

/// How a row reaches the core.
enum class Via {
    kCase,          ///< the rule book's case bodies, spliced by the tampering plugin
    kMode,          ///< a tampering mode breaks the request; the faithful plugin keeps it
    kConversation,  ///< the core's own decision over a conversation (wire.170, wire.171)
};

struct Row {
    std::string rule;
    Via via = Via::kCase;
    const wire_cases::Case* rule_case = nullptr;
    /// kCase: the rule that refuses a case body through the core when it is not the row's own:
    /// cache marks are the plan's (wire.160), so a plugin's body with marks the plan did not
    /// decide is refused whether or not it keeps the provider's count or TTL order. The plan
    /// itself never spends more than 4 breakpoints and orders its TTLs (caching.106,
    /// caching.107), which the cache plan's tests hold.
    std::string through_core;
    std::string mode;  ///< kMode
};

std::string family_name(WireFamily f) {
    return std::string(contract::wire_family_name(f));
}

const std::set<std::string> kMarkRules = {"wire.103", "wire.104", "wire.165", "wire.132"};

std::vector<Row> rows() {
    std::vector<Row> out;
    for (const auto& c : wire_cases::kCases) {
        Row r;
        r.rule = c.rule;
        r.rule_case = &c;
        if (kMarkRules.count(c.rule) != 0) r.through_core = "wire.160";
        out.push_back(r);
    }
    const std::vector<std::pair<const char*, const char*>> modes = {
        {"wire.115", "oversize"},    {"wire.150", "authority_path"},
        {"wire.151", "header_crlf"}, {"wire.152", "not_json"},
        {"wire.153", "faithful"},    {"wire.160", "fifth_cache_control"},
        {"wire.161", "drop_system"}, {"wire.163", "max_tokens"},
        {"wire.175", "nul_tail"},
    };
    for (const auto& [rule, mode] : modes) {
        Row r;
        r.rule = rule;
        r.via = Via::kMode;
        r.mode = mode;
        // A body with a raw NUL byte is not JSON: the audit names wire.152.
        if (r.rule == "wire.175") r.through_core = "wire.152";
        out.push_back(r);
    }
    for (const char* rule : {"wire.170", "wire.171"}) {
        Row r;
        r.rule = rule;
        r.via = Via::kConversation;
        out.push_back(r);
    }
    return out;
}

class ThroughCore : public ::testing::TestWithParam<Row> {
  protected:
    void SetUp() override { emulator_ = std::make_unique<EmulatorProcess>(); }

    ProviderClient client(const std::string& options) const {
        return contract_test::emulator_client(*emulator_, "tamper", TAMPER_PLUGIN_DIR, options);
    }

    static std::string splice_options(const wire_cases::Case& c, const char* body) {
        rapidjson::Document d(rapidjson::kObjectType);
        auto& a = d.GetAllocator();
        d.AddMember("mode", "splice", a);
        d.AddMember("family", rapidjson::Value(family_name(c.family).c_str(), a), a);
        d.AddMember("body", rapidjson::Value(body, a), a);
        rapidjson::StringBuffer b;
        rapidjson::Writer<rapidjson::StringBuffer> w(b);
        d.Accept(w);
        return b.GetString();
    }

    /// Whether the body carries system text in its family's channel: the conversation then has
    /// an objective (the core prepares system content), else none (the channel must stay empty).
    static bool has_system(const wire_cases::Case& c, const char* body) {
        rapidjson::Document d;
        d.Parse(body);
        if (c.family != WireFamily::kOpenAIChat) return d.HasMember("system");
        const auto& m = d["messages"];
        return m.IsArray() && !m.Empty() && m[0].HasMember("role") &&
               std::string(m[0]["role"].GetString()) == "system";
    }

    static ConversationContext conversation(bool objective) {
        ConversationContext c("c-rule", "alice");
        if (objective)
            c.put_main_objective("task", "You answer questions about orders, briefly and exactly.");
        c.set_output(OutputSize::kShort);
        c.set_depth(Depth::kImmediate);
        c.add_message(Message::outgoing_text("Where is order 42?"));
        return c;
    }

    /// A tool loop at thinking depth whose assistant turn begins with `first`.
    static ConversationContext tool_loop(ContentBlock first) {
        ConversationContext c("c-loop", "alice");
        c.put_main_objective("task", "You look up orders.");
        c.set_output(OutputSize::kShort);
        c.set_depth(Depth::kStandard);
        c.add_tool(
            ToolDefinitionBlock{"lookup", "Looks an order up.",
                                R"({"type":"object","properties":{"id":{"type":"string"}}})"});
        c.add_message(Message::outgoing_text("Where is order 42?"));
        Message call;
        call.direction = Direction::kIncoming;
        call.blocks = {std::move(first), ToolUseBlock{"toolu_1", "lookup", R"({"id":"42"})"}};
        c.add_message(call);
        Message result;
        result.direction = Direction::kOutgoing;
        result.blocks = {ToolResultBlock{"toolu_1", {TextBlock{"shipped"}}, false}};
        c.add_message(result);
        return c;
    }

    long requests_seen() const { return contract_test::requests_seen(*emulator_); }

    /// Calls and expects the audit's refusal naming `rule` (and `detail` when given): nothing
    /// sent, the conversation unchanged.
    void expect_refused(ProviderClient& pc, ConversationContext& c, const ModelSpec& model,
                        const std::string& rule, const std::string& detail) {
        const std::size_t before = c.messages().size();
        try {
            pc.call(c, model);
            ADD_FAILURE() << rule << ": the broken request was sent";
        } catch (const Error& e) {
            const std::string what = e.what();
            EXPECT_EQ(e.kind(), ErrorKind::kPlugin) << what;
            EXPECT_NE(what.find("breaks " + rule + " "), std::string::npos) << what;
            if (!detail.empty()) {
                EXPECT_NE(what.find(detail), std::string::npos) << what;
            }
            EXPECT_NE(what.find("nothing was sent"), std::string::npos) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
        EXPECT_EQ(requests_seen(), 0) << rule;
        EXPECT_EQ(c.messages().size(), before) << rule;
    }

    std::unique_ptr<EmulatorProcess> emulator_;
};

TEST_P(ThroughCore, KeptIsDecidedOrPassesAndBrokenIsRefusedBeforeSending) {
    const Row& row = GetParam();
    const ModelSpec model = contract_test::claude("tamper", row.rule == "wire.171");
    if (row.via == Via::kCase) {
        const wire_cases::Case& c = *row.rule_case;
        // The kept body passes the core's audit (build_request audits what it renders).
        ConversationContext kept = conversation(has_system(c, c.keeps));
        ProviderClient keeps = client(splice_options(c, c.keeps));
        if (row.through_core.empty()) {
            EXPECT_NO_THROW(keeps.build_request(kept, model, {}, true)) << row.rule;
        } else {
            try {
                keeps.build_request(kept, model, {}, true);
                ADD_FAILURE() << row.rule << ": marks the plan did not decide passed the audit";
            } catch (const Error& e) {
                EXPECT_NE(std::string(e.what()).find("breaks " + row.through_core + " "),
                          std::string::npos)
                    << e.what();
            }
        }
        ConversationContext broken = conversation(has_system(c, c.breaks));
        ProviderClient breaks = client(splice_options(c, c.breaks));
        if (row.through_core.empty()) {
            expect_refused(breaks, broken, model, row.rule,
                           std::string(c.rule) + " at " + c.where + ": " + c.text);
        } else {
            expect_refused(breaks, broken, model, row.through_core, "");
        }
        return;
    }
    if (row.via == Via::kMode) {
        ConversationContext kept = conversation(true);
        ProviderClient faithful = client(R"({"mode":"faithful"})");
        faithful.call(kept, model);
        EXPECT_EQ(requests_seen(), 1) << row.rule;
        ConversationContext broken = conversation(true);
        ProviderClient pc = client(R"({"mode":")" + row.mode + R"("})");
        if (row.rule == "wire.153") pc.set_request_body_limit(64);
        const auto before = requests_seen();
        const std::size_t messages = broken.messages().size();
        try {
            pc.call(broken, model);
            ADD_FAILURE() << row.rule << ": the broken request was sent";
        } catch (const Error& e) {
            const std::string refused_by = row.through_core.empty() ? row.rule : row.through_core;
            EXPECT_NE(std::string(e.what()).find("breaks " + refused_by + " "), std::string::npos)
                << e.what();
        }
        EXPECT_EQ(requests_seen(), before) << row.rule;
        EXPECT_EQ(broken.messages().size(), messages);
        return;
    }
    if (row.rule == "wire.170") {
        ConversationContext kept = conversation(true);
        ProviderClient pc = client(R"({"mode":"faithful"})");
        pc.call(kept, model);
        EXPECT_EQ(requests_seen(), 1);
        ConversationContext broken("c-first", "alice");
        broken.set_output(OutputSize::kShort);
        broken.set_depth(Depth::kImmediate);
        Message first;
        first.direction = Direction::kIncoming;
        first.blocks = {TextBlock{"Hello, how can I help?"}};
        broken.add_message(first);
        const std::string id = broken.messages().front().id;
        try {
            pc.call(broken, model);
            ADD_FAILURE() << "a conversation that starts with the model was sent";
        } catch (const Error& e) {
            const std::string what = e.what();
            EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << what;
            EXPECT_NE(what.find("wire.170"), std::string::npos) << what;
            EXPECT_NE(what.find("message '" + id + "'"), std::string::npos) << what;
            EXPECT_NE(what.find("block 0 (text)"), std::string::npos) << what;
        }
        EXPECT_EQ(requests_seen(), 1);
        EXPECT_EQ(broken.messages().size(), 1U);
        return;
    }
    // wire.171: the decision is what is sent: a loop turn that begins with thinking keeps it, one
    // that begins with text goes without thinking (and is answered).
    ProviderClient pc = client(R"({"mode":"faithful"})");
    ConversationContext kept = tool_loop(ThinkingBlock{"The order id is 42.", "sig"});
    EXPECT_NE(
        pc.build_request(kept, model, {}, true).body.str().find(R"("thinking":{"type":"adaptive")"),
        std::string::npos);
    ConversationContext corrected = tool_loop(TextBlock{"Let me look."});
    EXPECT_NE(pc.build_request(corrected, model, {}, true)
                  .body.str()
                  .find(R"("thinking":{"type":"disabled"})"),
              std::string::npos);
    pc.call(corrected, model);
    EXPECT_EQ(requests_seen(), 1);
    EXPECT_TRUE(corrected.messages().back().incoming());
}

INSTANTIATE_TEST_SUITE_P(Wire, ThroughCore, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<Row>& info) {
                             std::string name = info.param.rule;
                             for (char& ch : name)
                                 if (ch == '.') ch = '_';
                             return name;
                         });

TEST(ThroughCoreRows, EveryCheckedRuleOfTheSpecHasARow) {
    // The rules of docs/spec/wire.md; wire.149 (the family a plugin declares), wire.164 and
    // wire.172 (how the audit reads a body) and wire.173 (a split body's audit refuses what the
    // whole audit refuses, and wire.174 decides only what it accepts: split_audit_test.cpp compares
    // the two) check nothing of their own. wire.176-wire.190 are the per-model rules and answers
    // of nucleo-emulator, which the audit does not run (the core decides from the same catalog
    // records before encode): model_rules_test.cpp, emulator_catalog_test.cpp and the catalog's
    // render test hold them. wire.191 and wire.192 are the history the core keeps append-only,
    // which no single request shows (append_only_test.cpp holds them); the rules after them are
    // the emulator's bound thinking (emulator_binding_test.cpp), and wire.199-wire.205 its
    // message threads (emulator_threads_test.cpp). wire.211 is the core's use of those threads,
    // which takes a conversation over several calls (tests/llm/threads_test.cpp); wire.212 is
    // the emulator's port (emulator_test.cpp); wire.213 routes the openai-responses family to its
    // rule book, whose rules tests/providers/openai_responses/rules_test.cpp holds; wire.214, as
    // wire.174, decides only what the whole audit accepts (split_items_test.cpp compares them).
    std::ifstream in(std::string(NUCLEO_SOURCE_DIR) + "/docs/spec/wire.md");
    ASSERT_TRUE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    const std::string spec = text.str();
    std::set<std::string> rules;
    const std::regex defined(R"(- \*\*(wire\.[0-9]+)\*\*)");
    for (auto it = std::sregex_iterator(spec.begin(), spec.end(), defined);
         it != std::sregex_iterator(); ++it)
        rules.insert((*it)[1].str());
    ASSERT_GT(rules.size(), 40U);
    std::set<std::string> covered;
    for (const Row& r : rows()) covered.insert(r.rule);
    for (const std::string& rule : rules) {
        if (rule == "wire.149" || rule == "wire.164" || rule == "wire.172" || rule == "wire.173" ||
            rule == "wire.174" || rule == "wire.210" ||  // wire.210: how the audit reads
            rule == "wire.211" ||                        // wire.211: calls, not a refusal
            rule == "wire.212" ||                        // wire.212: the emulator's port
            rule == "wire.213" ||  // wire.213: routes to the Responses rule book (rules_test.cpp)
            rule == "wire.214")    // wire.214: decides only what it accepts (split_items_test.cpp)
            continue;
        if (const int n = std::stoi(rule.substr(5)); n >= 176 && n <= 205) continue;
        EXPECT_EQ(covered.count(rule), 1U) << rule << " has no through-the-core row";
    }
}

}  // namespace
}  // namespace nucleo
