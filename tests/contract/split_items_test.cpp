// wire.214: the audit of a split Gemini or OpenAI Responses body (whose turns are `contents` /
// `input` items, read from the parsed body) passes a request by its pieces only when the whole
// audit passes it, and otherwise gives the whole audit's verdict: over generated conversations
// (seeded), faithful and tampered (the chunks' bytes, the joins, the head, and the rules that
// cross a chunk boundary: an output without its call, roles at a join, a missing signature).
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

    /// A Gemini request: user and model contents alternating, tool loops of function calls (the
    /// first with its thoughtSignature) answered by as many function responses.
    Generated gemini() {
        Generated g;
        g.family = WireFamily::kGeminiGenerate;
        g.path = "/v1beta/models/gemini:generateContent";
        g.plan.system_texts = {one_in(15) ? "Another system." : "You are terse."};
        g.plan.max_tokens = 1024;
        g.open =
            R"({"systemInstruction":{"parts":[{"text":"You are terse."}]},"tools":[{"functionDeclarations":[{"name":")" +
            std::string(one_in(20) ? "9bad" : "run") + R"("}]}],"contents":[)";
        g.close = R"(],"generationConfig":{"maxOutputTokens":)" +
                  std::string(one_in(20) ? "1023" : "1024") + "}}";
        const std::uint32_t turns = 1 + below(25);
        for (std::uint32_t t = 0; t < turns; ++t) {
            g.messages.push_back(
                content(one_in(300) ? "model" : "user", R"({"text":")" + text() + "\"}"));
            // A tool loop of a few steps, then the answer (the last turn may end mid-loop).
            for (std::uint32_t step = below(3); step > 0; --step) {
                const std::uint32_t calls = 1 + below(2);
                std::string parts;
                for (std::uint32_t k = 0; k < calls; ++k) {
                    parts +=
                        (k ? "," : "") + std::string(R"({"functionCall":{"name":"run","args":{}})");
                    if (k == 0 && !one_in(t + 1 == turns ? 10 : 4))
                        parts += R"(,"thoughtSignature":"sig")";
                    parts += "}";
                }
                g.messages.push_back(content("model", parts));
                if (t + 1 == turns && step == 1 && one_in(3))
                    return g;  // the call is the last content
                std::string answers;
                const std::uint32_t n = one_in(150) ? calls + 1 : calls;
                for (std::uint32_t k = 0; k < n; ++k)
                    answers += (k ? "," : "") +
                               std::string(R"({"functionResponse":{"name":"run","response":{}}})");
                g.messages.push_back(content("user", answers));
            }
            if (t + 1 < turns || one_in(2))
                g.messages.push_back(content(one_in(300) ? "user" : "model",
                                             one_in(200) ? "" : R"({"text":")" + text() + "\"}"));
        }
        return g;
    }

    /// A Responses request: messages, reasoning items, function calls answered by their outputs.
    Generated responses() {
        Generated g;
        g.family = WireFamily::kOpenAIResponses;
        g.path = "/v1/responses";
        g.plan.system_texts = {one_in(15) ? "Another system." : "You are terse."};
        g.plan.max_tokens = 2048;
        const bool stored = one_in(2);
        g.open = R"({"model":"gpt","instructions":"You are terse.","max_output_tokens":)" +
                 std::string(one_in(20) ? "2047" : "2048") + R"(,"store":)" +
                 (stored ? "true" : "false") + R"(,"tools":[{"type":"function","name":")" +
                 (one_in(20) ? "bad name!" : "run") + R"("}],"input":[)";
        g.close = R"(],"stream":true})";
        const std::uint32_t turns = 1 + below(25);
        int call = 0;
        for (std::uint32_t t = 0; t < turns; ++t) {
            g.messages.push_back(message(one_in(300) ? "critic" : "user"));
            for (std::uint32_t step = below(3); step > 0; --step) {
                g.messages.push_back(
                    R"({"type":"reasoning","id":"rs_)" + std::to_string(t) + R"(","summary":[])" +
                    (one_in(stored ? 2 : 30) ? "" : R"(,"encrypted_content":"enc")") + "}");
                std::vector<int> ids;
                for (std::uint32_t k = 1 + below(2); k > 0; --k) {
                    ids.push_back(++call);
                    g.messages.push_back(R"({"type":"function_call","call_id":"call_)" +
                                         std::to_string(call) +
                                         R"(","name":"run","arguments":"{}"})");
                }
                for (const int id : ids) {
                    if (one_in(150)) continue;  // unanswered (responses.24)
                    g.messages.push_back(R"({"type":"function_call_output","call_id":"call_)" +
                                         std::to_string(one_in(200) ? id + 1000 : id) +
                                         R"(","output":"ok"})");
                }
            }
            if (t + 1 < turns || one_in(2)) g.messages.push_back(message("assistant"));
        }
        return g;
    }

  private:
    static std::string content(const char* role, const std::string& parts) {
        return std::string(R"({"role":")") + role + R"(","parts":[)" + parts + "]}";
    }

    std::string message(const char* role) {
        if (one_in(200))
            return std::string(R"({"type":"message","role":")") + role + "\"}";  // no content
        return std::string(R"({"type":"message","role":")") + role + R"(","content":")" + text() +
               "\"}";
    }

    std::string text() {
        switch (below(40)) {
            case 0:
                return R"(esc \"q\" \u00e9 \\ \n end)";
            case 1:
                return "";
            default:
                return "step " + std::to_string(below(1000)) + " of the build";
        }
    }
};

/// The chunk a tamper breaks: a random one, or the first run when there is none.
std::string& some_chunk(Generator& r, std::string& turns, std::vector<std::string>& chunks) {
    return chunks.empty() ? turns : chunks[r.below(static_cast<std::uint32_t>(chunks.size()))];
}

/// One way of breaking a piece of a split request, the family's own among them.
void tamper(Generator& r, const Generated& g, std::string& open, std::string& turns,
            std::string& close, std::vector<std::string>& chunks) {
    const bool gemini = g.family == WireFamily::kGeminiGenerate;
    const std::string key = gemini ? "\"contents\"" : "\"input\"";
    std::string& chunk = some_chunk(r, turns, chunks);
    std::string& last = chunks.empty() ? turns : chunks.back();
    const auto replace_all = [](std::string& s, const std::string& from, const std::string& to) {
        for (std::size_t at = s.find(from); at != std::string::npos;
             at = s.find(from, at + to.size()))
            s.replace(at, from.size(), to);
    };
    switch (r.below(20)) {
        case 0:
            if (!chunk.empty()) chunk.erase(r.below(static_cast<std::uint32_t>(chunk.size())), 1);
            break;
        case 1:
            chunk.insert(r.below(static_cast<std::uint32_t>(chunk.size() + 1)), "]");
            break;
        case 2:
            chunk += ",";
            break;
        case 3:
            chunk.clear();
            break;
        case 4:
            chunk = "[" + chunk + "]";
            break;
        case 5:
            turns += R"(],"other":[)";
            break;  // the chunks would land in another array
        case 6:
            close = (gemini ? R"(,{"role":"user","parts":[{"text":"late"}]})"
                            : R"(,{"type":"message","role":"user","content":"late"})") +
                    close;
            break;
        case 7:
            open.replace(open.find(key), key.size(),
                         gemini ? "\"content\\u0073\"" : "\"inpu\\u0074\"");
            break;
        case 8:
            turns.clear();
            break;
        case 9:
            chunk += std::string("]\0,x", 4);
            break;  // a NUL is never JSON (wire.175)
        case 10:
            chunk.insert(chunk.find('{') == std::string::npos ? 0 : chunk.find('{') + 1,
                         R"("role":"user",)");
            break;  // a duplicate key
        case 11:
            open.insert(open.size() - 1, " ");
            break;  // whitespace at a join is still JSON
        case 12:
        case 13:
            if (gemini) {  // the roles at a join (or the first content) do not alternate, or a
                           // call follows a call
                chunk.insert(
                    0,
                    r.one_in(3)
                        ? std::string(
                              R"({"role":"user","parts":[{"functionCall":{"name":"run","args":{}}}]},)")
                        : std::string(R"({"role":")") + (r.one_in(2) ? "user" : "model") +
                              R"(","parts":[{"text":"x"}]},)");
            } else {  // an output whose call is in no piece before it
                chunk.insert(0, R"({"type":"function_call_output","call_id":"call_)" +
                                    std::to_string(r.below(60)) + R"(","output":"x"},)");
            }
            break;
        case 14:
        case 15:
            if (gemini) {  // the signature of a call in the current turn
                replace_all(last, "\"thoughtSignature\"", "\"thoughtSignatur\"");
            } else {  // a call answered in no piece after it
                chunk.insert(
                    0,
                    R"({"type":"function_call","call_id":"call_late","name":"run","arguments":"{}"},)");
            }
            break;
        case 16:
            if (gemini) {  // a call answered by one response too many
                replace_all(
                    chunk, R"({"functionResponse")",
                    R"({"functionResponse":{"name":"run","response":{}}},{"functionResponse")");
            } else {  // the outputs of a chunk answer nothing any more
                replace_all(chunk, "\"function_call_output\"", "\"function_call_outpu\"");
            }
            break;
        case 17:  // reasoning without its encrypted content (responses.25 when store is false)
            replace_all(chunk, gemini ? R"("parts":[{"text")" : R"(,"encrypted_content":"enc")",
                        gemini ? R"("parts":[],"x":[{"text")" : "");
            break;
        case 18: {  // a chunk moved after the next
            if (chunks.size() >= 2) {
                const std::size_t i = r.below(static_cast<std::uint32_t>(chunks.size() - 1));
                std::swap(chunks[i], chunks[i + 1]);
            }
            break;
        }
        default:
            close = "]" + std::string(" ") + close.substr(1);
            break;
    }
}

struct Outcome {
    std::size_t cases = 0;
    std::size_t refused = 0;
    std::size_t accepted_with_chunks = 0;
    std::size_t by_pieces = 0;  // accepted without reading the whole body
};

/// Feeds the request, split at random into a first run and chunks, to both audits and compares.
void compare(const Generated& g, Generator& r, bool tampered, Outcome& out) {
    auto [turns, chunk_bytes] = split_at_random(r, g.messages, 8);
    std::string open = g.open;
    std::string close = g.close;
    if (tampered) tamper(r, g, open, turns, close, chunk_bytes);
    std::vector<MessageChunk> chunks;
    for (std::string& c : chunk_bytes) chunks.emplace_back(g.family, std::move(c));
    SplitBody split{open, turns, close, {}};
    for (const MessageChunk& c : chunks) split.chunks.push_back(&c);
    const std::string body = split.join();
    const OutgoingRequest whole_request = outgoing(body, g.path);
    const auto whole = audit_request(g.family, whole_request, g.plan);
    // As the core gives it: the body in pieces, not joined (caching.115).
    OutgoingRequest in_pieces = whole_request;
    in_pieces.body = {};
    in_pieces.readable = 0;
    in_pieces.body_in_pieces = r.one_in(2);
    const OutgoingRequest& request = in_pieces.body_in_pieces ? in_pieces : whole_request;
    bool read_whole = true;
    bool checked_all = true;
    const auto split_verdict =
        audit_split_request(g.family, request, split, g.plan, &read_whole, &checked_all);
    ASSERT_EQ(verdict(split_verdict), verdict(whole)) << body;
    // A refusal always comes from the whole audit; a pass by pieces read the head only.
    if (split_verdict) {
        EXPECT_TRUE(read_whole) << body;
        EXPECT_TRUE(checked_all) << body;
    }
    EXPECT_EQ(read_whole, checked_all) << body;
    if (!split_verdict && !chunks.empty()) {
        ++out.accepted_with_chunks;
        out.by_pieces += read_whole ? 0 : 1;
    }
    ++out.cases;
    out.refused += whole ? 1 : 0;
}

class SplitItems : public ::testing::TestWithParam<WireFamily> {
  protected:
    Generated generate(Generator& r) const {
        return GetParam() == WireFamily::kGeminiGenerate ? r.gemini() : r.responses();
    }
};

TEST_P(SplitItems, FaithfulSplitRequestsGetTheWholeAuditsVerdict) {
    Outcome out;
    for (std::uint32_t seed = 1; seed <= 600; ++seed) {
        Generator r(seed);
        compare(generate(r), r, false, out);
        if (HasFatalFailure()) return;
    }
    // Both verdicts occur; every accepted request with chunks was decided by its pieces.
    EXPECT_GT(out.refused, out.cases / 10);
    EXPECT_LT(out.refused, out.cases * 9 / 10);
    EXPECT_GT(out.accepted_with_chunks, out.cases / 5);
    EXPECT_EQ(out.by_pieces, out.accepted_with_chunks);
}

TEST_P(SplitItems, TamperedChunksJoinsAndHeadsGetTheWholeAuditsVerdict) {
    Outcome out;
    for (std::uint32_t seed = 1; seed <= 2000; ++seed) {
        Generator r(seed * 7919U);
        const Generated g = generate(r);
        compare(g, r, true, out);
        if (HasFatalFailure()) return;
    }
    EXPECT_GT(out.refused, out.cases / 2);
    EXPECT_GT(out.by_pieces, 0U);  // tampers that keep the request valid still pass by pieces
}

// wire.214: a growing conversation keeps its chunks between requests; each next request reads its
// head and takes the kept chunks' summaries (no whole read while it passes), and one whose new
// chunks break a rule against a kept one (Responses: an output for a call answered long before,
// leaving the step's call unanswered; Gemini: two user contents where two chunks meet) is audited
// whole, with the whole audit's verdict.
TEST_P(SplitItems, AGrowingConversationIsDecidedByItsPiecesUntilItBreaks) {
    const bool gemini = GetParam() == WireFamily::kGeminiGenerate;
    const std::string open =
        gemini ? R"({"systemInstruction":{"parts":[{"text":"s"}]},"contents":[)"
               : R"({"model":"m","instructions":"s","max_output_tokens":100,"input":[)";
    const std::string close = gemini ? R"(],"generationConfig":{"maxOutputTokens":100}})" : "]}";
    const std::string first = gemini ? R"({"role":"user","parts":[{"text":"start"}]})"
                                     : R"({"type":"message","role":"user","content":"start"})";
    CallPlan plan;
    plan.max_tokens = 100;
    plan.system_texts = {"s"};
    std::vector<MessageChunk> kept;
    for (int step = 0; step < 40; ++step) {
        const std::string n = std::to_string(step);
        // Each step: the model's call in one chunk, its answer and a question in the next.
        std::string call;
        std::string answer;
        if (gemini) {
            call =
                R"({"role":"model","parts":[{"functionCall":{"name":"run","args":{}},"thoughtSignature":"s)" +
                n + R"("}]})";
            answer =
                std::string(
                    R"({"role":"user","parts":[{"functionResponse":{"name":"run","response":{}}}]},)") +
                R"({"role":"model","parts":[{"text":"a)" + n +
                R"("}]},{"role":"user","parts":[{"text":"q)" + n + R"("}]})";
            if (step == 25)
                call = R"({"role":"user","parts":[{"text":"again"}]})";  // gemini.23 at the join
        } else {
            call = R"({"type":"function_call","call_id":"c)" + n +
                   R"(","name":"run","arguments":"{}"})";
            answer = R"({"type":"function_call_output","call_id":"c)" +
                     std::string(step == 25 ? "3" : n) +
                     R"(","output":"ok"},{"type":"message","role":"user","content":"q)" + n + "\"}";
        }
        kept.emplace_back(GetParam(), call);
        kept.emplace_back(GetParam(), answer);
        SplitBody split{open, first, close, {}};
        for (const MessageChunk& c : kept) split.chunks.push_back(&c);
        const std::string body = split.join();
        const OutgoingRequest request =
            outgoing(body, gemini ? "/v1beta/models/g:generateContent" : "/v1/responses");
        bool read_whole = true;
        bool checked_all = true;
        const auto v =
            audit_split_request(GetParam(), request, split, plan, &read_whole, &checked_all);
        EXPECT_EQ(verdict(v), verdict(audit_request(GetParam(), request, plan))) << step;
        EXPECT_EQ(read_whole, step >= 25) << step;
        EXPECT_EQ(checked_all, step >= 25) << step;
        EXPECT_EQ(v.has_value(), step >= 25) << step << ": " << verdict(v);
        if (v) {
            EXPECT_EQ(v->rule, gemini ? "gemini.23" : "responses.24") << verdict(v);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Families, SplitItems,
                         ::testing::Values(WireFamily::kGeminiGenerate,
                                           WireFamily::kOpenAIResponses),
                         [](const ::testing::TestParamInfo<WireFamily>& info) {
                             return info.param == WireFamily::kGeminiGenerate
                                        ? std::string("Gemini")
                                        : std::string("Responses");
                         });

}  // namespace
