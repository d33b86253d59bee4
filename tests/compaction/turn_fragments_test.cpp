// caching.110, abi.108: the per-turn encode cache is invisible. For every in-tree dialect, on the
// compaction fixtures and on seeded generated conversations, each request built with the cache
// (only the runs of turns that changed are encoded) is byte for byte the request encoded whole,
// after every kind of change: an append, a moved cache mark, compaction's rewrite, a tool declared
// after the freeze, a restore. The plugins' encode_split obeys the concatenation rule of abi.108.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "compaction_support.hpp"
#include "conversation/context_internal.hpp"
#include "dialect_client.hpp"
#include "growing_support.hpp"
#include "llm/request_audit.hpp"
#include "llm/turn_fragments.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"
#include "nucleo/response.hpp"

namespace nucleo::compaction_test {
namespace {

namespace fs = std::filesystem;
using internal::TurnFragments;

bool dialect_built(const std::string& plugin) {
    return fs::exists(std::string(NUCLEO_BUILD_PLUGIN_DIR) + "/nucleo-" + plugin + ".so");
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string compact(const rapidjson::Value& v) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return {buf.GetString(), buf.GetSize()};
}

/// Every provider request fixture of a dialect (tests/providers/<dialect>/fixtures/encode); for a
/// dialect without fixture files (Responses, Gemini: their tests build requests inline), the
/// conformance kit's corpus (abi.125), every request of which the kit encodes on every plugin.
std::vector<fs::path> requests(const std::string& dialect) {
    const bool corpus = dialect == "openai-responses" || dialect == "gemini";
    const std::string suffix = corpus                ? ".json"
                               : dialect == "openai" ? ".in.json"
                                                     : ".request.json";
    std::vector<fs::path> out;
    const fs::path dir =
        corpus
            ? fs::path(NUCLEO_SOURCE_DIR) / "cli" / "conformance" / "corpus" / "encode"
            : fs::path(NUCLEO_SOURCE_DIR) / "tests" / "providers" / dialect / "fixtures" / "encode";
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            out.push_back(e.path());
    }
    return out;
}

/// abi.108: the request `whole` cut to the run of turns [first, end): its turns, the anchors among
/// them renumbered, "turn_offset"; without the head, no system blocks, no system or request-level
/// cache mark and "stream" false.
std::string run_request(const rapidjson::Document& whole, rapidjson::SizeType first, rapidjson::SizeType end,
                        bool head) {
    rapidjson::Document d;
    d.CopyFrom(whole, d.GetAllocator());
    auto& a = d.GetAllocator();
    rapidjson::Value& prepared = d["prepared"];
    rapidjson::Value turns(rapidjson::kArrayType);
    for (rapidjson::SizeType t = first; t < end; ++t) turns.PushBack(rapidjson::Value(prepared["turns"][t], a), a);
    prepared["turns"] = turns;
    std::uint64_t marks = 0;
    if (prepared.HasMember("cache_plan") && prepared["cache_plan"].IsObject()) {
        rapidjson::Value& plan = prepared["cache_plan"];
        rapidjson::Value anchors(rapidjson::kArrayType);
        if (plan.HasMember("turn_anchors") && plan["turn_anchors"].IsArray()) {
            for (const auto& anchor : plan["turn_anchors"].GetArray()) {
                const std::uint64_t t = anchor["turn"].GetUint64();
                if (t < first || t >= end) continue;
                rapidjson::Value moved(anchor, a);
                moved["turn"].SetUint64(t - first);
                anchors.PushBack(moved, a);
                ++marks;
            }
            plan["turn_anchors"] = anchors;
        }
        const bool system = plan.HasMember("system_block") && !plan["system_block"].IsNull();
        const bool automatic = plan.HasMember("automatic") && plan["automatic"].IsTrue();
        if (head) {
            marks += (system ? 1 : 0) + (automatic ? 1 : 0);
        } else {
            if (plan.HasMember("system_block")) plan["system_block"].SetNull();
            plan.RemoveMember("automatic");
            plan.RemoveMember("system_ttl");
        }
        if (plan.HasMember("breakpoints")) plan["breakpoints"].SetUint64(marks);
    }
    if (!head) {
        if (prepared.HasMember("system_blocks")) prepared["system_blocks"].SetArray();
        if (d.HasMember("stream")) d["stream"].SetBool(false);
    }
    d.RemoveMember("turn_offset");
    d.AddMember("turn_offset", rapidjson::Value(static_cast<std::uint64_t>(first)), a);
    return compact(d);
}

class SplitRule : public ::testing::TestWithParam<const char*> {};

TEST_P(SplitRule, SplitRunsConcatenateToTheWholeBodyOnEveryFixture) {
    ASSERT_TRUE(dialect_built(GetParam())) << "the dialect's plugin is not built";
    const Plugin plugin = PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load(GetParam());
    const ProviderInstance provider = plugin.make_provider();
    ASSERT_TRUE(provider.has_encode_split());
    ASSERT_NE(provider.capabilities().find("\"turn_fragments\":true"), std::string::npos);
    int split = 0;
    for (const fs::path& f : requests(GetParam())) {
        SCOPED_TRACE(f.filename().string());
        const std::string request = read_text(f);
        ProviderInstance::EncodedParts parts;
        try {
            parts = provider.encode_parts(request);
        } catch (const Error&) {
            continue;  // refused whole: the host never takes the split path's bytes then
        }
        rapidjson::Document whole;
        whole.Parse(request.data(), request.size());
        ASSERT_FALSE(whole.HasParseError());
        const rapidjson::Value& turns = whole["prepared"]["turns"];
        std::vector<std::pair<rapidjson::SizeType, rapidjson::SizeType>> runs;
        for (rapidjson::SizeType i = 0; i < turns.Size();) {
            rapidjson::SizeType end = i + 1;
            while (end < turns.Size() && std::string(turns[end]["role"].GetString()) == turns[i]["role"].GetString())
                ++end;
            runs.emplace_back(i, end);
            i = end;
        }
        ASSERT_FALSE(runs.empty());
        const auto frame = provider.encode_split(run_request(whole, 0, runs[0].second, true));
        EXPECT_EQ(frame.head, parts.head);
        std::string body = frame.open + frame.turns;
        bool refused = false;
        for (std::size_t r = 1; r < runs.size() && !refused; ++r) {
            try {
                body +=
                    "," +
                    provider.encode_split(run_request(whole, runs[r].first, runs[r].second, false))
                        .turns;
            } catch (const Error&) {
                // gemini.15: a run whose tool result answers a call of an earlier run is refused
                // alone (the function's name is in the call); the host then encodes whole.
                EXPECT_EQ(std::string(GetParam()), "gemini") << "run " << r << " was refused alone";
                refused = true;
            }
        }
        if (refused) {
            // abi.108: the runs after the first in one request, as the core's chunks are, keep
            // each result with its call and give the same body.
            const auto rest =
                provider.encode_split(run_request(whole, runs[1].first, turns.Size(), false));
            body = frame.open + frame.turns + "," + rest.turns;
        }
        body += frame.close;
        EXPECT_EQ(body, parts.body);
        // The split of the whole request is the same body cut in three.
        const auto all = provider.encode_split(request);
        EXPECT_EQ(all.open + all.turns + all.close, parts.body);
        ++split;
    }
    EXPECT_GT(split, 0);
}

/// The cached and the whole encode of the same conversation, compared byte for byte; returns the
/// body so a caller can check it moved on.
std::string expect_same(ProviderClient& cached, ProviderClient& whole, ConversationContext& c) {
    const ModelSpec model = model_for_test();
    const HttpRequest a = cached.build_request(c, model, {}, true);
    // The cached request went through encode_split: the conversation keeps its runs.
    const internal::TurnFragments* kept = internal::TurnFragmentsAccess::peek(c);
    EXPECT_TRUE(kept != nullptr && !kept->dialects.empty() && !kept->dialects.front().context.empty())
        << "the request was not built through encode_split";
    // caching.113: its audit read only the head and took the chunks' records (Gemini's contents
    // and the Responses API's input items too, wire.214).
    EXPECT_FALSE(internal::last_audit_read_whole()) << "the audit read the whole body";
    const HttpRequest b = whole.build_request(c, model, {}, true);
    EXPECT_EQ(a.url, b.url);
    EXPECT_EQ(a.headers, b.headers);
    EXPECT_EQ(a.body.size(), b.body.size());
    EXPECT_TRUE(a.body == b.body) << "first difference at byte "
                                  << [&] {
                                         std::size_t i = 0;
                                         while (i < a.body.size() && i < b.body.size() &&
                                                a.body.view()[i] == b.body.view()[i])
                                             ++i;
                                         return i;
                                     }();
    return a.body;
}

class TurnFragmentsTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TurnFragmentsTest, CachedRequestsEqualWholeEncodesOnTheFixtures) {
    ASSERT_TRUE(dialect_built(GetParam())) << "the dialect's plugin is not built";
    ProviderClient cached = client_of(GetParam(), true);
    ProviderClient whole = client_of(GetParam(), false);
    std::vector<ConversationContext> fixtures{light_fixture(), moderate_fixture(), aggressive_fixture(60),
                                              parallel_fixture()};
    for (ConversationContext& c : fixtures) {
        SCOPED_TRACE(c.conversation_id());
        expect_same(cached, whole, c);
        // Append a question: the cached runs are reused and the new one encoded.
        c.add_message(Message::outgoing_text("And the next step?"));
        const std::string grown = expect_same(cached, whole, c);
        c.add_message(Message::incoming_text("The next step is the linker."));
        EXPECT_NE(expect_same(cached, whole, c), grown);
    }
}

TEST_P(TurnFragmentsTest, CachedRequestsEqualWholeEncodesAfterEveryKindOfChange) {
    ASSERT_TRUE(dialect_built(GetParam())) << "the dialect's plugin is not built";
    constexpr int kSeeds = 24;
    for (int seed = 1; seed <= kSeeds; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        ProviderClient cached = client_of(GetParam(), true);
        ProviderClient whole = client_of(GetParam(), false);
        Grower grow(static_cast<std::uint64_t>(seed));
        ConversationContext c = base("generated-" + std::to_string(seed));
        if (seed % 3 == 0) c.set_cache_policy(CachePolicy::kSliding);  // the marks move with the tail
        Message first = Message::outgoing_text("Fix the build, please.");
        c.add_message(first);
        for (int step = 0; step < 90; ++step) {
            grow.step(c);
            const int change = grow.pick(20);
            if (change == 0) compact_half(c);
            if (change == 1) {
                c.add_tool(ToolDefinitionBlock{"late_tool_" + std::to_string(step), "A tool declared late.",
                                               R"({"type":"object","properties":{}})"});
            }
            if (change == 2) c = ConversationContext::from_parts(c.parts());  // a restore
            if (change == 3) c.artifacts().register_artifact("note" + std::to_string(step), R"({"n":1})");
            expect_same(cached, whole, c);
            if (::testing::Test::HasFailure()) return;  // the first failing step is the report
        }
    }
}

/// An answer contract (tools.20) whose text depends on the call's thinking flag.
class ShapeHandler final : public ResponseHandler {
  public:
    [[nodiscard]] bool uses_schema_notation() const override { return false; }
    [[nodiscard]] std::string response_instructions(bool native, bool thinking) const override {
        return std::string("Answer as JSON") + (native ? "" : " with tool_calls") + (thinking ? "." : " now.");
    }
};

/// A model whose context takes thousands of messages (the requests are built, never sent).
ModelSpec roomy() {
    ModelSpec m = model_for_test();
    m.max_context_tokens = 10'000'000;
    return m;
}

/// base() without the registered artifact: no registry turn until one is registered.
ConversationContext bare(const std::string& id) {
    ConversationContext c(id, "alice");
    c.put_main_objective("task", "You fix build failures in the repository.");
    c.add_tool(ToolDefinitionBlock{"read_file", "Reads a file.",
                                   R"({"type":"object","properties":{"path":{"type":"string"}}})"});
    c.set_output(OutputSize::kShort);
    c.set_depth(Depth::kImmediate);
    return c;
}

/// The cached request of `c`, the whole encode of `c` and the cached encode of a cold copy of
/// `c` (which keeps nothing), byte for byte.
void expect_same_as_cold(ProviderClient& cached, ProviderClient& whole, ConversationContext& c) {
    const ModelSpec model = roomy();
    const std::string warm = cached.build_request(c, model, {}, true).body;
    ConversationContext copy = c;
    const std::string cold = cached.build_request(copy, model, {}, true).body;
    const std::string all = whole.build_request(c, model, {}, true).body;
    EXPECT_TRUE(warm == all) << "the cached request differs from the whole encode";
    EXPECT_TRUE(cold == all) << "the cold cached request differs from the whole encode";
}

/// caching.114 (with caching.110-111, caching.105): a growing conversation whose cache anchors
/// move with the tail (kSliding) or stay on the marked turns (the default policy), grown by a
/// script that appends to the last run (a user turn after a user turn, an answer after an answer),
/// adds answer contracts, makes the artifact registry appear and change, and renews the epoch
/// (compaction, a restore): every request equals the whole encode and the cold one.
class GrowingLayout : public ::testing::TestWithParam<std::tuple<const char*, bool>> {};

TEST_P(GrowingLayout, EveryRequestEqualsTheWholeAndTheColdEncode) {
    const auto [plugin, sliding] = GetParam();
    ASSERT_TRUE(dialect_built(plugin)) << "the dialect's plugin is not built";
    ProviderClient cached = client_of(plugin, true);
    ProviderClient whole = client_of(plugin, false);
    ConversationContext c = bare(std::string("layout-") + plugin);
    if (sliding) c.set_cache_policy(CachePolicy::kSliding);
    c.add_message(Message::outgoing_text("Fix the build, please."));
    std::size_t anchor_moves = 0;
    std::size_t reused = 0;
    std::vector<CacheAnchor> last_anchors;
    int n = 0;
    for (int step = 0; step < 260; ++step) {
        SCOPED_TRACE("step " + std::to_string(step));
        const std::string k = std::to_string(++n);
        const bool user_last = c.messages().back().outgoing();
        switch (step % 13) {
            case 0:
            case 5:
            case 9:
                // A user turn: after an answer a new run, after a user turn the last run grows.
                {
                    Message m = Message::outgoing_text("Question " + k + ": " + prose(1, n));
                    m.cache = step % 3 == 0;
                    c.add_message(std::move(m));
                }
                break;
            case 1:
            case 6:
                c.add_message(Message::incoming_text("Answer " + k + ": " + prose(1, n + 3)));
                break;
            case 2:
                // An answer after an answer: the assistant run grows.
                c.add_message(Message::incoming_text("Answer " + k + ": " + prose(1, n + 5)));
                c.add_message(Message::incoming_text("And more " + k + ": " + prose(1, n + 6)));
                break;
            case 3:
                if (user_last) {
                    const std::vector<std::string> ids{"call_" + k + "a", "call_" + k + "b"};
                    c.add_message(tool_call("tc" + k, ids));
                    c.add_message(tool_results("tr" + k, ids, 1, n));
                }
                break;
            case 4:
            case 10: {
                // An answer contract on the new last user turn, once after an answer and once
                // after another user turn.
                Message m = Message::outgoing_text("Reply in the shape asked, " + k + ".");
                m.response_handler = std::make_shared<ShapeHandler>();
                m.cache = step % 2 == 0;
                c.add_message(std::move(m));
                break;
            }
            case 7:
                // The registry appears, then changes.
                if (step % 4 == 3) c.artifacts().register_artifact("note" + k, R"({"n":1})");
                break;
            case 8: c.add_message(Message::incoming_text("Noted " + k + ".")); break;
            case 11:
                if (step % 5 == 1) compact_half(c);
                if (step % 5 == 3) {
                    c = ConversationContext::from_parts(c.parts());  // a restore
                    if (sliding) c.set_cache_policy(CachePolicy::kSliding);  // the thinker's to give again
                }
                break;
            default: c.add_message(Message::incoming_text("Done " + k + ".")); break;
        }
        expect_same_as_cold(cached, whole, c);
        const internal::KeptPrepare* kept = internal::PreparedAccess::peek(c);
        ASSERT_NE(kept, nullptr);
        if (kept->prepared.cache_plan.turn_anchors != last_anchors) ++anchor_moves;
        reused += internal::TurnFragmentsAccess::peek(c)->dialects.front().work.chunks_reused;
        last_anchors = kept->prepared.cache_plan.turn_anchors;
        if (::testing::Test::HasFailure()) return;  // the first failing step is the report
    }
    EXPECT_GT(c.messages().size(), 2 * TurnFragments::kRunsPerChunk) << "too short to keep chunks";
    EXPECT_GT(reused, 100U) << "no kept chunk was reused";
    // OpenAI takes no marks (caching.6), nor does Gemini (gemini.7); elsewhere, the Responses
    // API included (caching.133), the sliding anchors follow the tail.
    const std::string name = plugin;
    if (sliding && name != "openai" && name != "gemini") {
        EXPECT_GT(anchor_moves, 40U) << "the anchors did not move";
    }
}

INSTANTIATE_TEST_SUITE_P(Dialects, GrowingLayout,
                         ::testing::Combine(::testing::Values("anthropic", "openai", "bedrock",
                                                              "openai-responses", "gemini"),
                                            ::testing::Bool()));

/// What one request after one appended turn walked, on a conversation of `messages` alternating
/// messages (each its own run) rendered once before.
struct TwoAppends {
    internal::TurnFragments::Work new_run;   ///< after a question appended after an answer
    internal::TurnFragments::Work same_run;  ///< after a second question (the last run grows)
};

TwoAppends work_of_appends(const std::string& plugin, std::size_t messages, bool sliding) {
    ProviderClient cached = client_of(plugin, true);
    ProviderClient whole = client_of(plugin, false);
    ConversationContext c = base("work-" + std::to_string(messages));
    if (sliding) c.set_cache_policy(CachePolicy::kSliding);
    for (std::size_t i = 0; i < messages; ++i) {
        const std::string k = std::to_string(i);
        Message m = i % 2 == 0 ? Message::outgoing_text("Question " + k + ".") : Message::incoming_text("Answer " + k + ".");
        m.cache = i % 40 == 2;  // the default policy anchors on the first marked turns
        c.add_message(std::move(m));
    }
    const ModelSpec model = roomy();
    (void)cached.build_request(c, model, {}, true);  // cold
    const auto work = [&] {
        const std::string body = cached.build_request(c, model, {}, true).body;
        // wire.174, wire.214: its audit read the head and took the chunks' summaries.
        EXPECT_FALSE(internal::last_audit_read_whole()) << "the audit read the whole body";
        EXPECT_TRUE(body == whole.build_request(c, model, {}, true).body);
        return internal::TurnFragmentsAccess::peek(c)->dialects.front().work;
    };
    TwoAppends out;
    c.add_message(Message::outgoing_text("One more question."));  // after an answer
    out.new_run = work();
    c.add_message(Message::outgoing_text("And one after it."));  // after a question
    out.same_run = work();
    return out;
}

/// caching.114: one appended turn costs the same reads at 2,000 messages as at 208 (sizes with the
/// same place in their last chunk, 2,000 - 208 being 56 chunks of 32 runs): the turns whose role
/// or keepability is read and the keys built do not grow with the conversation; the kept chunks
/// are taken as they are, and the audit reads no whole body (wire.174, wire.214).
TEST_P(TurnFragmentsTest, OneAppendReadsAsMuchAt2000MessagesAsAt208) {
    ASSERT_TRUE(dialect_built(GetParam())) << "the dialect's plugin is not built";
    static_assert((2000 - 208) % TurnFragments::kRunsPerChunk == 0);
    for (const bool sliding : {false, true}) {
        SCOPED_TRACE(sliding ? "sliding" : "marked turns");
        const TwoAppends small = work_of_appends(GetParam(), 208, sliding);
        const TwoAppends large = work_of_appends(GetParam(), 2000, sliding);
        for (const auto& [a, b] : {std::pair{small.new_run, large.new_run}, std::pair{small.same_run, large.same_run}}) {
            EXPECT_EQ(a.turns_visited, b.turns_visited);
            EXPECT_EQ(a.chunks_built, b.chunks_built);
            EXPECT_LE(a.turns_visited, 4 * TurnFragments::kRunsPerChunk);
            EXPECT_LE(a.chunks_built, TurnFragments::kVolatileChunks);
            EXPECT_GT(b.chunks_reused, a.chunks_reused);  // the rest is reused
        }
    }
}

// responses.15, gemini.15: the Responses and Gemini dialects keep the promise too.
INSTANTIATE_TEST_SUITE_P(Dialects, TurnFragmentsTest,
                         ::testing::Values("anthropic", "openai", "bedrock", "openai-responses",
                                           "gemini"));
INSTANTIATE_TEST_SUITE_P(Dialects, SplitRule,
                         ::testing::Values("anthropic", "openai", "bedrock", "openai-responses",
                                           "gemini"));

}  // namespace
}  // namespace nucleo::compaction_test
