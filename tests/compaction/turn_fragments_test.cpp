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
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "compaction_support.hpp"
#include "dialect_client.hpp"
#include "growing_support.hpp"
#include "llm/request_audit.hpp"
#include "llm/turn_fragments.hpp"
#include "nucleo/conversation.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace nucleo::compaction_test {
namespace {

namespace fs = std::filesystem;

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

/// Every provider request fixture of a dialect (tests/providers/<dialect>/fixtures/encode).
std::vector<fs::path> requests(const std::string& dialect) {
    const std::string suffix = dialect == "openai" ? ".in.json" : ".request.json";
    std::vector<fs::path> out;
    const fs::path dir = fs::path(NUCLEO_SOURCE_DIR) / "tests" / "providers" / dialect / "fixtures" / "encode";
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
        for (std::size_t r = 1; r < runs.size(); ++r)
            body += "," + provider.encode_split(run_request(whole, runs[r].first, runs[r].second, false)).turns;
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
    // caching.113: its audit read only the head and took the chunks' records.
    EXPECT_FALSE(internal::last_audit_read_whole()) << "the audit read the whole body";
    const HttpRequest b = whole.build_request(c, model, {}, true);
    EXPECT_EQ(a.url, b.url);
    EXPECT_EQ(a.headers, b.headers);
    EXPECT_EQ(a.body.size(), b.body.size());
    EXPECT_TRUE(a.body == b.body) << "first difference at byte "
                                  << [&] {
                                         std::size_t i = 0;
                                         while (i < a.body.size() && i < b.body.size() && a.body[i] == b.body[i]) ++i;
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

INSTANTIATE_TEST_SUITE_P(Dialects, TurnFragmentsTest, ::testing::Values("anthropic", "openai", "bedrock"));
INSTANTIATE_TEST_SUITE_P(Dialects, SplitRule, ::testing::Values("anthropic", "openai", "bedrock"));

}  // namespace
}  // namespace nucleo::compaction_test
