// nucleo-extractive: an offline, deterministic summarizer ("nucleo.summarizer/1", compaction.42).
//
// compaction.30-33: a summary must keep what the conversation cannot afford to lose
// -- names, numbers, paths, errors and decisions. This plugin keeps whole sentences: each sentence
// scores by the kinds of such facts it carries, and the best-scoring sentences are kept until the
// target size; the kept sentences come back in their original order.
//
// Decisions of our own:
//  - Size is approximated as bytes/4 (rounded up): a plugin built against plugin-api/ alone has
//    no token counter; the answer says so in "token_estimate".
//  - A sentence ends at '.', '!' or '?' followed by whitespace or the end, or at a line break.
//  - Ties keep the earlier sentence; sentences that carry nothing are kept last, while room
//    remains (filling the target is cheaper than a later compaction round).
//  - When no sentence that carries facts fits whole, the best one is cut at a word boundary to
//    the target and ends with "..." (rather than keeping only filler, or nothing at all).
//  - Sentences kept from different segments are separated by a line break, within a segment by
//    a space. A request without "schema_version" is read as version 1; another version is refused.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/plugin.hpp"

namespace {

using nucleo::plugin::Failure;

std::size_t approx_tokens(std::size_t bytes) {
    return (bytes + 3) / 4;
}

/// A sentence of the request, read in place: the request document outlives every sentence, and a
/// copy would double what a summary of a large tool result costs (limits.142).
struct Sentence {
    std::size_t segment;
    std::size_t index;  // position across all segments
    std::string_view text;
    int score = 0;
};

bool is_space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string_view trim(std::string_view s) {
    std::size_t b = 0, e = s.size();
    while (b < e && is_space(s[b])) ++b;
    while (e > b && is_space(s[e - 1])) --e;
    return s.substr(b, e - b);
}

void split_sentences(std::string_view text, std::size_t segment, std::vector<Sentence>& out) {
    std::size_t start = 0;
    auto flush = [&](std::size_t end) {
        const std::string_view s = trim(text.substr(start, end - start));
        if (!s.empty()) out.push_back({segment, out.size(), s});
        start = end;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            flush(i + 1);
        } else if ((c == '.' || c == '!' || c == '?') &&
                   (i + 1 == text.size() || is_space(text[i + 1]))) {
            flush(i + 1);
        }
    }
    flush(text.size());
}

/// Calls `each` with every whitespace-separated word of `s`, in order, without storing them: a
/// sentence may be megabytes of one tool result, and the summary must not cost a multiple of it.
template <typename Each>
void for_each_word(std::string_view s, Each&& each) {
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && is_space(s[i])) ++i;
        std::size_t j = i;
        while (j < s.size() && !is_space(s[j])) ++j;
        if (j > i) each(s.substr(i, j - i));
        i = j;
    }
}

std::string_view strip_punct(std::string_view w) {
    auto edge = [](char c) {
        return std::string_view("\"'`()[]{}<>,;:.!?").find(c) != std::string_view::npos;
    };
    while (!w.empty() && edge(w.front())) w.remove_prefix(1);
    while (!w.empty() && edge(w.back())) w.remove_suffix(1);
    return w;
}

bool is_one_of(std::string_view lowered_word, std::initializer_list<std::string_view> set) {
    return std::find(set.begin(), set.end(), lowered_word) != set.end();
}

/// A path: a slash inside a word ("src/main.cpp", "/var/log"), or a file name with an extension.
bool looks_like_path(std::string_view w) {
    if (w.size() > 1 && w.find('/') != std::string_view::npos) return true;
    const auto dot = w.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 >= w.size()) return false;
    const auto ext = w.substr(dot + 1);
    const bool alpha_ext = std::all_of(ext.begin(), ext.end(), [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) != 0;
    });
    return ext.size() <= 5 && alpha_ext && std::isalnum(static_cast<unsigned char>(w[dot - 1]));
}

/// A name: a capitalised word after the first, an ALL-CAPS word, camelCase, snake_case or a::b.
bool looks_like_name(std::string_view w, bool first) {
    if (w.empty()) return false;
    if (w.find("::") != std::string_view::npos) return true;
    if (w.find('_') != std::string_view::npos && w.size() > 2) return true;
    const bool upper0 = std::isupper(static_cast<unsigned char>(w[0])) != 0;
    std::size_t uppers = 0;
    for (char c : w) uppers += std::isupper(static_cast<unsigned char>(c)) != 0 ? 1 : 0;
    if (uppers >= 2) return true;             // ALLCAPS, CamelCase
    if (!upper0 && uppers == 1) return true;  // camelCase
    return upper0 && !first;
}

int score(std::string_view sentence) {
    bool number = false, path = false, name = false, error = false, decision = false;
    std::string lowered;  // one word at a time, its buffer reused
    bool first = true;
    for_each_word(sentence, [&](std::string_view raw) {
        const bool at_start = first;
        first = false;
        const auto w = strip_punct(raw);
        if (w.empty()) return;
        lowered.assign(w);
        for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        number = number || std::any_of(w.begin(), w.end(), [](char c) {
                     return std::isdigit(static_cast<unsigned char>(c)) != 0;
                 });
        path = path || looks_like_path(w);
        name = name || looks_like_name(w, at_start);
        error =
            error ||
            is_one_of(lowered,
                      {"error",     "errors", "exception", "fail",   "fails",   "failed", "failure",
                       "refused",   "denied", "timeout",   "crash",  "crashed", "panic",  "fatal",
                       "traceback", "errno",  "invalid",   "cannot", "can't",   "unable", "bug"});
        decision = decision ||
                   is_one_of(lowered,
                             {"decided", "decide", "decision", "agreed", "agree", "chose", "choose",
                              "chosen", "will", "must", "should", "approved", "rejected", "plan",
                              "resolved", "conclusion", "therefore", "instead", "we'll"});
    });
    return (error ? 3 : 0) + (path ? 3 : 0) + (decision ? 2 : 0) + (number ? 2 : 0) +
           (name ? 2 : 0);
}

std::string cut_to(std::string_view s, std::size_t max_bytes) {
    if (max_bytes <= 3) return "...";
    std::size_t end = std::min(s.size(), max_bytes - 3);
    const auto space = s.substr(0, end).rfind(' ');
    if (space != std::string_view::npos && space > 0) end = space;
    // Never split a UTF-8 sequence: back off continuation bytes.
    while (end > 0 && end < s.size() && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
    return std::string(s.substr(0, end)) + "...";
}

[[noreturn]] void bad_request(const std::string& what) {
    throw Failure(NUCLEO_ERR_INVALID_ARGUMENT, "summarize: " + what);
}

class Extractive final : public nucleo::plugin::Summarizer {
  public:
    /// abi.109: the extractive summarizer takes no options.
    static constexpr const char* kOptionsSchema =
        R"({"type": "object", "additionalProperties": false, "properties": {}})";

    explicit Extractive(std::string_view config_json) {
        rapidjson::Document config;
        if (!config_json.empty() &&
            (config.Parse(config_json.data(), config_json.size()).HasParseError() ||
             !config.IsObject())) {
            throw Failure(NUCLEO_ERR_CONFIG, "extractive: the configuration is not a JSON object");
        }
    }

    void summarize(std::string_view request_json, nucleo::plugin::Sink& out) override {
        rapidjson::Document req;
        if (req.Parse(request_json.data(), request_json.size()).HasParseError() ||
            !req.IsObject()) {
            bad_request("the request is not a JSON object");
        }
        if (req.HasMember("schema_version") &&
            (!req["schema_version"].IsInt() || req["schema_version"].GetInt() != 1)) {
            bad_request("unsupported schema_version (this plugin reads 1)");
        }
        if (!req.HasMember("target_tokens") || !req["target_tokens"].IsUint64() ||
            req["target_tokens"].GetUint64() == 0) {
            bad_request("\"target_tokens\" must be a positive integer");
        }
        const std::size_t target = req["target_tokens"].GetUint64();

        std::vector<Sentence> sentences;
        std::size_t source_bytes = 0;
        if (req.HasMember("segments")) {
            const auto& segs = req["segments"];
            if (!segs.IsArray()) bad_request("\"segments\" must be an array of strings");
            for (rapidjson::SizeType i = 0; i < segs.Size(); ++i) {
                if (!segs[i].IsString()) {
                    bad_request("segments[" + std::to_string(i) + "] is not a string");
                }
                source_bytes += segs[i].GetStringLength();
                split_sentences({segs[i].GetString(), segs[i].GetStringLength()}, i, sentences);
            }
        } else if (req.HasMember("text") && req["text"].IsString()) {
            source_bytes = req["text"].GetStringLength();
            split_sentences({req["text"].GetString(), req["text"].GetStringLength()}, 0, sentences);
        } else {
            bad_request("the request needs \"text\" (a string) or \"segments\"");
        }

        for (auto& s : sentences) s.score = score(s.text);
        std::vector<const Sentence*> ranked;
        for (const auto& s : sentences) ranked.push_back(&s);
        std::stable_sort(ranked.begin(), ranked.end(),
                         [](const Sentence* a, const Sentence* b) { return a->score > b->score; });

        // Greedy by rank: a sentence that does not fit is skipped, a shorter one may still fit.
        std::vector<bool> keep(sentences.size(), false);
        std::size_t used_bytes = 0;
        std::size_t kept = 0;
        for (const Sentence* s : ranked) {
            const std::size_t cost = s->text.size() + (kept > 0 ? 1 : 0);
            if (approx_tokens(used_bytes + cost) > target) continue;
            keep[s->index] = true;
            used_bytes += cost;
            ++kept;
        }

        // The best sentence carries facts but did not fit while filler did: facts win, cut.
        const bool facts_lost = !ranked.empty() && ranked.front()->score > 0 &&
                                std::none_of(ranked.begin(), ranked.end(), [&](const Sentence* s) {
                                    return s->score > 0 && keep[s->index];
                                });
        std::string summary;
        if ((kept == 0 || facts_lost) && !ranked.empty()) {
            summary = cut_to(ranked.front()->text, target * 4);
            kept = 1;
        } else {
            std::size_t last_segment = 0;
            for (const auto& s : sentences) {
                if (!keep[s.index]) continue;
                if (!summary.empty()) summary += s.segment != last_segment ? "\n" : " ";
                summary += s.text;
                last_segment = s.segment;
            }
        }

        rapidjson::StringBuffer buf;
        rapidjson::Writer<rapidjson::StringBuffer> w(buf);
        w.StartObject();
        w.Key("schema_version");
        w.Int(1);
        w.Key("summary");
        w.String(summary.data(), static_cast<rapidjson::SizeType>(summary.size()));
        w.Key("summary_tokens");
        w.Uint64(approx_tokens(summary.size()));
        w.Key("summary_chars");
        w.Uint64(summary.size());
        w.Key("source_tokens");
        w.Uint64(approx_tokens(source_bytes));
        w.Key("sentences_kept");
        w.Uint64(kept);
        w.Key("sentences_total");
        w.Uint64(sentences.size());
        w.Key("token_estimate");
        w.String("bytes/4");
        w.EndObject();
        out.write({buf.GetString(), buf.GetSize()});
        nucleo::plugin::Host::log(NUCLEO_LOG_LEVEL_DEBUG,
                                  "summarized " + std::to_string(approx_tokens(source_bytes)) +
                                      " into " + std::to_string(approx_tokens(summary.size())) +
                                      " approximate tokens");
    }
};

}  // namespace

NUCLEO_PLUGIN_ENTRY("extractive", "0.1.0",
                    "Offline deterministic summarizer: keeps the sentences that carry names, "
                    "numbers, paths, errors and decisions",
                    nucleo::plugin::summarizer_factory<Extractive>())
