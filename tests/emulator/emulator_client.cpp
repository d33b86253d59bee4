#include "emulator_client.hpp"

#include <curl/curl.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace nucleo::emulator_test {
namespace {

namespace fs = std::filesystem;

std::string make_temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "nucleo-emulator-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    return pattern;
}

pid_t spawn(const std::vector<std::string>& args, const std::string& stdout_path,
            const std::string& stderr_path = {}) {
    std::vector<char*> argv;
    std::string exe = NUCLEO_EMULATOR;
    argv.push_back(exe.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!stderr_path.empty())
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(),
                                         O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) ADD_FAILURE() << "cannot start " << exe << ": " << rc;
    return rc == 0 ? pid : -1;
}

int wait_exit(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* out) {
    static_cast<std::string*>(out)->append(data, size * n);
    return size * n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* out) {
    std::string line(data, size * n);
    const auto colon = line.find(':');
    if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ')) value.erase(0, 1);
        while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
        (*static_cast<std::map<std::string, std::string>*>(out))[name] = value;
    }
    return size * n;
}

HttpResult perform(const std::string& url, const std::string* body,
                   const std::vector<std::string>& headers) {
    HttpResult r;
    CURL* curl = curl_easy_init();
    curl_slist* list = nullptr;
    for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
    list = curl_slist_append(list, "content-type: application/json");
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &r.headers);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    if (body != nullptr) {
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body->data());
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body->size()));
    }
    const CURLcode rc = curl_easy_perform(curl);
    EXPECT_EQ(rc, CURLE_OK) << curl_easy_strerror(rc) << " for " << url;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
    curl_slist_free_all(list);
    curl_easy_cleanup(curl);
    return r;
}

std::uint32_t be32(const std::string& s, std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

std::uint32_t crc(const std::string& s, std::size_t from, std::size_t len) {
    return static_cast<std::uint32_t>(
        crc32(0L, reinterpret_cast<const Bytef*>(s.data() + from), static_cast<uInt>(len)));
}

}  // namespace

EmulatorProcess::EmulatorProcess(std::vector<std::string> extra_args) : dir_(make_temp_dir()) {
    const std::string port_file = dir_ + "/port";
    std::vector<std::string> args = {"--port", "0", "--port-file", port_file, "--exit-with-parent"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    pid_ = spawn(args, dir_ + "/stdout");
    // Bounded poll for the port file, which the emulator renames into place once listening.
    for (int i = 0; i < 2000 && pid_ > 0; ++i) {
        std::ifstream in(port_file);
        if (in >> port_) return;
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            ADD_FAILURE() << "nucleo-emulator exited before listening";
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "nucleo-emulator did not write its port file";
}

EmulatorProcess::~EmulatorProcess() {
    stop();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
}

int EmulatorProcess::stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    const int status = wait_exit(pid_);
    pid_ = -1;
    return status;
}

std::string EmulatorProcess::url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
}

std::string EmulatorProcess::stdout_first_line() const {
    std::ifstream in(dir_ + "/stdout");
    std::string line;
    std::getline(in, line);
    return line;
}

HttpResult EmulatorProcess::post(const std::string& path, const std::string& body,
                                 const std::vector<std::string>& headers) const {
    return perform(url(path), &body, headers);
}

HttpResult EmulatorProcess::get(const std::string& path) const {
    return perform(url(path), nullptr, {});
}

std::string shipped_catalog() {
    return std::string(NUCLEO_SOURCE_DIR) + "/config/models.yaml";
}

std::string shipped_config_yaml(int port, const std::string& anthropic_options) {
    std::string yaml = "include: " + shipped_catalog() + "\nproviders:\n";
    for (const std::string p : {"anthropic", "openai", "bedrock", "gemini", "openai-responses"}) {
        yaml += "  " + p + ":\n    plugin: " + p +
                "\n    base_url: http://127.0.0.1:" + std::to_string(port) +
                "\n    api_key: test\n";
        if (p == "anthropic" && !anthropic_options.empty())
            yaml += "    options:\n      " + anthropic_options + "\n";
    }
    return yaml;
}

CatalogFile::CatalogFile(const std::string& yaml) {
    static int counter = 0;
    path_ = (fs::temp_directory_path() / ("nucleo-emulator-catalog-" + std::to_string(::getpid()) +
                                          "-" + std::to_string(counter++) + ".yaml"))
                .string();
    std::ofstream(path_) << yaml;
}

CatalogFile::~CatalogFile() {
    std::error_code ignored;
    fs::remove(path_, ignored);
}

std::vector<std::string> anthropic_headers(const std::vector<std::string>& extra) {
    std::vector<std::string> out = {"x-api-key: test-key", "anthropic-version: 2023-06-01"};
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
}

std::vector<std::string> bedrock_headers() {
    return {"authorization: Bearer bedrock-api-key"};
}

rapidjson::Document parse(const std::string& body) {
    rapidjson::Document d;
    d.Parse(body.c_str());
    EXPECT_FALSE(d.HasParseError()) << "not JSON: " << body.substr(0, 300);
    return d;
}

std::string str(const rapidjson::Value& v) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return buf.GetString();
}

long long advance_clock(const EmulatorProcess& emu, long long seconds) {
    auto r = emu.post("/clock", R"({"advance_seconds":)" + std::to_string(seconds) + "}", {});
    EXPECT_EQ(r.status, 200) << r.body;
    return parse(r.body)["offset_seconds"].GetInt64();
}

int run_emulator_to_exit(const std::vector<std::string>& args) {
    const std::string dir = make_temp_dir();
    const pid_t pid = spawn(args, dir + "/stdout");
    const int status = pid > 0 ? wait_exit(pid) : -1;
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    return status;
}

EmulatorExit run_emulator_bounded(const std::vector<std::string>& args,
                                  std::chrono::milliseconds limit) {
    const std::string dir = make_temp_dir();
    EmulatorExit out;
    const pid_t pid = spawn(args, dir + "/stdout", dir + "/stderr");
    if (pid > 0) {
        // A bounded wait: an emulator still running at the limit is stopped and reported as such.
        const auto deadline = std::chrono::steady_clock::now() + limit;
        int raw = 0;
        pid_t done = 0;
        while ((done = waitpid(pid, &raw, WNOHANG)) == 0 &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (done == pid) {
            out.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
        } else {
            out.still_running = true;
            kill(pid, SIGTERM);
            wait_exit(pid);
        }
    }
    std::ifstream so(dir + "/stdout"), se(dir + "/stderr");
    std::stringstream o, e;
    o << so.rdbuf();
    e << se.rdbuf();
    out.out = o.str();
    out.err = e.str();
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    return out;
}

std::vector<std::pair<std::string, std::string>> parse_sse(const std::string& body) {
    std::vector<std::pair<std::string, std::string>> events;
    std::size_t pos = 0;
    while (pos < body.size()) {
        const auto end = body.find("\n\n", pos);
        const std::string block =
            body.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        pos = end == std::string::npos ? body.size() : end + 2;
        std::string event, data;
        std::istringstream lines(block);
        for (std::string line; std::getline(lines, line);) {
            if (line.starts_with("event: ")) event = line.substr(7);
            if (line.starts_with("data: ")) data += line.substr(6);
        }
        if (!data.empty()) events.emplace_back(event, data);
    }
    return events;
}

std::vector<std::pair<std::string, std::string>> parse_event_stream(const std::string& body) {
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t at = 0;
    while (at + 16 <= body.size()) {
        const std::uint32_t total = be32(body, at);
        const std::uint32_t headers_len = be32(body, at + 4);
        EXPECT_EQ(be32(body, at + 8), crc(body, at, 8)) << "prelude CRC at byte " << at;
        EXPECT_LE(at + total, body.size());
        if (at + total > body.size()) break;
        EXPECT_EQ(be32(body, at + total - 4), crc(body, at, total - 4)) << "message CRC at " << at;
        std::string event_type;
        std::size_t h = at + 12;
        while (h < at + 12 + headers_len) {
            const std::size_t name_len = static_cast<unsigned char>(body[h]);
            const std::string name = body.substr(h + 1, name_len);
            h += 1 + name_len;
            EXPECT_EQ(body[h], 7) << "header " << name << " is not a string";
            const std::size_t value_len = (static_cast<unsigned char>(body[h + 1]) << 8) |
                                          static_cast<unsigned char>(body[h + 2]);
            const std::string value = body.substr(h + 3, value_len);
            h += 3 + value_len;
            if (name == ":event-type") event_type = value;
        }
        out.emplace_back(event_type, body.substr(at + 12 + headers_len, total - 16 - headers_len));
        at += total;
    }
    EXPECT_EQ(at, body.size()) << "trailing bytes after the last event-stream message";
    return out;
}

std::string validate_wire(const std::string& provider, const std::vector<std::string>& bodies) {
    const fs::path tool =
        fs::path(NUCLEO_SOURCE_DIR) / ".." / "shared" / "tools" / "validate_wire.py";
    if (!fs::exists(tool)) return "";
    const std::string dir = make_temp_dir();
    std::string cmd = "python3 '" + tool.string() + "' " + provider;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        const std::string file = dir + "/" + provider + "-" + std::to_string(i) + ".json";
        std::ofstream(file) << bodies[i];
        cmd += " '" + file + "'";
    }
    cmd += " 2>&1";
    std::string output;
    FILE* p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf{};
    while (p != nullptr && std::fgets(buf.data(), buf.size(), p) != nullptr) output += buf.data();
    const int rc = p != nullptr ? pclose(p) : -1;
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    return rc == 0 ? "" : output;
}

}  // namespace nucleo::emulator_test
