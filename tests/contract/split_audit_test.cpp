// wire.173, wire.174: the audit over a body built from kept chunks reaches the whole audit's
// verdict, over generated conversations (seeded; Anthropic Messages and OpenAI Chat), faithful and
// tampered: the chunks' bytes, the joins, the head.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "split_support.hpp"

namespace {

using namespace split_support;  // NOLINT(google-build-using-namespace): the tests' vocabulary

class Generator : public Random {
  public:
    using Random::Random;

    Generated anthropic() {
        Generated g;
        marks_ = 0;
        // The system text as JSON and as the plan names it; now and then the plan names another.
        const bool plain = one_in(2);
        const std::string system = plain ? "You are terse." : R"(Keep the \"tree\" green.\nAlways.)";
        system_ = system;
        g.plan.system_texts = {one_in(12) ? "Another system." : plain ? "You are terse." : "Keep the \"tree\" green.\nAlways."};
        g.plan.max_tokens = 4096;
        const std::string tools = R"("tools":[{"name":")" + std::string(one_in(15) ? "bad name!" : "run_tests") +
                                  R"(","input_schema":{"type":"object"}}])";
        g.open = R"({"model":"claude","max_tokens":)" + std::string(one_in(15) ? "4095" : "4096") + ",";
        if (one_in(2)) g.open += R"("thinking":{"type":"enabled","budget_tokens":1024},)";
        g.open += R"("system":[{"type":"text","text":")" + system + "\"" + mark() + "}]," + tools + R"(,"messages":[)";
        g.close = R"(],"stream":false})";
        const std::uint32_t n = 1 + below(70);
        int call = 0;
        for (std::uint32_t i = 0; i < n; ++i) g.messages.push_back(message(i, n, call));
        g.plan.breakpoints = marks_ + (one_in(12) ? 1 : 0);
        return g;
    }

    /// An OpenAI Chat request: the leading system message, then user and assistant turns, tool
    /// calls answered by tool messages.
    Generated openai() {
        Generated g;
        g.family = WireFamily::kOpenAIChat;
        g.plan.max_tokens = 2048;
        g.plan.system_texts = {one_in(12) ? "Another system." : "You are terse."};
        system_ = "You are terse.";
        g.open = R"({"model":"gpt","max_completion_tokens":)" + std::string(one_in(15) ? "2047" : "2048") +
                 R"(,"tools":[{"type":"function","function":{"name":")" + (one_in(15) ? "bad name!" : "run") +
                 R"(","parameters":{"type":"object"}}}],"messages":[)";
        g.close = "]}";
        g.messages.push_back(R"({"role":"system","content":"You are terse."})");
        const std::uint32_t n = 1 + below(60);
        int call = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
            if (i % 2 == 0) {
                g.messages.push_back(std::string(R"({"role":")") + (one_in(300) ? "system" : "user") +
                                     R"(","content":")" + text() + "\"}");
                continue;
            }
            // The last assistant message calls tools now and then, answered or left pending at the
            // end (wire.125).
            if (!one_in(3) || (i + 1 == n && !one_in(3))) {
                g.messages.push_back(R"({"role":"assistant","content":")" + text() + "\"}");
                continue;
            }
            const bool unanswered_at_end = i + 1 == n && one_in(2);
            std::string calls;
            std::vector<int> ids;
            for (int k = 1 + static_cast<int>(below(2)); k > 0; --k) {
                ids.push_back(++call);
                calls += (calls.empty() ? "" : ",") + std::string(R"({"id":"call_)") + std::to_string(call) +
                         R"(","type":"function","function":{"name":"run","arguments":"{}"}})";
            }
            g.messages.push_back(R"({"role":"assistant","content":null,"tool_calls":[)" + calls + "]}");
            for (const int id : ids) {
                if (unanswered_at_end || one_in(150)) continue;
                const std::string answered = one_in(200) ? "call_x" : "call_" + std::to_string(id);
                g.messages.push_back(one_in(200) ? std::string(R"({"role":"tool","content":"ok"})")
                                                 : R"({"role":"tool","tool_call_id":")" + answered + R"(","content":"ok"})");
            }
        }
        return g;
    }

  private:
    std::string mark() {
        if (!one_in(40)) return "";
        ++marks_;
        return one_in(3) ? R"(,"cache_control":{"type":"ephemeral","ttl":"1h"})" : R"(,"cache_control":{"type":"ephemeral"})";
    }

    std::string text() {
        switch (below(150)) {
            case 0: return "   ";
            case 6:
                return one_in(8) ? system_ : "six";  // repeats the system content (wire.161)
            case 7:
                return one_in(8) ? system_ + "\\n" + "and more" : "seven";
            case 1: return "";
            case 2: case 3: case 4: case 5: return R"(esc \"q\" \u00e9 \\ \n end)";
            default: return "step " + std::to_string(below(1000)) + " of the build";
        }
    }

    std::string message(std::uint32_t i, std::uint32_t n, int& call) {
        const bool user = (i % 2 == 0) != one_in(400);
        std::string m = std::string(R"({"role":")") + (user ? "user" : "assistant") + R"(","content":)";
        if (one_in(10)) return m + "\"" + text() + "\"}";
        m += "[";
        if (user) {
            if (pending_ > 0 && !one_in(150)) {
                for (int k = 0; k < pending_; ++k) {
                    m += R"({"type":"tool_result","tool_use_id":"toolu_)" + std::to_string(call - k) +
                         R"(","content":[{"type":"text","text":"ok")" + mark() + "}]" + mark() + "},";
                }
            }
            pending_ = 0;
            m += R"({"type":"text","text":")" + text() + "\"" + mark() + "}";
        } else {
            // wire.113 reads the last assistant message: it lacks its thinking block more often.
            if (!one_in(i + 2 == n ? 3 : 40))
                m += R"({"type":"thinking","thinking":"hm","signature":"sig"},)";
            m += R"({"type":"text","text":")" + text() + "\"" + mark() + "}";
            pending_ = 0;
            // The last one's uses are unanswered; the one before the last calls tools more often
            // (its user's tool results make wire.113 apply).
            if (one_in(i + 2 == n ? 2 : 3) && (i + 1 < n || one_in(3))) {
                for (int k = 1 + static_cast<int>(below(2)); k > 0; --k) {
                    m += R"(,{"type":"tool_use","id":"toolu_)" + std::to_string(++call) +
                         R"(","name":"run_tests","input":{"n":)" + (one_in(20) ? "123456789012345678901234567890" : "1") +
                         "}}";
                    ++pending_;
                }
            }
        }
        if (one_in(300)) m += R"(,{"type":"text","text":"dup","type":"image"})";
        return m + "]}";
    }

    std::string system_ = "You are terse.";  ///< the system text, as JSON string content
    std::size_t marks_ = 0;
    int pending_ = 0;
};

/// One way of breaking a piece of a split request (the chunks' bytes, the joins, the head).
void tamper(Generator& r, std::string& open, std::string& turns, std::string& close, std::vector<std::string>& chunks) {
    std::string& chunk = chunks.empty() ? turns : chunks[r.below(static_cast<std::uint32_t>(chunks.size()))];
    switch (r.below(17)) {
        case 0: if (!chunk.empty()) chunk.erase(r.below(static_cast<std::uint32_t>(chunk.size())), 1); break;
        case 1: chunk.insert(r.below(static_cast<std::uint32_t>(chunk.size() + 1)), "]"); break;
        case 2: chunk += ","; break;
        case 3: chunk.clear(); break;
        case 4: chunk.insert(chunk.find("\"text\":\"") == std::string::npos ? 0 : chunk.find("\"text\":\"") + 8, "\xff"); break;
        case 5: chunk = "[" + chunk + "]"; break;
        case 6: turns += R"(],"other":[)"; break;                    // the chunks would land in another array
        case 7: close = R"(,{"role":"user","content":"late"})" + close; break;  // messages after the chunks
        case 8: close.insert(close.size() - 1, R"(,"messages":[{"role":"user","content":"again"}])"); break;
        case 9: open.replace(open.find("\"messages\""), 10, "\"messag\\u0065s\""); break;
        case 10: open.replace(open.find("\"messages\""), 10, "\"transcript\""); break;
        case 11: turns.clear(); break;
        case 12: chunk += R"(,{"role":"assistant","content":"extra"})"; break;
        case 13: chunk.replace(0, chunk.find(',') == std::string::npos ? 0 : chunk.find(','), R"({"role":"user"})"); break;
        case 14: open.insert(open.size() - 1, " "); break;              // whitespace at a join is still JSON
        case 15:
            chunk += std::string("]\0,x", 4);
            break;  // RapidJSON stops at a NUL (wire.175)
        default: close = "]" + std::string(" ") + close.substr(1); break;
    }
}

struct Outcome {
    std::size_t cases = 0;
    std::size_t refused = 0;
    std::size_t openai_cases = 0;
    std::size_t openai_refused = 0;
    std::size_t head_only = 0;  // audited without reading the chunks again
    std::size_t accepted_with_chunks = 0;
    std::size_t by_pieces = 0;  // accepted from the head, the chunks' summaries and their joins
};

/// Feeds the request, split at random into a first run and chunks, to both audits and compares.
void compare(const Generated& g, Generator& r, bool tampered, Outcome& out) {
    auto [turns, chunk_bytes] = split_at_random(r, g.messages, 10);
    std::string open = g.open;
    std::string close = g.close;
    if (tampered) tamper(r, open, turns, close, chunk_bytes);
    // Kept chunks move with the cache's vectors between calls: their records move with them.
    std::vector<MessageChunk> chunks;
    for (std::string& c : chunk_bytes) chunks.emplace_back(g.family, std::move(c));
    SplitBody split{open, turns, close, {}};
    for (const MessageChunk& c : chunks) split.chunks.push_back(&c);
    const std::string body = split.join();
    OutgoingRequest request;
    request.method = "POST";
    request.path = "/v1/messages";
    request.headers = &kHeaders;
    request.body = body;
    request.readable = body.capacity();
    const auto whole = audit_request(g.family, request, g.plan);
    bool read_whole = true;
    bool checked_all = false;
    const auto split_verdict =
        audit_split_request(g.family, request, split, g.plan, &read_whole, &checked_all);
    ASSERT_EQ(verdict(split_verdict), verdict(whole)) << body;
    // A refusal always comes from the checks over every record, which name the broken rule.
    if (split_verdict) {
        EXPECT_TRUE(checked_all) << body;
    }
    if (!split_verdict && !chunks.empty()) {
        ++out.accepted_with_chunks;
        out.by_pieces += checked_all ? 0 : 1;
    }
    ++out.cases;
    out.refused += whole ? 1 : 0;
    if (g.family == WireFamily::kOpenAIChat) {
        ++out.openai_cases;
        out.openai_refused += whole ? 1 : 0;
    }
    out.head_only += read_whole ? 0 : 1;
}

TEST(SplitAudit, FaithfulSplitRequestsGetTheWholeAuditsVerdict) {
    Outcome out;
    for (std::uint32_t seed = 1; seed <= 400; ++seed) {
        Generator r(seed);
        const Generated g = seed % 4 == 0 ? r.openai() : r.anthropic();
        compare(g, r, false, out);
        if (HasFatalFailure()) return;
    }
    // Both verdicts occur, and the split audit read only the heads of every faithful request.
    EXPECT_GT(out.refused, out.cases / 10);
    EXPECT_LT(out.refused, out.cases * 9 / 10);
    EXPECT_EQ(out.head_only, out.cases);
    EXPECT_GT(out.openai_refused, out.openai_cases / 20);
    EXPECT_LT(out.openai_refused, out.openai_cases * 9 / 10);
    // wire.174: an accepted request is decided without the checks over all its records (the one
    // exception: a final assistant message with empty content, which a piece cannot know is last).
    EXPECT_GT(out.accepted_with_chunks, out.cases / 5);
    EXPECT_GE(out.by_pieces * 100, out.accepted_with_chunks * 97);
}

TEST(SplitAudit, TamperedChunksJoinsAndHeadsGetTheWholeAuditsVerdict) {
    Outcome out;
    for (std::uint32_t seed = 1; seed <= 1500; ++seed) {
        Generator r(seed * 7919U);
        const Generated g = seed % 4 == 0 ? r.openai() : r.anthropic();
        compare(g, r, true, out);
        if (HasFatalFailure()) return;
    }
    EXPECT_GT(out.refused, out.cases / 2);
    EXPECT_GT(out.head_only, out.cases / 10);  // tampers the join checks accept are audited split
    EXPECT_LT(out.head_only, out.cases);       // and those they cannot prove are audited whole
}

// wire.173: a growing conversation keeps its chunks' records between requests; each next request
// reads only its new chunk and reaches the whole audit's verdict, including when a new chunk
// breaks a rule against a kept one (a tool_result that answers no tool_use of the chunk before).
TEST(SplitAudit, AGrowingConversationReusesItsChunksAcrossRequests) {
    const std::string open = R"({"model":"m","max_tokens":100,"messages":[)";
    const std::string close = "]}";
    const std::string first = R"({"role":"user","content":"start"})";
    CallPlan plan;
    plan.max_tokens = 100;
    std::vector<MessageChunk> kept;
    for (int step = 0; step < 40; ++step) {
        const bool use = step % 5 == 3;
        std::string a = R"({"role":"assistant","content":[{"type":"text","text":"a)" + std::to_string(step) + R"("})";
        if (use) a += R"(,{"type":"tool_use","id":"t)" + std::to_string(step) + R"(","name":"x","input":{}})";
        a += "]}";
        const std::string answer = use && step == 18 ? "other" : "t" + std::to_string(step);
        const std::string u = use ? R"({"role":"user","content":[{"type":"tool_result","tool_use_id":")" + answer + R"("}]})"
                                  : R"({"role":"user","content":"u)" + std::to_string(step) + "\"}";
        // Each step's messages come as two chunks: the tool_use and its result are in different ones.
        kept.emplace_back(WireFamily::kAnthropicMessages, a);
        kept.emplace_back(WireFamily::kAnthropicMessages, u);
        SplitBody split{open, first, close, {}};
        for (const MessageChunk& c : kept) split.chunks.push_back(&c);
        const std::string body = split.join();
        const OutgoingRequest request = outgoing(body, "/v1/messages");
        bool read_whole = true;
        bool checked_all = true;
        const auto v = audit_split_request(WireFamily::kAnthropicMessages, request, split, plan,
                                           &read_whole, &checked_all);
        EXPECT_FALSE(read_whole);
        EXPECT_EQ(verdict(v), verdict(audit_request(WireFamily::kAnthropicMessages, request, plan))) << step;
        // Accepted from the kept chunks' summaries and where they meet; refused from every record.
        EXPECT_EQ(checked_all, step >= 18) << step;
        if (step < 18) {
            EXPECT_FALSE(v.has_value()) << step << ": " << verdict(v);
        } else {
            ASSERT_TRUE(v.has_value()) << step;
            // The tool_use of step 18 (message 37, in a kept chunk) is answered by no tool_result of
            // the chunk after it.
            EXPECT_EQ(v->rule, "wire.112");
            EXPECT_EQ(v->where, "messages.37");
        }
    }
}

// wire.173: a body that is not the split's bytes (another size) is audited whole, never judged
// by records of other bytes.
TEST(SplitAudit, ABodyOtherThanTheSplitsIsAuditedWhole) {
    const std::string open = R"({"max_tokens":10,"messages":[)";
    const MessageChunk chunk(WireFamily::kAnthropicMessages, R"({"role":"assistant","content":"ok"})");
    SplitBody split{open, R"({"role":"user","content":"hi"})", "]}", {&chunk}};
    const std::string other = R"({"max_tokens":10,"messages":[{"role":"assistant","content":"first"}]})";
    OutgoingRequest request;
    request.path = "/v1/messages";
    request.headers = &kHeaders;
    request.body = other;
    CallPlan plan;
    plan.max_tokens = 10;
    bool read_whole = false;
    const auto v = audit_split_request(WireFamily::kAnthropicMessages, request, split, plan, &read_whole);
    EXPECT_TRUE(read_whole);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->rule, "wire.107");
    // A moved-from chunk holds nothing: a split that names it is audited whole.
    MessageChunk moved(WireFamily::kAnthropicMessages, R"({"role":"assistant","content":"ok"})");
    const MessageChunk taken(std::move(moved));
    EXPECT_FALSE(moved.readable());  // NOLINT(bugprone-use-after-move): what a moved-from chunk says
    EXPECT_TRUE(moved.wire().empty());
    EXPECT_TRUE(taken.readable());
    // The split's own bytes: read by their head, accepted.
    const std::string body = split.join();
    request.body = body;
    EXPECT_FALSE(audit_split_request(WireFamily::kAnthropicMessages, request, split, plan, &read_whole).has_value());
    EXPECT_FALSE(read_whole);
}

// wire.173: an open that already carries elements of the messages array (OpenAI's system
// message comes before the turns) is read by its head, with the whole audit's verdict; a comma
// outside the array is not a join.
TEST(SplitAudit, AnOpenEndingAfterASystemMessageIsReadByItsHead) {
    const std::string open = R"({"model":"m","max_tokens":10,"messages":[{"role":"system","content":"s"},)";
    const MessageChunk ok(WireFamily::kOpenAIChat, R"({"role":"assistant","content":"a"},{"role":"user","content":"b"})");
    const MessageChunk bad(WireFamily::kOpenAIChat, R"({"role":"system","content":"late"})");
    CallPlan plan;
    plan.max_tokens = 10;
    plan.system_texts = {"s"};
    for (const MessageChunk* chunk : {&ok, &bad}) {
        SplitBody split{open, R"({"role":"user","content":"hi"})", "]}", {chunk}};
        const std::string body = split.join();
        const OutgoingRequest request = outgoing(body, "/v1/chat/completions");
        bool read_whole = true;
        const auto v = audit_split_request(WireFamily::kOpenAIChat, request, split, plan, &read_whole);
        EXPECT_FALSE(read_whole) << body;
        EXPECT_EQ(verdict(v), verdict(audit_request(WireFamily::kOpenAIChat, request, plan))) << body;
        EXPECT_EQ(v.has_value(), chunk == &bad) << body << ": " << verdict(v);
    }
    // The comma of the root object, after a closed messages array, is no join: audited whole.
    SplitBody outside{R"({"messages":[],"model":"m",)", R"("max_tokens":10)", "}", {}};
    const std::string body = outside.join();
    const OutgoingRequest request = outgoing(body, "/v1/chat/completions");
    bool read_whole = false;
    (void)audit_split_request(WireFamily::kOpenAIChat, request, outside, plan, &read_whole);
    EXPECT_TRUE(read_whole);
}

}  // namespace
