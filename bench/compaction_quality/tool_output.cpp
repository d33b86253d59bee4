// The noise of a coding session: see tool_output.hpp.
#include "tool_output.hpp"

#include <cstdio>

namespace nucleo::quality {

std::uint64_t Rng::next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int Rng::between(int lo, int hi) {
    const auto span = static_cast<std::uint64_t>(hi - lo + 1);
    return lo + static_cast<int>(next() % span);
}

bool Rng::chance(double p) {
    return static_cast<double>(next() % 1000000) < p * 1000000.0;
}

const std::vector<std::string>& module_words() {
    static const std::vector<std::string> words = {
        "net",   "storage", "sched", "auth",  "cache",  "codec", "index", "query",
        "wal",   "raft",    "http",  "grpc",  "config", "fs",    "ipc",   "metrics",
        "trace", "pool",    "shard", "batch", "proto",  "sync",  "lease", "tls"};
    return words;
}

const std::vector<std::string>& noun_words() {
    static const std::vector<std::string> words = {
        "retry",  "policy",   "frame",   "parser",   "budget",  "stream", "buffer", "window",
        "token",  "bucket",   "lease",   "manager",  "handler", "queue",  "epoch",  "segment",
        "commit", "snapshot", "cursor",  "backoff",  "jitter",  "limit",  "socket", "digest",
        "header", "payload",  "session", "registry", "writer",  "reader", "ticket", "inflight",
        "quota",  "vector",   "router",  "schema",   "mirror",  "latch",  "drain",  "probe"};
    return words;
}

namespace {

std::string capitalized(std::string w) {
    if (!w.empty() && w[0] >= 'a' && w[0] <= 'z') w[0] = static_cast<char>(w[0] - 'a' + 'A');
    return w;
}

std::string pad(int n, int width) {
    std::string s = std::to_string(n);
    while (static_cast<int>(s.size()) < width) s.insert(s.begin(), ' ');
    return s;
}

std::string hex(Rng& rng, int digits) {
    static const char* kHex = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < digits; ++i) out += kHex[rng.next() % 16];
    return out;
}

std::string source_line(Rng& rng) {
    const std::string a = random_snake(rng, 2);
    const std::string b = random_snake(rng, 1);
    const std::string t = random_camel(rng, 2);
    switch (rng.between(0, 11)) {
        case 0:
            return "  if (" + a + " > " + std::to_string(rng.between(1, 512)) + ") {";
        case 1:
            return "    return " + t + "::" + capitalized(b) + "(" + a + ");";
        case 2:
            return "  }";
        case 3:
            return "";
        case 4:
            return "  // " + capitalized(b) + " the " + a + " before the next " + b + ".";
        case 5:
            return "  auto " + a + " = " + b + "_->" + random_snake(rng, 2) + "();";
        case 6:
            return "  for (const auto& " + b + " : " + a + ") {";
        case 7:
            return "Status " + t + "::" + capitalized(random_snake(rng, 1)) + "(int " + b + ") {";
        case 8:
            return "  LOG(INFO) << \"" + a + "=\" << " + a + ";";
        case 9:
            return "#include \"" + random_path(rng) + "\"";
        case 10:
            return "    " + a + "_.push_back(" + b + ");";
        default:
            return "  std::lock_guard<std::mutex> lock(" + b + "_mu_);";
    }
}

std::string test_line(Rng& rng) {
    const std::string test = "test_" + random_snake(rng, 2);
    switch (rng.between(0, 6)) {
        case 0:
        case 1:
        case 2:
            return "tests/" + rng.pick(module_words()) + "/test_" + rng.pick(noun_words()) +
                   ".py::" + test + " PASSED [" + pad(rng.between(1, 99), 3) + "%]";
        case 3:
            return "[ RUN      ] " + random_camel(rng, 2) + "Test." +
                   capitalized(random_snake(rng, 2));
        case 4:
            return "[       OK ] " + random_camel(rng, 2) + "Test." +
                   capitalized(random_snake(rng, 2)) + " (" + std::to_string(rng.between(0, 90)) +
                   " ms)";
        case 5:
            return "DEBUG " + rng.pick(module_words()) + ": " + random_snake(rng, 2) + "=" +
                   std::to_string(rng.between(0, 4096)) + " " + random_snake(rng, 1) + "=" +
                   hex(rng, 8);
        default:
            return "    collected " + std::to_string(rng.between(3, 80)) + " items";
    }
}

std::string build_line(Rng& rng, int step, int steps) {
    const std::string file = random_path(rng);
    if (rng.chance(0.08)) {
        return file + ":" + std::to_string(rng.between(10, 900)) + ":" +
               std::to_string(rng.between(1, 80)) + ": warning: unused variable '" +
               random_snake(rng, 2) + "' [-Wunused-variable]";
    }
    return "[" + std::to_string(step) + "/" + std::to_string(steps) +
           "] Building CXX object CMakeFiles/" + rng.pick(module_words()) + ".dir/" + file + ".o";
}

std::string grep_line(Rng& rng) {
    return random_path(rng) + ":" + std::to_string(rng.between(1, 1200)) + ":" + source_line(rng);
}

std::string listing_line(Rng& rng) {
    const bool dir = rng.chance(0.2);
    return std::string(dir ? "drwxr-xr-x" : "-rw-r--r--") + "  1 dev  staff  " +
           pad(dir ? 4096 : rng.between(120, 98000), 6) + " Nov " + pad(rng.between(1, 30), 2) +
           " " + pad(rng.between(0, 23), 2) + ":" + std::to_string(rng.between(10, 59)) + " " +
           (dir ? rng.pick(module_words()) + "/"
                : random_snake(rng, 2) + (rng.chance(0.5) ? ".cc" : ".h"));
}

std::string diff_line(Rng& rng) {
    switch (rng.between(0, 5)) {
        case 0:
            return "-" + source_line(rng);
        case 1:
            return "+" + source_line(rng);
        case 2:
            return "@@ -" + std::to_string(rng.between(1, 600)) + "," +
                   std::to_string(rng.between(3, 20)) + " +" + std::to_string(rng.between(1, 600)) +
                   "," + std::to_string(rng.between(3, 20)) + " @@";
        default:
            return " " + source_line(rng);
    }
}

std::string json_line(Rng& rng) {
    switch (rng.between(0, 4)) {
        case 0:
            return "  \"" + random_snake(rng, 2) + "\": " + std::to_string(rng.between(0, 10000)) +
                   ",";
        case 1:
            return "  \"" + random_snake(rng, 1) + "\": \"" + hex(rng, 12) + "\",";
        case 2:
            return "  \"" + random_snake(rng, 2) + "\": " + (rng.chance(0.5) ? "true" : "false") +
                   ",";
        case 3:
            return "  \"" + random_snake(rng, 1) + "_path\": \"" + random_path(rng) + "\",";
        default:
            return "  \"" + random_snake(rng, 2) + "\": [" + std::to_string(rng.between(0, 9)) +
                   ", " + std::to_string(rng.between(10, 99)) + "],";
    }
}

}  // namespace

std::string random_path(Rng& rng) {
    static const std::vector<std::string> exts = {".cc", ".h", ".cc", ".py", ".go"};
    return "src/" + rng.pick(module_words()) + "/" + random_snake(rng, 2) + rng.pick(exts);
}

std::string random_camel(Rng& rng, int words) {
    std::string out;
    for (int i = 0; i < words; ++i) out += capitalized(rng.pick(noun_words()));
    return out;
}

std::string random_snake(Rng& rng, int words) {
    std::string out;
    for (int i = 0; i < words; ++i) out += (i > 0 ? "_" : "") + rng.pick(noun_words());
    return out;
}

ToolCall random_call(Rng& rng) {
    const auto kind = static_cast<ToolKind>(rng.between(0, 6));
    switch (kind) {
        case ToolKind::kReadFile:
            return {kind, "read_file", R"({"path":")" + random_path(rng) + R"("})"};
        case ToolKind::kRunTests:
            return {kind, "run_tests", R"({"target":"tests/)" + rng.pick(module_words()) + R"("})"};
        case ToolKind::kGrep:
            return {kind, "grep", R"({"pattern":")" + random_snake(rng, 2) + R"(","path":"src"})"};
        case ToolKind::kBuild:
            return {kind, "build", R"({"target":"all","jobs":8})"};
        case ToolKind::kGitDiff:
            return {kind, "git_diff", R"({"base":"HEAD~1"})"};
        case ToolKind::kListDir:
            return {kind, "list_dir", R"({"path":"src/)" + rng.pick(module_words()) + R"("})"};
        case ToolKind::kJson:
            return {kind, "http_get", R"({"url":"http://localhost:8080/debug/vars"})"};
    }
    return {kind, "read_file", "{}"};
}

std::vector<std::string> tool_output(Rng& rng, ToolKind kind, int lines) {
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(lines) + 4);
    switch (kind) {
        case ToolKind::kReadFile:
            for (int i = 1; i <= lines; ++i) out.push_back(pad(i, 4) + "  " + source_line(rng));
            break;
        case ToolKind::kRunTests:
            out.push_back(
                "============================= test session starts ==============================");
            for (int i = 0; i < lines; ++i) out.push_back(test_line(rng));
            out.push_back("======= " + std::to_string(rng.between(40, 400)) + " passed, " +
                          std::to_string(rng.between(0, 3)) + " skipped in " +
                          std::to_string(rng.between(2, 90)) + "." +
                          std::to_string(rng.between(10, 99)) + "s =======");
            break;
        case ToolKind::kGrep:
            for (int i = 0; i < lines; ++i) out.push_back(grep_line(rng));
            break;
        case ToolKind::kBuild:
            for (int i = 1; i <= lines; ++i) out.push_back(build_line(rng, i, lines));
            out.push_back("[" + std::to_string(lines) + "/" + std::to_string(lines) +
                          "] Linking CXX executable bin/server");
            break;
        case ToolKind::kGitDiff:
            out.push_back("diff --git a/" + random_path(rng) + " b/" + random_path(rng));
            out.push_back("index " + hex(rng, 7) + ".." + hex(rng, 7) + " 100644");
            for (int i = 0; i < lines; ++i) out.push_back(diff_line(rng));
            break;
        case ToolKind::kListDir:
            out.push_back("total " + std::to_string(rng.between(8, 400)));
            for (int i = 0; i < lines; ++i) out.push_back(listing_line(rng));
            break;
        case ToolKind::kJson:
            out.push_back("{");
            for (int i = 0; i < lines; ++i) out.push_back(json_line(rng));
            out.push_back("  \"ok\": true");
            out.push_back("}");
            break;
    }
    return out;
}

std::string assistant_note(Rng& rng) {
    static const std::vector<std::string> openers = {
        "Let me look at how", "Next I will check whether", "I suspect that",
        "The output suggests that", "To narrow this down, I want to see if"};
    std::string out;
    const int sentences = rng.between(2, 5);
    for (int i = 0; i < sentences; ++i) {
        out += rng.pick(openers) + " " + random_snake(rng, 2) + " in " + random_path(rng) +
               " interacts with " + random_camel(rng, 2) + ". ";
    }
    return out;
}

std::string user_follow_up(Rng& rng) {
    static const std::vector<std::string> asks = {
        "Good. Please also check", "Before you change anything, look at",
        "That makes sense; can you verify", "Keep going, and double-check"};
    return rng.pick(asks) + " " + random_camel(rng, 2) + " in " + random_path(rng) + ".";
}

}  // namespace nucleo::quality
