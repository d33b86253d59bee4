// Generated sessions with planted facts: see session.hpp.
#include "session.hpp"

#include <stdexcept>

#include "nucleo/content.hpp"
#include "text.hpp"

namespace nucleo::quality {

const char* to_string(FactKind kind) noexcept {
    switch (kind) {
        case FactKind::kNumber:
            return "number";
        case FactKind::kPath:
            return "path";
        case FactKind::kIdentifier:
            return "identifier";
        case FactKind::kError:
            return "error";
        case FactKind::kDecision:
            return "decision";
        case FactKind::kArtifact:
            return "artifact";
    }
    return "?";
}

/// A message before it becomes one: its text, its calls, or the lines of each call's result.
struct SessionWriter::Draft {
    Direction direction = Direction::kOutgoing;
    std::string text;
    std::vector<ToolCall> calls;
    std::vector<std::vector<std::string>> results;
    std::vector<std::string> ids;
};

namespace {

const char* kObjective =
    "You are a coding agent working in a C++ and Python repository. Use the tools to read files, "
    "search, build and run the tests; explain what you find and fix what is broken.";

Message to_message(const std::vector<std::string>& ids, const std::vector<ToolCall>& calls,
                   const std::string& text) {
    Message m;
    m.direction = Direction::kIncoming;
    if (!text.empty()) m.blocks.push_back(TextBlock{text});
    for (std::size_t i = 0; i < calls.size(); ++i) {
        m.blocks.push_back(ToolUseBlock{ids[i], calls[i].name, calls[i].input_json});
    }
    return m;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const std::string& l : lines) out += l + "\n";
    return out;
}

Message build(const std::vector<std::string>& ids, const std::vector<ToolCall>& calls,
              const std::vector<std::vector<std::string>>& results, Direction direction,
              const std::string& text) {
    if (!calls.empty()) return to_message(ids, calls, text);
    if (!results.empty()) {
        Message m;
        for (std::size_t i = 0; i < results.size(); ++i) {
            m.blocks.push_back(ToolResultBlock{ids[i], {TextBlock{joined(results[i])}}, false});
        }
        return m;
    }
    return direction == Direction::kIncoming ? Message::incoming_text(text)
                                             : Message::outgoing_text(text);
}

}  // namespace

ConversationContext SessionWriter::start(const std::string& id) {
    ConversationContext c(id, "bench");
    c.put_main_objective("task", kObjective);
    for (const char* name :
         {"read_file", "run_tests", "grep", "build", "git_diff", "list_dir", "http_get"}) {
        c.add_tool(ToolDefinitionBlock{name, std::string("The ") + name + " tool.",
                                       R"({"type":"object","properties":{}})"});
    }
    Message ask = Message::outgoing_text("The integration tests of " + random_camel(rng_, 2) +
                                         " fail since the last merge. Find "
                                         "the cause in src/, fix it, and keep the public API of " +
                                         random_path(rng_) + " as it is.");
    ask.compactable = false;
    c.add_message(ask);
    return c;
}

std::vector<SessionWriter::Draft> SessionWriter::draft_round(const RoundOptions& options) {
    std::vector<Draft> out(2);
    out[0].direction = Direction::kIncoming;
    out[0].text = assistant_note(rng_);
    const int calls = rng_.chance(0.25) ? rng_.between(2, 3) : 1;
    for (int i = 0; i < calls; ++i) {
        const ToolCall call = random_call(rng_);
        const std::string id = "toolu_" + std::to_string(++next_call_);
        out[0].calls.push_back(call);
        out[0].ids.push_back(id);
        // A heavy tail: one result in ten is three times longer.
        int lines = rng_.between(options.min_lines, options.max_lines) / calls;
        if (rng_.chance(0.1)) lines *= 3;
        out[1].results.push_back(tool_output(rng_, call.kind, lines));
        out[1].ids.push_back(id);
    }
    if (options.answer) {
        Draft answer;
        answer.direction = Direction::kIncoming;
        answer.text = assistant_note(rng_);
        Draft ask;
        ask.text = user_follow_up(rng_);
        out.push_back(std::move(answer));
        out.push_back(std::move(ask));
    }
    return out;
}

void SessionWriter::add_round(ConversationContext& conversation, const RoundOptions& options) {
    for (const Draft& d : draft_round(options)) {
        conversation.add_message(build(d.ids, d.calls, d.results, d.direction, d.text));
    }
}

std::string SessionWriter::fact_text(FactKind kind, ConversationContext& conversation) {
    Rng& r = rng_;
    switch (kind) {
        case FactKind::kNumber:
            switch (r.between(0, 2)) {
                case 0:
                    return "port " + std::to_string(r.between(20000, 65000));
                case 1:
                    return "took " + std::to_string(r.between(1000, 9999)) + " ms";
                default:
                    return "peak RSS " + std::to_string(r.between(200, 9000)) + " MiB";
            }
        case FactKind::kPath:
            return "src/" + r.pick(module_words()) + "/" + random_snake(r, 3) + ".cc";
        case FactKind::kIdentifier:
            return r.chance(0.5) ? random_camel(r, 3) : random_snake(r, 3);
        case FactKind::kError:
            switch (r.between(0, 2)) {
                case 0:
                    return "AssertionError: expected " + std::to_string(r.between(2, 99)) +
                           " got " + std::to_string(r.between(100, 999)) + " in test_" +
                           random_snake(r, 2);
                case 1:
                    return "error: no member named '" + random_snake(r, 2) + "' in '" +
                           random_camel(r, 2) + "' at line " + std::to_string(r.between(10, 999));
                default:
                    return "panic: index out of range [" + std::to_string(r.between(5, 99)) +
                           "] with length " + std::to_string(r.between(1, 4)) + " in " +
                           random_camel(r, 2) + "." + random_camel(r, 1);
            }
        case FactKind::kDecision:
            return "We decided to keep the " + random_snake(r, 2) + " v" +
                   std::to_string(r.between(2, 9)) + " schema because the " + random_snake(r, 2) +
                   " migration would break " + std::to_string(r.between(3, 40)) +
                   " stored snapshots.";
        case FactKind::kArtifact: {
            const std::string value = R"({"run":)" + std::to_string(r.between(1, 1000000)) +
                                      R"(,"failures":)" + std::to_string(r.between(1, 40)) + "}";
            return conversation.artifacts().register_artifact("test_report", value);
        }
    }
    return {};
}

std::string SessionWriter::fact_line(FactKind kind, const std::string& fact) {
    switch (kind) {
        case FactKind::kNumber:
            return "INFO " + rng_.pick(module_words()) + ": " + fact;
        case FactKind::kPath:
            return fact + ":" + std::to_string(rng_.between(1, 900)) + ":  }";
        case FactKind::kIdentifier:
            return "  if (" + fact + " > limit_) return Status::Busy();";
        case FactKind::kArtifact:
            return "full report: " + fact;
        default:
            return fact;
    }
}

std::string SessionWriter::fact_sentence(FactKind kind, const std::string& fact) {
    switch (kind) {
        case FactKind::kNumber:
            return " The last run shows " + fact + ".";
        case FactKind::kPath:
            return " The code in question lives in " + fact + ".";
        case FactKind::kIdentifier:
            return " Note that " + fact + " is set before the loop.";
        case FactKind::kError:
            return " The failure reads: " + fact;
        case FactKind::kArtifact:
            return " I stored the test report as " + fact + ".";
        default:
            return " " + fact;
    }
}

Session SessionWriter::session(const std::string& id, std::int64_t tokens, int per_kind) {
    Session s{start(id), {}};
    std::vector<Draft> drafts;
    // About 3.6 characters a token in this text; the exact count is measured by the caller.
    std::size_t chars = 0;
    while (static_cast<std::int64_t>(chars) < tokens * 36 / 10) {
        for (Draft& d : draft_round({.answer = rng_.chance(0.25)})) {
            chars += d.text.size();
            for (const auto& r : d.results) chars += joined(r).size();
            drafts.push_back(std::move(d));
        }
    }
    drafts.push_back(Draft{Direction::kOutgoing, "Continue with the fix.", {}, {}, {}});

    // Plant: a decision in an assistant's text; any other fact in a tool result (four in five,
    // at a random line) or in a text of either side.
    const std::size_t offset = s.conversation.messages().size();
    std::string before = text_of(s.conversation);
    for (const Draft& d : drafts) {
        before += d.text + "\n";
        for (const auto& r : d.results) before += joined(r);
    }
    for (int k = 0; k < kFactKinds * per_kind; ++k) {
        const auto kind = static_cast<FactKind>(k % kFactKinds);
        std::string fact;
        for (int attempt = 0; fact.empty() || before.find(fact) != std::string::npos; ++attempt) {
            if (attempt > 50) throw std::runtime_error("no unique fact");
            fact = fact_text(kind, s.conversation);
        }
        for (const Fact& f : s.facts) {
            if (f.text.find(fact) != std::string::npos || fact.find(f.text) != std::string::npos)
                fact.clear();
        }
        if (fact.empty()) {
            --k;
            continue;
        }
        const bool in_result = kind != FactKind::kDecision && rng_.chance(0.8);
        std::size_t i = 0;
        for (;;) {
            i = static_cast<std::size_t>(rng_.between(0, static_cast<int>(drafts.size()) - 1));
            const Draft& d = drafts[i];
            if (in_result ? !d.results.empty()
                          : (!d.text.empty() &&
                             (kind != FactKind::kDecision || d.direction == Direction::kIncoming)))
                break;
        }
        Draft& d = drafts[i];
        Host host = Host::kToolResult;
        if (in_result) {
            auto& lines = d.results[static_cast<std::size_t>(
                rng_.between(0, static_cast<int>(d.results.size()) - 1))];
            lines.insert(lines.begin() + rng_.between(0, static_cast<int>(lines.size())),
                         fact_line(kind, fact));
        } else {
            d.text += fact_sentence(kind, fact);
            host = d.direction == Direction::kIncoming ? Host::kAssistant : Host::kUser;
        }
        const double age = 1.0 - static_cast<double>(i) / static_cast<double>(drafts.size() - 1);
        s.facts.push_back({kind, fact, host, offset + i, age});
    }
    for (const Draft& d : drafts) {
        s.conversation.add_message(build(d.ids, d.calls, d.results, d.direction, d.text));
    }
    // Every fact occurs exactly once: noise that happened to repeat one would blur the measure.
    const std::string all = text_of(s.conversation);
    for (const Fact& f : s.facts) {
        const std::size_t first = all.find(f.text);
        if (first == std::string::npos || all.find(f.text, first + 1) != std::string::npos)
            throw std::runtime_error("fact '" + f.text + "' is not unique in " + id);
    }
    return s;
}

}  // namespace nucleo::quality
