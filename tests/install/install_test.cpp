// `cmake --install` installs headers, library, plugins, the command and a CMake package, so
// find_package(nucleo) works for an out-of-tree host application and an out-of-tree plugin: the
// suite builds examples/c-summarizer out of tree against the installed package, loads it, calls
// it. abi.24: a provider plugin written in plain C against plugin-api/ only, built out of tree
// and run by the test suite: examples/c-provider, built the same way, loaded by
// PluginLoader and driven through ProviderClient against nucleo-emulator.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "emulator_client.hpp"
#include "error_of.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/provider_client.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kWork = NUCLEO_INSTALL_TEST_DIR;
const fs::path kPrefix = kWork / "prefix";

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string q(const fs::path& p) {
    return "'" + p.string() + "'";
}

/// Runs a shell command with its output in `log`; returns the exit status.
int run(const std::string& cmd, const fs::path& log) {
    const int raw = std::system((cmd + " >" + q(log) + " 2>&1").c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

/// Configures and builds an out-of-tree CMake project against the installed prefix.
void build_out_of_tree(const fs::path& source, const fs::path& build, const std::string& lang) {
    const std::string cmake = q(NUCLEO_CMAKE_COMMAND);
    std::string flags = NUCLEO_SANITIZE_FLAGS;
    std::string configure = cmake + " -S " + q(source) + " -B " + q(build) + " -G '" +
                            NUCLEO_CMAKE_GENERATOR + "' -DCMAKE_BUILD_TYPE=Debug" +
                            " -DCMAKE_PREFIX_PATH=" + q(kPrefix) +
                            " -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF";
    if (lang == "C") {
        configure += " -DCMAKE_C_COMPILER=" + q(NUCLEO_C_COMPILER);
        if (!flags.empty()) configure += " '-DCMAKE_C_FLAGS=" + flags + "'";
    } else {
        configure += " -DCMAKE_CXX_COMPILER=" + q(NUCLEO_CXX_COMPILER);
        if (!flags.empty()) configure += " '-DCMAKE_CXX_FLAGS=" + flags + "'";
    }
    const fs::path log = build.string() + ".log";
    ASSERT_EQ(run(configure, log), 0) << configure << "\n" << slurp(log);
    ASSERT_EQ(run(cmake + " --build " + q(build), log), 0) << slurp(log);
}

class Install : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        fs::remove_all(kWork);
        fs::create_directories(kWork);
        const fs::path log = kWork / "install.log";
        install_status_ = run(q(NUCLEO_CMAKE_COMMAND) + " --install " + q(NUCLEO_BINARY_DIR) +
                                  " --prefix " + q(kPrefix),
                              log);
        install_log_ = slurp(log);
    }
    // `cmake --install` needs every installed target built: run this after a full build.
    void SetUp() override {
        ASSERT_EQ(install_status_, 0) << "cmake --install failed (is the whole build done?)\n"
                                      << install_log_;
    }

    static inline int install_status_ = -1;
    static inline std::string install_log_;
};

TEST_F(Install, InstallsHeadersLibraryCommandPackageAndPlugins) {
    EXPECT_TRUE(fs::exists(kPrefix / "include/nucleo/plugin.h"));
    EXPECT_TRUE(fs::exists(kPrefix / "include/nucleo/plugin.hpp"));
    EXPECT_TRUE(fs::exists(kPrefix / "include/nucleo/plugins.hpp"));
    EXPECT_TRUE(fs::exists(kPrefix / "bin/nucleo"));
    // The emulator is a product of its own (emulator/), installed beside the command.
    EXPECT_TRUE(fs::exists(kPrefix / "bin/nucleo-emulator"));
    bool lib = false, config = false, extractive = false;
    for (const auto& e : fs::recursive_directory_iterator(kPrefix)) {
        const std::string name = e.path().filename().string();
        lib = lib || name == "libnucleo.so";
        config = config || name == "nucleoConfig.cmake";
        extractive = extractive || name == "nucleo-extractive.so";
    }
    EXPECT_TRUE(lib);
    EXPECT_TRUE(config);
    EXPECT_TRUE(extractive);
    // Tests' fixture plugins are never installed.
    EXPECT_FALSE(fs::exists(kPrefix / "lib/nucleo/plugins/nucleo-c11.so"));
}

TEST_F(Install, TheCommandReadsTheConfigOfItsOwnPrefix) {
    // Installed to a prefix other than the configured one: with no --config, no NUCLEO_CONFIG and
    // no ./config/nucleo.yaml, the config read is the one installed beside the library.
    const fs::path out = kWork / "models.json";
    const std::string cmd = "cd " + q(kWork) + " && env -u NUCLEO_CONFIG " + q(kPrefix / "bin/nucleo") +
                            " models --json >" + q(out) + " 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(out);
    const std::string json = slurp(out);
    const fs::path expected = kPrefix / "share/nucleo/nucleo.yaml";
    EXPECT_NE(json.find("\"config\":\"" + expected.string() + "\""), std::string::npos) << json;
}

TEST_F(Install, AMovedInstallReadsItsOwnConfigAndLoadsItsOwnPlugins) {
    // abi.113: the install copied to another folder: its command finds its libnucleo, the config
    // beside it and the plugins beside it; every plugin it lists and every plugin the shipped
    // config names resolve inside the moved folder, none in the prefix it was installed to.
    const fs::path moved = kWork / "moved";
    fs::remove_all(moved);
    fs::copy(kPrefix, moved, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    const fs::path out = kWork / "moved-plugins.json";
    const std::string env = "cd " + q(kWork) + " && env -u NUCLEO_CONFIG -u NUCLEO_PLUGIN_PATH ";
    std::string cmd = env + q(moved / "bin/nucleo") + " plugins --json >" + q(out) + " 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(out);
    const std::string json = slurp(out);
    rapidjson::Document d;
    d.Parse(json.c_str());
    ASSERT_TRUE(d.IsObject() && d.HasMember("plugins")) << json;
    ASSERT_GT(d["plugins"].Size(), 0u) << json;
    for (const auto& p : d["plugins"].GetArray()) {
        const std::string file = p["file"].GetString();
        EXPECT_EQ(file.rfind((moved / "lib").string(), 0), 0u) << file;
    }
    // The shipped config, found beside the moved library, checks whole against those plugins.
    cmd = env + q(moved / "bin/nucleo") + " config --check >" + q(out) + " 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(out);
    EXPECT_NE(slurp(out).find((moved / "share/nucleo/nucleo.yaml").string() + ": ok, "),
              std::string::npos)
        << slurp(out);
    fs::remove_all(moved);
}

TEST_F(Install, OutOfTreeCPluginBuildsLoadsAndKeepsTheFirstSentenceOfEachSegment) {
    const fs::path build = kWork / "c-summarizer";
    ASSERT_NO_FATAL_FAILURE(
        build_out_of_tree(fs::path(NUCLEO_SOURCE_DIR) / "examples/c-summarizer", build, "C"));
    const fs::path so = build / "nucleo-c-summarizer.so";
    ASSERT_TRUE(fs::exists(so));
    const nucleo::Plugin plugin = nucleo::PluginLoader().load(so.string());
    EXPECT_EQ(plugin.info().name, "c-summarizer");
    EXPECT_EQ(plugin.info().factories, std::vector<std::string>{"nucleo.summarizer/1"});
    const auto s = plugin.make_summarizer();
    EXPECT_EQ(s.summarize(R"({"schema_version":1,"segments":[)"
                          R"("The build failed. Nobody knows why.",)"
                          R"("  We chose \"PostgreSQL\"! It scales.",)"
                          R"("No sentence end here"]})"),
              R"({"schema_version":1,"summary":"The build failed. We chose \"PostgreSQL\"! )"
              R"(No sentence end here","segments":["The build failed.","We chose \"PostgreSQL\"!",)"
              R"("No sentence end here"],"summary_tokens":16})");
    EXPECT_EQ(s.summarize(R"({"text":"Version 1.2 shipped. Then 1.3.","target_tokens":9})"),
              R"({"schema_version":1,"summary":"Version 1.2 shipped.","segments":)"
              R"(["Version 1.2 shipped."],"summary_tokens":5})");
    try {
        (void)s.summarize(R"({"segments":[1,2]})");
        FAIL();
    } catch (const nucleo::Error& e) {
        EXPECT_EQ(e.kind(), nucleo::ErrorKind::kInvalidArgument);
    }
}

TEST_F(Install, OutOfTreeHostApplicationLinksTheInstalledLibrary) {
    const fs::path build = kWork / "host_app";
    ASSERT_NO_FATAL_FAILURE(
        build_out_of_tree(fs::path(NUCLEO_SOURCE_DIR) / "tests/install/host_app", build, "CXX"));
    // The installed extractive plugin, found by name in the installed plugin folder next to the
    // installed libnucleo (the build tree's folder is not searched by an installed library).
    const fs::path log = kWork / "host_app.run.log";
    const std::string cmd = "env -u NUCLEO_PLUGIN_PATH " + q(build / "host_app") +
                            " extractive '{\"target_tokens\":50,\"text\":\"Hi. Error 7 in a.c.\"}'";
    ASSERT_EQ(run(cmd, log), 0) << slurp(log);
    const std::string out = slurp(log);
    EXPECT_NE(out.find("loaded extractive"), std::string::npos) << out;
    // "Hi." has fewer than three letters, so the summarizer never keeps it (compaction.113).
    EXPECT_NE(out.find(R"("summary":"Error 7 in a.c.")"), std::string::npos) << out;
}

// ---- examples/host-agent: a C++ host running a two-tool agent ---------------------------------

TEST_F(Install, OutOfTreeHostAgentCallsBothToolsAndAnswers) {
    const fs::path build = kWork / "host-agent";
    ASSERT_NO_FATAL_FAILURE(
        build_out_of_tree(fs::path(NUCLEO_SOURCE_DIR) / "examples/host-agent", build, "CXX"));
    nucleo::emulator_test::EmulatorProcess emulator;
    const std::string url = "http://127.0.0.1:" + std::to_string(emulator.port());
    // The provider given both ways the example takes it: a base URL, and a nucleo.yaml whose
    // catalog names the model (the installed plugin folder is found by the installed library).
    const fs::path yaml = kWork / "host-agent.yaml";
    std::ofstream(yaml) << "providers:\n"
                           "  emu: {plugin: anthropic, base_url: \"" << url << "\", api_key: sk-test}\n"
                           "models:\n"
                           "  - id: emu-sonnet\n"
                           "    provider: emu\n"
                           "    wire_model: claude-sonnet-5-5\n"
                           "    grade: LARGE\n"
                           "    max_context_tokens: 200000\n"
                           "    max_output_tokens: 4096\n"
                           "    output_budget: {SHORT: 1024, MEDIUM: 2048, LONG: 4096, EXTENDED: 4096}\n"
                           "    native_tools: true\n"
                           "    prices: {input: 3.0, output: 15.0}\n";
    for (const std::string& provider :
         {"--base-url " + url + " --api-key sk-test", "--config " + q(yaml) + " --model emu-sonnet"}) {
        SCOPED_TRACE(provider);
        // The emulator's scripting: two tool rounds, each calling the next declared tool, so the
        // model asks for the calculator, then the notebook, then answers.
        const fs::path log = kWork / "host-agent.run.log";
        const std::string cmd = "env -u NUCLEO_PLUGIN_PATH " + q(build / "host-agent") + " " +
                                provider +
                                " --header 'x-emulator-fault:tool-rounds=2,tool-cycle'"
                                " 'What is 6 times 7? Keep the result in a note.'";
        ASSERT_EQ(run(cmd, log), 0) << slurp(log);
        const std::string out = slurp(log);
        // The emulator fills the schema: a=1, b=1, the enum's first constant; the second call
        // answers a turn that holds only the tool result, so its string is the emulator's default
        // word.
        EXPECT_NE(out.find(R"(tool calculate {"a":1.0,"b":1.0,"op":"add"} -> 2)"), std::string::npos)
            << out;
        EXPECT_NE(out.find(R"(tool save_note {"text":"emulator"} -> saved note 1: emulator)"),
                  std::string::npos)
            << out;
        EXPECT_NE(out.find("answer: The tool save_note returned: saved note 1: emulator"),
                  std::string::npos)
            << out;
        EXPECT_NE(out.find("rounds 3, tool calls 2, notes 1"), std::string::npos) << out;
    }
}

// ---- examples/otlp-export: every call as OpenTelemetry spans over OTLP/HTTP JSON --------------

rapidjson::Document parse_json(const std::string& text);

/// A loopback HTTP server standing in for an OpenTelemetry collector: it keeps each request's
/// head and body and answers 200 with `{}`.
class LoopbackCollector {
  public:
    struct Request {
        std::string head;
        std::string body;
    };

    LoopbackCollector() {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 8) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            ADD_FAILURE() << "the loopback collector cannot listen";
            return;
        }
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~LoopbackCollector() {
        ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
        if (thread_.joinable()) thread_.join();
        ::close(fd_);
    }
    LoopbackCollector(const LoopbackCollector&) = delete;
    LoopbackCollector& operator=(const LoopbackCollector&) = delete;

    [[nodiscard]] int port() const { return port_; }
    [[nodiscard]] std::vector<Request> requests() {
        std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }

  private:
    void serve() {
        while (true) {
            const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0) return;
            Request r;
            std::string data;
            char buf[4096];
            std::size_t need = std::string::npos;
            while (need == std::string::npos || data.size() < need) {
                const ssize_t n = ::recv(client, buf, sizeof buf, 0);
                if (n <= 0) break;
                data.append(buf, static_cast<std::size_t>(n));
                const auto end = data.find("\r\n\r\n");
                if (need == std::string::npos && end != std::string::npos) {
                    r.head = data.substr(0, end);
                    std::string lower = r.head;
                    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                    const auto cl = lower.find("content-length:");
                    need = end + 4 + (cl == std::string::npos ? 0 : std::stoul(lower.substr(cl + 15)));
                }
            }
            if (need != std::string::npos) r.body = data.substr(r.head.size() + 4);
            const std::string answer =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                "Connection: close\r\n\r\n{}";
            (void)!::send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
            ::close(client);
            std::lock_guard<std::mutex> lock(mutex_);
            requests_.push_back(std::move(r));
        }
    }

    int fd_ = -1;
    int port_ = 0;
    std::thread thread_;
    std::mutex mutex_;
    std::vector<Request> requests_;
};

/// The OTLP attribute `key` of a span: its value object, or nullptr.
const rapidjson::Value* otlp_attribute(const rapidjson::Value& span, const char* key) {
    for (const auto& a : span["attributes"].GetArray())
        if (std::string(a["key"].GetString()) == key) return &a["value"];
    return nullptr;
}

bool lower_hex(const std::string& s, std::size_t size) {
    return s.size() == size && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// obs.101-obs.103: a host forwards the records as spans; the collector receives OTLP/HTTP JSON
// in the shape the OTLP specification gives (resourceSpans > scopeSpans > spans, ids in hex,
// 64-bit integers as strings), one span for the call and a child span per HTTP attempt.
TEST_F(Install, OutOfTreeOtlpExportForwardsEveryCallAsSpans) {
    const fs::path build = kWork / "otlp-export";
    ASSERT_NO_FATAL_FAILURE(
        build_out_of_tree(fs::path(NUCLEO_SOURCE_DIR) / "examples/otlp-export", build, "CXX"));
    nucleo::emulator_test::EmulatorProcess emulator;
    LoopbackCollector collector;
    const fs::path log = kWork / "otlp-export.run.log";
    const std::string cmd =
        "env -u NUCLEO_PLUGIN_PATH " + q(build / "otlp-export") + " --base-url http://127.0.0.1:" +
        std::to_string(emulator.port()) + " --api-key sk-test --collector http://127.0.0.1:" +
        std::to_string(collector.port()) +
        " --header 'x-emulator-fault:fail-first=1:500' --header 'x-emulator-request-id:otlp-1'"
        " 'Where is order 42?'";
    ASSERT_EQ(run(cmd, log), 0) << slurp(log);
    const std::string out = slurp(log);
    EXPECT_NE(out.find("answer: This is the emulator's answer to: Where is order 42?"), std::string::npos)
        << out;
    EXPECT_NE(out.find("exported 3 spans"), std::string::npos) << out;

    const auto requests = collector.requests();
    ASSERT_EQ(requests.size(), 1U);
    EXPECT_EQ(requests[0].head.rfind("POST /v1/traces HTTP/1.1", 0), 0U) << requests[0].head;
    EXPECT_NE(requests[0].head.find("Content-Type: application/json"), std::string::npos) << requests[0].head;
    const rapidjson::Document d = parse_json(requests[0].body);
    const auto& resource = d["resourceSpans"][0];
    EXPECT_STREQ(resource["resource"]["attributes"][0]["key"].GetString(), "service.name");
    const auto& scope = resource["scopeSpans"][0];
    EXPECT_STREQ(scope["scope"]["name"].GetString(), "nucleo");
    const auto& spans = scope["spans"];
    ASSERT_EQ(spans.Size(), 3U);
    const auto& call = spans[0];
    EXPECT_STREQ(call["name"].GetString(), "chat claude-sonnet-5-5");
    EXPECT_EQ(call["kind"].GetInt(), 3);
    EXPECT_TRUE(lower_hex(call["traceId"].GetString(), 32)) << call["traceId"].GetString();
    EXPECT_TRUE(lower_hex(call["spanId"].GetString(), 16)) << call["spanId"].GetString();
    EXPECT_FALSE(call.HasMember("parentSpanId"));
    EXPECT_EQ(call["status"]["code"].GetInt(), 1);
    EXPECT_LE(std::stoull(call["startTimeUnixNano"].GetString()),
              std::stoull(call["endTimeUnixNano"].GetString()));
    ASSERT_NE(otlp_attribute(call, "gen_ai.operation.name"), nullptr);
    EXPECT_STREQ((*otlp_attribute(call, "gen_ai.operation.name"))["stringValue"].GetString(), "chat");
    EXPECT_STREQ((*otlp_attribute(call, "gen_ai.provider.name"))["stringValue"].GetString(), "anthropic");
    EXPECT_STREQ((*otlp_attribute(call, "gen_ai.conversation.id"))["stringValue"].GetString(),
                 "otlp-export-conversation");
    EXPECT_GT(std::stoll((*otlp_attribute(call, "gen_ai.usage.output_tokens"))["intValue"].GetString()), 0);
    EXPECT_STREQ((*otlp_attribute(call, "nucleo.attempts"))["intValue"].GetString(), "2");
    EXPECT_STREQ((*otlp_attribute(call, "gen_ai.response.finish_reasons"))["arrayValue"]["values"][0]
                     ["stringValue"].GetString(),
                 "end_turn");
    EXPECT_TRUE((*otlp_attribute(call, "nucleo.cost.usd")).HasMember("doubleValue"));
    const std::string request_id =
        (*otlp_attribute(call, "nucleo.provider.request_id"))["stringValue"].GetString();
    EXPECT_EQ(request_id.rfind("req_emu_", 0), 0U) << request_id;
    for (unsigned i = 1; i < 3; ++i) {
        const auto& attempt = spans[i];
        EXPECT_EQ(std::string(attempt["name"].GetString()), "attempt " + std::to_string(i));
        EXPECT_STREQ(attempt["traceId"].GetString(), call["traceId"].GetString());
        EXPECT_STREQ(attempt["parentSpanId"].GetString(), call["spanId"].GetString());
        EXPECT_STRNE(attempt["spanId"].GetString(), call["spanId"].GetString());
    }
    EXPECT_STREQ((*otlp_attribute(spans[1], "http.response.status_code"))["intValue"].GetString(), "500");
    EXPECT_EQ(spans[1]["status"]["code"].GetInt(), 2);
    EXPECT_STREQ((*otlp_attribute(spans[1], "error.type"))["stringValue"].GetString(), "500");
    EXPECT_STREQ((*otlp_attribute(spans[2], "http.response.status_code"))["intValue"].GetString(), "200");
    EXPECT_EQ(spans[2]["status"]["code"].GetInt(), 1);
    EXPECT_STREQ((*otlp_attribute(spans[2], "nucleo.provider.request_id"))["stringValue"].GetString(),
                 request_id.c_str());
}

// ---- examples/c-provider: the acme-chat dialect in plain C ----------------------------------

/// Builds examples/c-provider out of tree against the installed prefix; returns the .so.
fs::path build_c_provider() {
    const fs::path build = kWork / "c-provider";
    build_out_of_tree(fs::path(NUCLEO_SOURCE_DIR) / "examples/c-provider", build, "C");
    return build / "nucleo-c-provider.so";
}

/// nucleo.yaml as docs/plugin-authoring.md tells an operator to write it for the C provider: the
/// plugin's folder on plugins.paths, a provider instance naming the plugin, a catalog entry.
std::string acme_yaml(const fs::path& plugin_dir, int emulator_port) {
    return "plugins:\n"
           "  paths: [" +
           q(plugin_dir) +
           "]\n"
           "providers:\n"
           "  acme:\n"
           "    plugin: c-provider\n"
           "    base_url: http://127.0.0.1:" +
           std::to_string(emulator_port) +
           "/v1\n"
           "    api_key: acme-test-key\n"
           "models:\n"
           "  - id: acme-small\n"
           "    provider: acme\n"
           "    wire_model: acme-1\n"
           "    grade: SMALL\n"
           "    max_context_tokens: 128000\n"
           "    max_output_tokens: 8192\n"
           "    output_budget: {SHORT: 1024, MEDIUM: 2048, LONG: 4096, EXTENDED: 8192}\n"
           "    native_tools: false\n"
           "    prices: {input: 0.50, output: 1.50, cache_read: 0.05}\n";
}

std::string acme_request(const std::string& turns) {
    return R"({"schema_version":1,"model":{"id":"acme-small","wire_model":"acme-1"},)"
           R"("max_tokens":256,"thinking":{"active":false,"budget_tokens":0},"stream":false,)"
           R"("cache_ttl":"5m","options":{},"prepared":{"system_blocks":[{"type":"text",)"
           R"("text":"You answer questions about orders."}],"cache_system":false,)"
           R"("native_tools":false,"cache_plan":{"breakpoints":0,"system_block":null,)"
           R"("turn_anchors":[]},"tool_definitions":[],"turns":)" +
           turns + "}}";
}

const char* kQuestion =
    R"([{"role":"user","message_id":"m1","blocks":[{"type":"text","text":"Where is order 42?"}]}])";

rapidjson::Document parse_json(const std::string& text) {
    rapidjson::Document d;
    d.Parse(text.data(), text.size());
    EXPECT_FALSE(d.HasParseError()) << text;
    return d;
}

/// The compact wire body of an encoded HTTP request document.
std::string body_of(const std::string& http_request) {
    const rapidjson::Document d = parse_json(http_request);
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    d["body"].Accept(w);
    return {b.GetString(), b.GetSize()};
}

using test_support::error_of;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST_F(Install, OutOfTreeCProviderAnswersThroughProviderClientWithMaxTokens) {
    fs::path so;
    ASSERT_NO_FATAL_FAILURE(so = build_c_provider());
    ASSERT_TRUE(fs::exists(so));
    const nucleo::Plugin plugin = nucleo::PluginLoader().load(so.string());
    EXPECT_EQ(plugin.info().name, "c-provider");
    EXPECT_EQ(plugin.info().factories, std::vector<std::string>{"nucleo.provider/1"});

    // Configured as an operator would (nucleo.yaml), found by name on plugins.paths.
    nucleo::emulator_test::EmulatorProcess emulator;
    const nucleo::Config config =
        nucleo::Config::parse(acme_yaml(so.parent_path(), emulator.port()), kWork / "nucleo.yaml");
    const nucleo::ModelSpec& model = config.catalog().find("acme-small");
    nucleo::ProviderClient client = nucleo::ProviderClient::from_config(
        config, nucleo::PluginLoader(config.plugin_paths()), "acme");
    EXPECT_EQ(client.capabilities().dialect, "acme-chat");
    EXPECT_FALSE(client.capabilities().native_tools);
    EXPECT_FALSE(client.capabilities().caching);
    EXPECT_FALSE(client.capabilities().streaming);
    EXPECT_EQ(client.capabilities().auth, "bearer");

    // A standing objective past 1,024 tokens, so the emulator's automatic (OpenAI-style) prefix
    // cache has something to report on the second call.
    nucleo::ConversationContext c("c-acme", "alice");
    std::string objective = "You answer questions about \"orders\"\n";
    for (int i = 0; objective.size() < 6000; ++i) {
        objective += "Rule " + std::to_string(i) + ": cite the order number.\t";
    }
    objective += "End.";
    c.put_main_objective("task", objective);
    c.set_output(nucleo::OutputSize::kShort);
    c.set_depth(nucleo::Depth::kImmediate);
    c.add_message(nucleo::Message::outgoing_text("Where is order 42?"));

    // The wire body the plugin produces: the vendor's max_tokens, never OpenAI's
    // max_completion_tokens, and valid Chat Completions by OpenAI's published schema.
    const nucleo::HttpRequest wire = client.build_request(c, model);
    EXPECT_TRUE(wire.url.ends_with("/v1/chat/completions")) << wire.url;
    const rapidjson::Document body = parse_json(wire.body);
    ASSERT_TRUE(body.IsObject());
    ASSERT_TRUE(body.HasMember("max_tokens"));
    EXPECT_EQ(body["max_tokens"].GetInt64(), 1024);
    EXPECT_FALSE(body.HasMember("max_completion_tokens"));
    EXPECT_STREQ(body["model"].GetString(), "acme-1");
    ASSERT_TRUE(body["messages"].IsArray());
    ASSERT_EQ(body["messages"].Size(), 2U);
    EXPECT_STREQ(body["messages"][0]["role"].GetString(), "system");
    // The objective's quotes, line break and tab survived the plugin's own escaping.
    EXPECT_TRUE(contains(body["messages"][0]["content"].GetString(), objective))
        << body["messages"][0]["content"].GetString();
    EXPECT_STREQ(body["messages"][1]["role"].GetString(), "user");
    EXPECT_STREQ(body["messages"][1]["content"].GetString(), "Where is order 42?");
    EXPECT_EQ(nucleo::emulator_test::validate_wire("openai", {wire.body}), "");

    // The real call: the answer is appended with the emulator's usage.
    const nucleo::LLMResponse first = client.call(c, model);
    ASSERT_EQ(c.messages().size(), 2U);
    EXPECT_TRUE(c.messages().back().incoming());
    EXPECT_EQ(first.message.id, c.messages().back().id);
    ASSERT_EQ(first.message.blocks.size(), 1U);
    const auto* text = first.message.blocks[0].get_if<nucleo::TextBlock>();
    ASSERT_NE(text, nullptr);
    EXPECT_EQ(text->text, "This is the emulator's answer to: Where is order 42?");
    EXPECT_EQ(first.stop_reason, "end_turn");
    EXPECT_EQ(first.model, "acme-1");
    EXPECT_GT(first.usage.input_tokens, 1000);
    EXPECT_GT(first.usage.output_tokens, 0);
    EXPECT_EQ(first.usage.cache_read_tokens, 0);
    EXPECT_DOUBLE_EQ(first.cost,
                     model.cost(first.usage.input_tokens, first.usage.output_tokens,
                                first.usage.cache_write_tokens, first.usage.cache_read_tokens));

    // The second call reads the cached prefix: cached tokens are reported apart from the input
    // (prompt_tokens minus cached_tokens), so the two add up to what the provider read.
    c.add_message(nucleo::Message::outgoing_text("And order 43?"));
    const nucleo::LLMResponse second = client.call(c, model);
    ASSERT_EQ(c.messages().size(), 4U);
    EXPECT_GT(second.usage.cache_read_tokens, 0);
    EXPECT_GT(second.usage.input_tokens, 0);
    EXPECT_LT(second.usage.input_tokens, first.usage.input_tokens);
    EXPECT_GT(second.usage.total_input_tokens(), first.usage.total_input_tokens());

    // The emulator honours the max_tokens it was sent (with neither field it would allow 4,096):
    // a 2-token budget is cut off ("length" -> max_tokens), and the core's one escalation to the
    // model's ceiling then gets the whole answer.
    nucleo::ConversationContext tight("c-acme-tight", "alice");
    tight.put_main_objective("task", "You answer questions about orders.");
    tight.set_output(std::int64_t{2});
    tight.set_depth(nucleo::Depth::kImmediate);
    tight.add_message(nucleo::Message::outgoing_text("Where is order 42?"));
    const nucleo::LLMResponse escalated = client.call(tight, model);
    EXPECT_TRUE(escalated.escalated);
    EXPECT_EQ(escalated.max_tokens, 8192);
    EXPECT_EQ(escalated.stop_reason, "end_turn");
    ASSERT_EQ(tight.messages().size(), 2U) << "only the complete answer is appended";
}

// abi.127: the conformance kit is installed with the package and runs from it, offline, with the
// corpus installed under share/nucleo/conformance: both out-of-tree C examples pass it.
TEST_F(Install, TheInstalledKitPassesBothOutOfTreeCExamples) {
    EXPECT_TRUE(fs::is_directory(kPrefix / "share/nucleo/conformance/encode"));
    EXPECT_TRUE(fs::exists(kPrefix / "share/nucleo/conformance/decode/anthropic-messages.json"));
    fs::path provider;
    ASSERT_NO_FATAL_FAILURE(provider = build_c_provider());
    const fs::path summarizer_build = kWork / "c-summarizer-kit";
    ASSERT_NO_FATAL_FAILURE(
        build_out_of_tree(fs::path(NUCLEO_SOURCE_DIR) / "examples/c-summarizer", summarizer_build, "C"));
    for (const fs::path& so : {provider, summarizer_build / "nucleo-c-summarizer.so"}) {
        const fs::path out = kWork / "kit.out";
        const std::string cmd = "cd " + q(kWork) + " && " + q(kPrefix / "bin/nucleo") + " plugin check " + q(so) +
                                " >" + q(out) + " 2>&1";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(out);
        EXPECT_TRUE(contains(slurp(out), " failed, 0 findings")) << slurp(out);
    }
}

TEST_F(Install, OutOfTreeCProviderRefusesWhatItCannotSayAndMapsErrorAnswers) {
    fs::path so;
    ASSERT_NO_FATAL_FAILURE(so = build_c_provider());
    const nucleo::ProviderInstance acme = nucleo::PluginLoader().load(so.string()).make_provider();

    // Every kind it can say, rendered as text: json as its JSON, tool calls as the envelope the
    // model writes, results as "Result of <id>:".
    const rapidjson::Document http = parse_json(acme.encode(acme_request(
        R"([{"role":"user","message_id":"m1","blocks":[{"type":"text","text":"Find \"42\""},)"
        R"({"type":"json","json":{"order": 42, "tags": ["a\"b"]}}]},)"
        R"({"role":"assistant","message_id":"m2","blocks":[{"type":"tool_use","id":"t1",)"
        R"("name":"search","input":{"q":"42"}}]},)"
        R"({"role":"user","message_id":"m3","blocks":[{"type":"tool_result","tool_use_id":"t1",)"
        R"("is_error":true,"content":[{"type":"text","text":"timed out"}]}]}])")));
    ASSERT_TRUE(http.IsObject());
    EXPECT_STREQ(http["method"].GetString(), "POST");
    EXPECT_STREQ(http["path"].GetString(), "/chat/completions");
    const auto& messages = http["body"]["messages"];
    ASSERT_EQ(messages.Size(), 4U);
    EXPECT_STREQ(messages[1]["content"].GetString(),
                 "Find \"42\"\n\n{\"order\":42,\"tags\":[\"a\\\"b\"]}");
    EXPECT_STREQ(messages[2]["content"].GetString(),
                 R"({"tool_calls":[{"name":"search","input":{"q":"42"}}]})");
    EXPECT_STREQ(messages[3]["content"].GetString(), "Result of t1 (error):\ntimed out");

    // An image cannot be said to this vendor: refused naming the block type and the turn.
    const nucleo::Error image = error_of([&] {
        (void)acme.encode(acme_request(
            R"([{"role":"user","message_id":"m1","blocks":[{"type":"text","text":"Hi"}]},)"
            R"({"role":"assistant","message_id":"m2","blocks":[{"type":"text","text":"Yes?"}]},)"
            R"({"role":"user","message_id":"m3","blocks":[{"type":"text","text":"Look"},)"
            R"({"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}]}])"));
    });
    EXPECT_EQ(image.kind(), nucleo::ErrorKind::kInvalidArgument);
    EXPECT_TRUE(contains(image.what(), "prepared.turns[2].blocks[1]")) << image.what();
    EXPECT_TRUE(contains(image.what(), R"(block type "image" in turn 2)")) << image.what();
    // Neither a request that is not JSON, nor a bad instance configuration, crashes it.
    EXPECT_EQ(error_of([&] { (void)acme.encode("{\"turns\":[["); }).kind(),
              nucleo::ErrorKind::kInvalidArgument);
    EXPECT_EQ(error_of([&] {
                  (void)nucleo::PluginLoader().load(so.string()).make_provider("[1,2]");
              }).kind(),
              nucleo::ErrorKind::kConfig);

    // A chat completion: cached tokens are taken out of the input, finish_reason is normalized.
    EXPECT_EQ(acme.decode(200, "{}",
                          R"({"id":"c1","object":"chat.completion","model":"acme-1-0601",)"
                          R"("choices":[{"index":0,"message":{"role":"assistant","content":)"
                          R"("Order 42 \"shipped\"\n\u00e9"},"finish_reason":"length"}],)"
                          R"("usage":{"prompt_tokens":100,"completion_tokens":7,)"
                          R"("prompt_tokens_details":{"cached_tokens":60}}})"),
              R"({"schema_version":1,"model":"acme-1-0601","blocks":[{"type":"text","text":)"
              R"("Order 42 \"shipped\"\n\u00e9"}],"stop_reason":"max_tokens","usage":)"
              R"({"input_tokens":40,"output_tokens":7,"cache_read_tokens":60,)"
              R"("cache_write_tokens":0}})");

    // The emulator's own 429 and its cut-off 200, decoded as the core would hand them over.
    nucleo::emulator_test::EmulatorProcess emulator;
    const std::string wire = body_of(acme.encode(acme_request(kQuestion)));
    const std::vector<std::string> headers = {"content-type: application/json",
                                              "authorization: Bearer acme-test-key"};
    const auto ok = emulator.post("/v1/chat/completions", wire, headers);
    ASSERT_EQ(ok.status, 200) << ok.body;

    auto limited_headers = headers;
    limited_headers.push_back("x-emulator-fault: 429");
    const auto limited = emulator.post("/v1/chat/completions", wire, limited_headers);
    ASSERT_EQ(limited.status, 429) << limited.body;
    const nucleo::Error rate = error_of([&] { (void)acme.decode(429, "{}", limited.body); });
    EXPECT_EQ(rate.kind(), nucleo::ErrorKind::kRateLimited);
    // "(HTTP 429)" is what the host appends from err->http_status; the vendor's text is quoted.
    EXPECT_TRUE(contains(rate.what(), "(HTTP 429)")) << rate.what();
    const rapidjson::Document limited_body = parse_json(limited.body);
    EXPECT_TRUE(contains(rate.what(), limited_body["error"]["message"].GetString())) << rate.what();

    auto malformed_headers = headers;
    malformed_headers.push_back("x-emulator-fault: malformed");
    const auto malformed = emulator.post("/v1/chat/completions", wire, malformed_headers);
    ASSERT_EQ(malformed.status, 200);
    const nucleo::Error cut = error_of([&] { (void)acme.decode(200, "{}", malformed.body); });
    EXPECT_EQ(cut.kind(), nucleo::ErrorKind::kProtocol);
    EXPECT_TRUE(contains(cut.what(), "is not JSON")) << cut.what();
    EXPECT_TRUE(contains(cut.what(), malformed.body.substr(0, 40))) << cut.what();

    // A gateway's HTML page with a 200: a protocol error quoting it, control bytes as '.'.
    const nucleo::Error html =
        error_of([&] { (void)acme.decode(200, "{}", "<html>\n<b>Maintenance</b></html>"); });
    EXPECT_EQ(html.kind(), nucleo::ErrorKind::kProtocol);
    EXPECT_TRUE(contains(html.what(), R"(body starts: "<html>.<b>Maintenance</b></html>")"))
        << html.what();
    // Valid JSON that is not a chat completion names what is missing.
    const nucleo::Error empty =
        error_of([&] { (void)acme.decode(200, "{}", R"({"id":"x","choices":[]})"); });
    EXPECT_EQ(empty.kind(), nucleo::ErrorKind::kProtocol);
    EXPECT_TRUE(contains(empty.what(), "lacks choices[0]")) << empty.what();
    // The other statuses of docs/provider-abi-documents.md.
    EXPECT_EQ(error_of([&] { (void)acme.decode(503, "{}", "busy"); }).kind(),
              nucleo::ErrorKind::kOverloaded);
    EXPECT_EQ(error_of([&] { (void)acme.decode(401, "{}", R"({"error":"bad key"})"); }).kind(),
              nucleo::ErrorKind::kConfig);
    EXPECT_EQ(error_of([&] { (void)acme.decode(404, "{}", "{}"); }).kind(),
              nucleo::ErrorKind::kNotFound);
    EXPECT_EQ(error_of([&] { (void)acme.decode(422, "{}", "{}"); }).kind(),
              nucleo::ErrorKind::kInvalidArgument);
}

}  // namespace
