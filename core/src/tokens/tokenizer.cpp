#include "nucleo/tokenizer.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "common/log_internal.hpp"
#include "nucleo/errors.hpp"
#include "tokens/bpe.hpp"
#include "tokens/pretokenize.hpp"
#include "tokens/registry.hpp"

namespace nucleo {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFetchCommand = "scripts/fetch-tokenizer-ranks";
/// anthropic_approx = ceil(cl100k_base count × kAnthropicFactor); see tokenizer.hpp.
constexpr double kAnthropicFactor = 1.2;

struct Known {
    const char* name;
    bool exact;
    tokens::Pattern pattern;
};
constexpr Known kKnown[] = {
    {"o200k_base", true, tokens::Pattern::kO200k},
    {"cl100k_base", true, tokens::Pattern::kCl100k},
    {"anthropic_approx", false, tokens::Pattern::kCl100k},
};

std::string known_list() {
    std::string out;
    for (const Known& k : kKnown) {
        if (!out.empty()) out += ", ";
        out += k.name;
    }
    return out;
}

int base64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

bool base64_decode(std::string_view in, std::string& out) {
    out.clear();
    std::uint32_t acc = 0;
    int bits = 0;
    for (const char ch : in) {
        if (ch == '=') break;
        const int v = base64_value(static_cast<unsigned char>(ch));
        if (v < 0) return false;
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xFF));
        }
    }
    return !out.empty();
}

[[noreturn]] void malformed(const fs::path& file, std::size_t line, const std::string& what) {
    throw Error(ErrorKind::kConfig, "tokenizer rank file " + file.string() + ":" +
                                        std::to_string(line) + ": " + what + " (re-run " +
                                        kFetchCommand + ")");
}

void load_ranks(const fs::path& file, tokens::RankTable& table) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw Error(ErrorKind::kNotFound, "cannot open tokenizer rank file " + file.string());
    std::string line;
    std::string bytes;
    std::size_t line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.empty()) continue;
        const std::size_t space = line.find(' ');
        if (space == std::string::npos) malformed(file, line_no, "expected \"BASE64 RANK\"");
        if (!base64_decode(std::string_view(line).substr(0, space), bytes)) {
            malformed(file, line_no, "bad base64");
        }
        char* end = nullptr;
        const unsigned long rank = std::strtoul(line.c_str() + space + 1, &end, 10);
        if (end == line.c_str() + space + 1 || rank >= tokens::kNoRank) {
            malformed(file, line_no, "bad rank");
        }
        if (!table.insert(bytes, static_cast<std::uint32_t>(rank))) {
            malformed(file, line_no, "token bytes listed twice");
        }
    }
    for (int b = 0; b < 256; ++b) {
        const auto byte = static_cast<std::uint8_t>(b);
        if (table.find(&byte, 1) == tokens::kNoRank) {
            malformed(file, line_no, "byte " + std::to_string(b) + " has no token");
        }
    }
}

}  // namespace

class Tokenizer::Impl {
public:
    std::string name;
    bool exact = true;
    tokens::Pattern pattern = tokens::Pattern::kO200k;
    tokens::RankTable ranks;
    std::map<std::uint32_t, std::string> specials;  // id → text, for decode
    const Tokenizer* base = nullptr;                // the exact counter an approximation scales

    static std::unique_ptr<Impl> load(const Known& known, const std::vector<fs::path>& dirs) {
        auto impl = std::make_unique<Impl>();
        impl->name = known.name;
        impl->exact = known.exact;
        impl->pattern = known.pattern;
        if (!known.exact) {
            impl->base = &Tokenizer::get("cl100k_base");
            return impl;
        }
        const std::string file_name = impl->name + ".tiktoken";
        std::string tried;
        for (const fs::path& dir : dirs) {
            const fs::path file = dir / file_name;
            std::error_code ec;
            if (!fs::is_regular_file(file, ec)) {
                tried += (tried.empty() ? "" : ", ") + file.string();
                continue;
            }
            load_ranks(file, impl->ranks);
            impl->load_specials(dir / (impl->name + ".special.tsv"));
            NUCLEO_LOG_DEBUG("tokenizer {}: {} ranks from {}", impl->name, impl->ranks.size(),
                             file.string());
            return impl;
        }
        throw Error(ErrorKind::kNotFound, "tokenizer " + impl->name + ": rank file not found at " +
                                              tried + "; run " + kFetchCommand +
                                              " (or set NUCLEO_TOKENIZER_DIR to a folder holding " +
                                              file_name + ")");
    }

    void load_specials(const fs::path& file) {
        std::ifstream in(file, std::ios::binary);
        std::string line;
        std::size_t line_no = 0;
        while (in && std::getline(in, line)) {
            ++line_no;
            if (line.empty()) continue;
            const std::size_t tab = line.rfind('\t');
            char* end = nullptr;
            const unsigned long id =
                tab == std::string::npos ? 0 : std::strtoul(line.c_str() + tab + 1, &end, 10);
            if (tab == std::string::npos || end == line.c_str() + tab + 1) {
                malformed(file, line_no, "expected \"TEXT<TAB>ID\"");
            }
            specials[static_cast<std::uint32_t>(id)] = line.substr(0, tab);
        }
    }

    void require_exact(const char* what) const {
        if (!exact) {
            throw NotImplementedException("tokenizer " + name + " is an approximation: it counts "
                                          "tokens but has no " + what);
        }
    }
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

const Tokenizer& Tokenizer::get(std::string_view name) {
    // Recursive: anthropic_approx loads cl100k_base while the lock is held.
    static std::recursive_mutex mutex;
    static std::map<std::string, std::unique_ptr<Tokenizer>, std::less<>> loaded;
    std::lock_guard lock(mutex);
    if (auto it = loaded.find(name); it != loaded.end()) return *it->second;
    for (const Known& known : kKnown) {
        if (name == known.name) {
            auto tokenizer = std::make_unique<Tokenizer>(Impl::load(known, tokens::search_dirs()));
            const Tokenizer& ref = *tokenizer;
            loaded.emplace(std::string(name), std::move(tokenizer));
            return ref;
        }
    }
    throw Error(ErrorKind::kNotFound,
                "unknown tokenizer \"" + std::string(name) + "\" (known: " + known_list() + ")");
}

namespace tokens {

std::vector<fs::path> search_dirs() {
    if (const char* env = std::getenv("NUCLEO_TOKENIZER_DIR"); env != nullptr && *env != '\0') {
        return {fs::path(env)};
    }
    return {fs::path(NUCLEO_TOKENIZER_CACHE_DIR), fs::path(NUCLEO_TOKENIZER_INSTALLED_DIR)};
}

std::unique_ptr<Tokenizer> load_tokenizer(std::string_view name, const std::vector<fs::path>& dirs) {
    for (const Known& known : kKnown) {
        if (known.exact && name == known.name) {
            return std::make_unique<Tokenizer>(Tokenizer::Impl::load(known, dirs));
        }
    }
    throw Error(ErrorKind::kNotFound, "no exact tokenizer \"" + std::string(name) +
                                          "\" to load (known: " + known_list() + ")");
}

}  // namespace tokens

std::vector<std::string> Tokenizer::names() {
    std::vector<std::string> out;
    for (const Known& k : kKnown) out.emplace_back(k.name);
    return out;
}

const std::string& Tokenizer::name() const noexcept { return impl_->name; }
bool Tokenizer::exact() const noexcept { return impl_->exact; }

std::vector<std::uint32_t> Tokenizer::encode(std::string_view text) const {
    impl_->require_exact("token ids");
    std::vector<std::uint32_t> out;
    out.reserve(text.size() / 3 + 1);
    tokens::pretokenize(impl_->pattern, text, [&](std::string_view piece, bool) {
        tokens::byte_pair_encode(impl_->ranks, piece, out);
    });
    return out;
}

std::size_t Tokenizer::count(std::string_view text) const {
    if (!impl_->exact) {
        const auto base = static_cast<double>(impl_->base->count(text));
        return static_cast<std::size_t>(std::ceil(base * kAnthropicFactor));
    }
    std::size_t n = 0;
    tokens::pretokenize(impl_->pattern, text, [&](std::string_view piece, bool) {
        n += tokens::byte_pair_count(impl_->ranks, piece);
    });
    return n;
}

std::string Tokenizer::decode(std::span<const std::uint32_t> ids) const {
    impl_->require_exact("token ids to decode");
    std::string out;
    std::string_view bytes;
    for (std::size_t k = 0; k < ids.size(); ++k) {
        if (impl_->ranks.bytes(ids[k], bytes)) {
            out.append(bytes);
        } else if (auto it = impl_->specials.find(ids[k]); it != impl_->specials.end()) {
            out.append(it->second);
        } else {
            throw Error(ErrorKind::kInvalidArgument, "decode: id " + std::to_string(ids[k]) +
                                                         " at position " + std::to_string(k) +
                                                         " is not a token of " + impl_->name);
        }
    }
    return out;
}

std::vector<std::string_view> Tokenizer::split(std::string_view text) const {
    std::vector<std::string_view> out;
    tokens::pretokenize(impl_->pattern, text,
                        [&](std::string_view piece, bool) { out.push_back(piece); });
    return out;
}

}  // namespace nucleo
