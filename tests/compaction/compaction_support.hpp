// Fixtures and checks shared by the compaction tests: conversations made to need each level of
// the ladder, the survival rules (compaction.30-34), and the tool-pairing rule the providers
// enforce.
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "compaction/work.hpp"
#include "nucleo/compaction.hpp"
#include "nucleo/document.hpp"
#include "nucleo/plugins.hpp"

namespace nucleo::compaction_test {

inline ModelSpec test_model() {
    ModelSpec m;
    m.id = "test-model";
    m.provider = "anthropic";
    m.wire_model = "claude-sonnet-5-5";
    m.max_context_tokens = 20000;
    m.max_output_tokens = 4096;
    m.output_budget = {{OutputSize::kShort, 512}};
    m.native_tools = true;
    m.token_counter = "o200k_base";
    return m;
}

/// Comfort 10,000 and the default trigger: compaction starts above 9,200 tokens.
inline ContextWindowSettings test_settings() {
    return {10000, std::nullopt};
}

/// English prose of about `sentences` × 16 tokens; `seed` varies the words so that messages
/// differ. Carries paths, numbers and names, as real tool output does.
inline std::string prose(int sentences, int seed) {
    std::string out;
    for (int i = 0; i < sentences; ++i) {
        const int k = seed * 1000 + i;
        out += "Step " + std::to_string(k) + " read src/module_" + std::to_string(k % 97) +
               ".cpp and reported " + std::to_string(k % 13) + " warnings in parseConfig. ";
    }
    return out;
}

inline Plugin scripted_plugin() {
    return PluginLoader({NUCLEO_FIXTURE_PLUGIN_DIR})
        .load(NUCLEO_FIXTURE_PLUGIN_DIR "/nucleo-scripted.so");
}
inline SummarizerInstance scripted(const std::string& config = "{}") {
    return scripted_plugin().make_summarizer(config);
}

inline ConversationContext base(const std::string& id) {
    ConversationContext c(id, "alice");
    c.put_main_objective("task", "You fix build failures in the repository.");
    c.add_tool(ToolDefinitionBlock{"read_file", "Reads a file.",
                                   R"({"type":"object","properties":{"path":{"type":"string"}}})"});
    c.artifacts().register_artifact("log", R"({"lines":42})");
    c.set_output(OutputSize::kShort);
    c.set_depth(Depth::kImmediate);
    return c;
}

inline Message tool_call(const std::string& id, const std::vector<std::string>& use_ids) {
    Message m;
    m.id = id;
    m.direction = Direction::kIncoming;
    m.blocks.push_back(TextBlock{"Reading the files."});
    for (const auto& u : use_ids) {
        m.blocks.push_back(ToolUseBlock{u, "read_file", R"({"path":"src/)" + u + R"(.cpp"})"});
    }
    return m;
}

inline Message tool_results(const std::string& id, const std::vector<std::string>& use_ids,
                            int sentences, int seed) {
    Message m;
    m.id = id;
    for (std::size_t i = 0; i < use_ids.size(); ++i) {
        m.blocks.push_back(
            ToolResultBlock{use_ids[i],
                            {TextBlock{prose(sentences, seed + static_cast<int>(i)) +
                                       "See «artifact:log~" + use_ids[i] + "» for the full log."}},
                            false});
    }
    return m;
}

/// LIGHT is enough: a user question kept verbatim, then seven calls with large results.
inline ConversationContext light_fixture() {
    ConversationContext c = base("light");
    Message q = Message::outgoing_text("Why does the build of module 7 fail?");
    q.id = "q";
    q.compactable = false;
    c.add_message(q);
    for (int k = 1; k <= 7; ++k) {
        const std::string u = "t" + std::to_string(k);
        c.add_message(tool_call("a" + std::to_string(k), {u}));
        c.add_message(tool_results("r" + std::to_string(k), {u}, 95, k));
    }
    return c;
}

/// MODERATE is needed: plain questions and answers, no tool results, the last question pending.
inline ConversationContext moderate_fixture() {
    ConversationContext c = base("moderate");
    for (int k = 1; k <= 14; ++k) {
        c.add_message(
            Message::outgoing_text("Question " + std::to_string(k) + ": " + prose(25, k)));
        c.add_message(
            Message::incoming_text("Answer " + std::to_string(k) + ": " + prose(25, 100 + k)));
    }
    c.add_message(Message::outgoing_text("What is left to fix?"));
    return c;
}

/// AGGRESSIVE is needed: hundreds of exchanges each too small to summarize alone.
inline ConversationContext aggressive_fixture(int exchanges = 380) {
    ConversationContext c = base("aggressive");
    Message kept = Message::outgoing_text("Keep this instruction: never touch vendor/.");
    kept.compactable = false;
    c.add_message(kept);
    for (int k = 1; k <= exchanges; ++k) {
        c.add_message(Message::outgoing_text("Is file src/f" + std::to_string(k) + ".cpp clean?"));
        c.add_message(Message::incoming_text("File src/f" + std::to_string(k) + ".cpp has " +
                                             std::to_string(k % 5) + " issues."));
    }
    c.add_message(Message::outgoing_text("Summarize «artifact:log~a1b2c3» for me."));
    return c;
}

/// MAXIMUM is needed when AGGRESSIVE's summary fails: long enough that MODERATE's per-exchange
/// summaries cannot reach the trigger.
inline ConversationContext maximum_fixture() {
    return aggressive_fixture(600);
}

/// Parallel calls in one turn, one result message marked non-compactable (so its calls stay),
/// and a pending pair at the end.
inline ConversationContext parallel_fixture() {
    ConversationContext c = base("parallel");
    Message q = Message::outgoing_text("Check modules 1 to 4.");
    q.compactable = false;
    c.add_message(q);
    c.add_message(tool_call("a1", {"p1", "p2"}));
    c.add_message(tool_results("r1", {"p1", "p2"}, 60, 1));
    c.add_message(tool_call("a2", {"p3", "p4"}));
    Message pinned = tool_results("r2", {"p3", "p4"}, 60, 3);
    pinned.compactable = false;
    c.add_message(pinned);
    c.add_message(tool_call("a3", {"p5", "p6"}));
    c.add_message(tool_results("r3", {"p5", "p6"}, 60, 5));
    Message answer = Message::incoming_text("Modules 1 to 4 build.");
    answer.compactable = false;
    c.add_message(answer);
    Message q2 = Message::outgoing_text("Now module 5.");
    q2.compactable = false;
    c.add_message(q2);
    c.add_message(tool_call("a4", {"p7", "p8"}));
    c.add_message(tool_results("r4", {"p7", "p8"}, 60, 7));
    return c;
}

inline std::string all_text(const ConversationContext& c) {
    std::string out;
    for (const Message& m : c.messages()) out += compaction::render_for_summary(m) + "\n";
    return out;
}

/// compaction.30-34, checked on `after` against `before`.
inline void expect_survival(const ConversationContext& before, const ConversationContext& after) {
    EXPECT_EQ(before.main_objective(), after.main_objective()) << "the objective was touched";
    ASSERT_EQ(before.declared_tools().size(), after.declared_tools().size());
    for (std::size_t i = 0; i < before.declared_tools().size(); ++i) {
        EXPECT_EQ(before.declared_tools()[i].definition, after.declared_tools()[i].definition);
    }
    EXPECT_EQ(before.artifacts(), after.artifacts()) << "the artifact registry was touched";
    // "A message marked compactable=false is kept word for word at every level."
    for (const Message& m : before.messages()) {
        if (m.compactable) continue;
        const Message* kept = after.find_message(m.id);
        ASSERT_NE(kept, nullptr) << "non-compactable message " << m.id << " is gone";
        EXPECT_EQ(kept->blocks, m.blocks) << "non-compactable message " << m.id << " changed";
    }
    // "Artifact references in summarized text are kept."
    const std::string text = all_text(after);
    for (const std::string& ref : compaction::artifact_refs(all_text(before))) {
        EXPECT_NE(text.find(ref), std::string::npos) << ref << " was lost";
    }
}

/// The pairing rule the providers enforce (Anthropic's wording, on turns merged by role): every
/// tool_result answers a tool_use of the assistant turn just before it, and every tool_use of an
/// assistant turn is answered by tool_results at the start of the next user turn (except a call
/// still pending in the conversation's last turn).
inline void expect_no_orphans(const ConversationContext& c) {
    struct Turn {
        bool user;
        std::vector<const ContentBlock*> blocks;
    };
    std::vector<Turn> turns;
    for (const Message& m : c.messages()) {
        if (turns.empty() || turns.back().user != m.outgoing()) turns.push_back({m.outgoing(), {}});
        for (const ContentBlock& b : m.blocks) turns.back().blocks.push_back(&b);
    }
    for (std::size_t t = 0; t < turns.size(); ++t) {
        std::set<std::string> uses;
        if (!turns[t].user) {
            for (const ContentBlock* b : turns[t].blocks) {
                if (const auto* u = b->get_if<ToolUseBlock>()) uses.insert(u->id);
            }
            if (uses.empty() || t + 1 == turns.size()) continue;
            std::set<std::string> answered;
            for (const ContentBlock* b : turns[t + 1].blocks) {
                const auto* r = b->get_if<ToolResultBlock>();
                if (r == nullptr) break;  // results lead the turn
                answered.insert(r->tool_use_id);
            }
            EXPECT_EQ(uses, answered) << "assistant turn " << t << " has calls without results";
        } else {
            std::set<std::string> before_uses;
            if (t > 0) {
                for (const ContentBlock* b : turns[t - 1].blocks) {
                    if (const auto* u = b->get_if<ToolUseBlock>()) before_uses.insert(u->id);
                }
            }
            for (const ContentBlock* b : turns[t].blocks) {
                if (const auto* r = b->get_if<ToolResultBlock>()) {
                    EXPECT_EQ(before_uses.count(r->tool_use_id), 1U)
                        << "orphan tool_result " << r->tool_use_id << " in user turn " << t;
                }
            }
        }
    }
}

}  // namespace nucleo::compaction_test
