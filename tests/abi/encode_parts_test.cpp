// abi.106: ABI 1.3 encode_parts. The in-tree providers write the HTTP request's head and body
// apart, and the body they write is byte for byte the compact "body" of their one-document
// encode on every encode fixture; a provider built against the frozen 1.2 header keeps building
// requests through encode.
#include <gtest/gtest.h>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nucleo/conversation.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace fs = std::filesystem;
using namespace nucleo;

namespace {

const fs::path kGood = fs::path(ABI_FIXTURE_DIR) / "good";

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

/// Every provider request fixture of a dialect (files ending in `suffix`).
std::vector<fs::path> requests(const std::string& dialect, const std::string& suffix) {
    std::vector<fs::path> out;
    const fs::path dir = fs::path(NUCLEO_SOURCE_DIR) / "tests" / "providers" / dialect / "fixtures" / "encode";
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            out.push_back(e.path());
    }
    return out;
}

struct Dialect {
    const char* plugin;
    const char* suffix;
};

class EncodeParts : public ::testing::TestWithParam<Dialect> {};

TEST_P(EncodeParts, BodyBytesAreTheCompactBodyOfEncodeOnEveryFixture) {
    const Plugin plugin = PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load(GetParam().plugin);
    const ProviderInstance provider = plugin.make_provider();
    ASSERT_TRUE(provider.has_encode_parts());
    const auto files = requests(GetParam().plugin, GetParam().suffix);
    ASSERT_GE(files.size(), 4u);
    int encoded = 0;
    for (const fs::path& f : files) {
        SCOPED_TRACE(f.filename().string());
        const std::string request = read_text(f);
        std::string whole;
        std::string whole_error;
        try {
            whole = provider.encode(request);
        } catch (const Error& e) {
            whole_error = e.what();
        }
        if (!whole_error.empty()) {
            // Refused alike, with the same message but for the slot's name.
            try {
                (void)provider.encode_parts(request);
                ADD_FAILURE() << "encode refused it, encode_parts did not";
            } catch (const Error& e) {
                const std::string msg = e.what();
                EXPECT_EQ(msg.substr(msg.find(':')), whole_error.substr(whole_error.find(':')));
            }
            continue;
        }
        const ProviderInstance::EncodedParts parts = provider.encode_parts(request);
        rapidjson::Document doc;
        doc.Parse(whole.data(), whole.size());
        ASSERT_FALSE(doc.HasParseError());
        EXPECT_EQ(parts.body, compact(doc["body"]));
        doc.RemoveMember("body");
        EXPECT_EQ(parts.head, compact(doc));
        ++encoded;
    }
    EXPECT_GT(encoded, 0);
}

INSTANTIATE_TEST_SUITE_P(InTree, EncodeParts,
                         ::testing::Values(Dialect{"anthropic", ".request.json"},
                                           Dialect{"openai", ".in.json"},
                                           Dialect{"bedrock", ".request.json"}),
                         [](const auto& info) { return std::string(info.param.plugin); });

ModelSpec model() {
    ModelSpec m;
    m.id = "frozen-model";
    m.wire_model = "frozen-wire";
    m.max_context_tokens = 100000;
    m.max_output_tokens = 4096;
    m.output_budget = {{OutputSize::kShort, 1024}};
    m.native_tools = true;
    return m;
}

ProviderConfig config(const std::string& plugin) {
    ProviderConfig c;
    c.name = plugin;
    c.plugin = plugin;
    c.base_url = "http://127.0.0.1:9/";
    c.credentials.api_key = "k";
    return c;
}

ConversationContext conversation() {
    ConversationContext c("c-abi", "alice");
    c.put_main_objective("task", "Answer.");
    c.set_output(OutputSize::kShort);
    c.set_depth(Depth::kImmediate);
    c.add_message(Message::outgoing_text("hello"));
    return c;
}

TEST(EncodePartsHost, AFrozen12ProviderStillBuildsItsRequestThroughEncode) {
    const Plugin p = PluginLoader().load((kGood / "nucleo-frozen_1_2.so").string());
    EXPECT_EQ(p.info().abi_minor, 2u);
    ProviderInstance provider = p.make_provider();
    EXPECT_TRUE(provider.has_decode_event());
    EXPECT_FALSE(provider.has_encode_parts());
    EXPECT_FALSE(provider.has_encode_split());  // abi.108: the whole encode path, as before
    EXPECT_THROW((void)provider.encode_parts("{}"), NotImplementedException);
    ProviderClient client(config("frozen_1_2"), provider);
    ConversationContext c = conversation();
    const HttpRequest r = client.build_request(c, model(), {});
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.url, "http://127.0.0.1:9/v1/frozen");
    // The old document's "body" is taken out and written compactly, its escapes resolved.
    EXPECT_EQ(r.body, "{\"model\":\"m\",\"text\":\"caf\xC3\xA9\",\"n\":[1,2]}");
    bool frozen_header = false;
    bool key = false;
    for (const auto& [name, value] : r.headers) {
        frozen_header = frozen_header || (name == "x-frozen" && value == "1.2");
        key = key || (name == "x-api-key" && value == "k");
    }
    EXPECT_TRUE(frozen_header);
    EXPECT_TRUE(key);
}

TEST(EncodePartsHost, AnInTreeProviderRequestCarriesTheBodyEncodePartsWrote) {
    // The host sends the plugin's body bytes as written: the request built by the client is the
    // plugin's own encode_parts output for the same provider request.
    const Plugin p = PluginLoader({NUCLEO_BUILD_PLUGIN_DIR}).load("anthropic");
    ProviderClient client(config("anthropic"), p.make_provider());
    ConversationContext c = conversation();
    ModelSpec m = model();
    m.provider = "anthropic";
    const HttpRequest r = client.build_request(c, m, {});
    EXPECT_EQ(r.url, "http://127.0.0.1:9/v1/messages");
    rapidjson::Document body;
    body.Parse(r.body.data(), r.body.size());
    ASSERT_FALSE(body.HasParseError()) << r.body;
    EXPECT_EQ(compact(body), r.body);  // compact, as the plugin writes it
    EXPECT_STREQ(body["model"].GetString(), "frozen-wire");
    EXPECT_EQ(body["messages"].Size(), 1u);
}

}  // namespace
