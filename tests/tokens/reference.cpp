#include "reference.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nucleo::testing {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + p.string());
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::uint32_t u32(const std::string& s, std::size_t& at, const fs::path& file) {
    if (at + 4 > s.size()) throw std::runtime_error("truncated " + file.string());
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + k])) << (8 * k);
    at += 4;
    return v;
}

/// How one reference is made: the script of tests/tokens/peers run by node as
/// `node SCRIPT NODE_MODULES OUT_DIR ARGS...`, and the files whose change makes it again.
struct Recipe {
    std::string script;
    std::vector<fs::path> inputs;  ///< besides corpus.mjs, the script and the npm lock file
    std::vector<std::string> args;
};

fs::path peers() {
    return fs::path(NUCLEO_SOURCE_DIR) / "tests/tokens/peers";
}

/// True when `out` exists and is newer than every script and input that makes it.
bool up_to_date(const fs::path& out, const Recipe& recipe) {
    std::error_code ec;
    if (!fs::exists(out, ec)) return false;
    const auto made = fs::last_write_time(out, ec);
    std::vector<fs::path> inputs = recipe.inputs;
    inputs.push_back(peers() / "corpus.mjs");
    inputs.push_back(peers() / recipe.script);
    for (const fs::path& input : inputs) {
        if (fs::last_write_time(input, ec) > made) return false;
    }
    const fs::path lock = fs::path(NUCLEO_SOURCE_DIR) / ".cache/tokenizer/npm/package-lock.json";
    return !fs::exists(lock, ec) || fs::last_write_time(lock, ec) <= made;
}

void make(const fs::path& dir, const Recipe& recipe) {
    const fs::path modules = fs::path(NUCLEO_SOURCE_DIR) / ".cache/tokenizer/npm/node_modules";
    if (std::system("node --version >/dev/null 2>&1") != 0) {
        throw std::runtime_error(
            "node is not installed: the tokenizer parity reference comes from the npm packages "
            "tiktoken and js-tiktoken run by node (run scripts/bootstrap)");
    }
    if (!fs::exists(modules / "tiktoken") || !fs::exists(modules / "js-tiktoken")) {
        throw std::runtime_error("npm packages tiktoken/js-tiktoken missing in " +
                                 modules.string() + ": run scripts/fetch-tokenizer-ranks");
    }
    for (const fs::path& input : recipe.inputs) {
        if (!fs::exists(input)) {
            throw std::runtime_error(input.string() + " is missing: run scripts/fetch-unicode-data");
        }
    }
    std::string cmd = "node '" + (peers() / recipe.script).string() + "' '" + modules.string() +
                      "' '" + dir.string() + "'";
    for (const std::string& arg : recipe.args) cmd += " '" + arg + "'";
    cmd += " >&2";
    if (std::system(cmd.c_str()) != 0) {
        throw std::runtime_error("making the tokenizer reference failed: " + cmd);
    }
}

Reference load(const fs::path& dir, const Recipe& recipe) {
    fs::create_directories(dir);
    const fs::path corpus = dir / "corpus.bin";
    {
        // ctest may run several of these processes at once: one makes, the others wait.
        const int fd = ::open((dir / ".lock").c_str(), O_CREAT | O_RDWR, 0644);
        if (fd < 0) throw std::runtime_error("cannot open lock in " + dir.string());
        ::flock(fd, LOCK_EX);
        try {
            if (!up_to_date(corpus, recipe)) {
                fs::remove(corpus);
                make(dir, recipe);
            }
        } catch (...) {
            ::close(fd);
            throw;
        }
        ::close(fd);
    }
    Reference ref;
    ref.dir = dir.string();
    const std::string data = read_file(corpus);
    for (std::size_t at = 0; at < data.size();) {
        const std::uint32_t len = u32(data, at, corpus);
        if (at + len > data.size()) throw std::runtime_error("truncated " + corpus.string());
        ref.docs.push_back(data.substr(at, len));
        at += len;
    }
    ref.versions = read_file(dir / "versions.txt");
    return ref;
}

}  // namespace

IdTable Reference::ids(const std::string& encoding, const std::string& package) const {
    const fs::path file = fs::path(dir) / (encoding + "." + package + ".ids");
    const std::string data = read_file(file);
    IdTable out;
    std::size_t at = 0;
    for (std::size_t d = 0; d < docs.size(); ++d) {
        const std::uint32_t n = u32(data, at, file);
        if (n == 0xFFFFFFFFu) {
            out.emplace_back(std::nullopt);
            continue;
        }
        std::vector<std::uint32_t> ids(n);
        for (auto& id : ids) id = u32(data, at, file);
        out.emplace_back(std::move(ids));
    }
    if (at != data.size()) throw std::runtime_error("trailing data in " + file.string());
    return out;
}

const Reference& reference() {
    static const Reference ref =
        load(fs::path(NUCLEO_BINARY_DIR) / "tokens-ref", {"reference.mjs", {}, {}});
    return ref;
}

const Reference& code_points_reference() {
    const fs::path list =
        fs::path(NUCLEO_SOURCE_DIR) / ".cache/tokenizer/ucd/assigned-after-15.0.0.txt";
    static const Reference ref = load(fs::path(NUCLEO_BINARY_DIR) / "tokens-ref-code-points",
                                      {"code_points.mjs", {list}, {list.string()}});
    return ref;
}

}  // namespace nucleo::testing
