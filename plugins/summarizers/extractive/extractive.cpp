// nucleo-extractive: an offline, deterministic summarizer ("nucleo.summarizer/1", compaction.42).
//
// compaction.30-33: a summary must keep what the conversation cannot afford to lose
// -- names, numbers, paths, errors and decisions. This plugin keeps whole sentences: each sentence
// scores by the kinds of such facts it carries and by where it sits, and the best-scoring
// sentences are kept until the target size; the kept sentences come back in their original order
// and on their original lines (compaction.113).
//
// Decisions of our own:
//  - Size is counted with the host's counter when the request names one ("token_counter",
//    "nucleo.host.tokens/1", compaction.111): the summary is then within its target in the model's
//    own tokens. Without one (another host, the conformance kit) it is approximated as bytes/4,
//    rounded up, and the answer says which in "token_estimate".
//  - A sentence ends at '.', '!' or '?' followed by whitespace or the end, or at a line break.
//    Kept sentences of one line are joined by a space, of different lines or segments by a line
//    break, so a log or a listing keeps its shape.
//  - What a sentence scores (compaction.113): the facts it carries (an error 4, a path 3, a
//    decision 2, a number 2, a name 2; an artifact reference always wins), a shell command line
//    3, the first sentence of a segment 1, or 5 when it is a whole line (a tool output's header),
//    the last (a run's tally) 2, a line next to an error line 1 (a failing assertion's expected and
//    actual values), a name, path or number said nowhere else in the request 2 (what tells it from
//    the boilerplate around it; digits read as one shape, so test_case_1 .. test_case_40 are not
//    rare). A sentence seen before in the request, or one with fewer than three letters or digits
//    (a wrapped fragment, "1."), scores nothing and is never kept for its facts.
//  - Ties keep the earlier sentence; sentences that carry nothing are kept last, while room
//    remains (filling the target is cheaper than a later compaction round), repeats never.
//  - When no sentence that carries facts fits whole, the best one is cut at a word boundary to
//    the target and ends with "..." (rather than keeping only filler, or nothing at all).
//  - A request without "schema_version" is read as version 1; another version is refused.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/plugin.hpp"

namespace {

/// compaction.113: what the first sentence of a segment scores for its place when it is a whole
/// line. A tool output's first line says what the rest is (the command, the counts, the file:
/// "55 passages in 9 files mention ...") and outranks any one fact of a line further down; the
/// first sentence of a paragraph ("Hello there.") scores 1.
constexpr int kFirstLineScore = 5;

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
    std::size_t line = 0;  // the line it sits on, counted across all segments
    int score = 0;         // facts and place
    int facts = 0;         // facts alone
    bool error = false;    // carries an error word (its neighbours' lines score for context)
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

void split_sentences(std::string_view text, std::size_t segment, std::size_t& line,
                     std::vector<Sentence>& out) {
    std::size_t start = 0;
    auto flush = [&](std::size_t end) {
        const std::string_view s = trim(text.substr(start, end - start));
        if (!s.empty()) out.push_back({segment, out.size(), s, line});
        start = end;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            flush(i + 1);
            ++line;
        } else if ((c == '.' || c == '!' || c == '?') &&
                   (i + 1 == text.size() || is_space(text[i + 1]))) {
            flush(i + 1);
        }
    }
    flush(text.size());
    ++line;  // a segment's last line ends with it
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

/// An error word: one of the list, or a name ending in "error" or "exception" (AssertionError,
/// TypeError, NullPointerException), or a test runner's FAIL/FAILED/ERROR in capitals.
bool is_error_word(std::string_view word, std::string_view lowered) {
    if (is_one_of(lowered,
                  {"error",    "errors",  "exception", "fail",    "fails",     "failed",  "failure",
                   "failing",  "refused", "denied",    "timeout", "crash",     "crashed", "panic",
                   "panicked", "fatal",   "traceback", "errno",   "invalid",   "cannot",  "can't",
                   "unable",   "bug",     "segfault",  "aborted", "undefined", "expected"})) {
        return true;
    }
    if (lowered.size() > 5 && (lowered.ends_with("error") || lowered.ends_with("exception"))) {
        return true;
    }
    return word == "FAIL" || word == "FAILED" || word == "ERROR" || word == "E";
}

struct Facts {
    bool number = false, path = false, name = false, error = false, decision = false;
    bool reference = false;  // «artifact:...»: compaction.33 needs it kept
    std::size_t alnum = 0;   // letters and digits: fewer than three is a fragment
};

Facts facts_of(std::string_view sentence) {
    Facts f;
    f.reference = sentence.find(
                      "\xC2\xAB"
                      "artifact:") != std::string_view::npos;
    for (char c : sentence) f.alnum += std::isalnum(static_cast<unsigned char>(c)) != 0 ? 1 : 0;
    std::string lowered;  // one word at a time, its buffer reused
    bool first = true;
    for_each_word(sentence, [&](std::string_view raw) {
        const bool at_start = first;
        first = false;
        const auto w = strip_punct(raw);
        if (w.empty()) return;
        lowered.assign(w);
        for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        f.number = f.number || std::any_of(w.begin(), w.end(), [](char c) {
                       return std::isdigit(static_cast<unsigned char>(c)) != 0;
                   });
        f.path = f.path || looks_like_path(w);
        f.name = f.name || looks_like_name(w, at_start);
        f.error = f.error || is_error_word(w, lowered);
        f.decision =
            f.decision || is_one_of(lowered, {"decided", "decide", "decision", "agreed", "agree",
                                              "chose", "choose", "chosen", "will", "must", "should",
                                              "approved", "rejected", "plan", "resolved",
                                              "conclusion", "therefore", "instead", "we'll"});
    });
    return f;
}

int score_of(const Facts& f) {
    if (f.reference) return 1000;
    if (f.alnum < 3) return 0;
    return (f.error ? 4 : 0) + (f.path ? 3 : 0) + (f.decision ? 2 : 0) + (f.number ? 2 : 0) +
           (f.name ? 2 : 0);
}

/// A shell prompt's command line ("$ make", "> npm test", "+ cmake --build"): it says what the
/// output below it is.
bool is_command(std::string_view sentence) {
    for (std::string_view prompt : {"$ ", "> ", "+ ", "% ", "# "}) {
        if (sentence.starts_with(prompt) && sentence.size() > prompt.size() + 1) return true;
    }
    return false;
}

/// compaction.113: every sentence's score, by its facts and its place. Repeats and fragments
/// score nothing; the first sentence of a segment (its role, command or request) and its last
/// (a run's result line) score for their place; a line next to an error line scores for context.
void score_all(std::vector<Sentence>& sentences) {
    // A name, path or number said once in the whole request is what tells this text from others
    // like it (a planted identifier among boilerplate, the one failing test among passes).
    // Digits are read as one shape, so test_case_1 .. test_case_40 are one term said 40 times.
    std::unordered_map<std::string, int> uses;
    std::string shape;
    auto for_each_term = [&shape](std::string_view text, auto&& each) {
        bool first = true;
        for_each_word(text, [&](std::string_view raw) {
            const auto w = strip_punct(raw);
            const bool at_start = first;
            first = false;
            if (w.size() < 4) return;
            const bool digit = std::any_of(w.begin(), w.end(), [](char c) {
                return std::isdigit(static_cast<unsigned char>(c)) != 0;
            });
            const bool alpha = std::any_of(w.begin(), w.end(), [](char c) {
                return std::isalpha(static_cast<unsigned char>(c)) != 0;
            });
            if (!alpha || !(digit || looks_like_path(w) || looks_like_name(w, at_start))) return;
            shape.clear();
            for (char c : w) {
                const bool d = std::isdigit(static_cast<unsigned char>(c)) != 0;
                if (!d)
                    shape += c;
                else if (shape.empty() || shape.back() != '#')
                    shape += '#';
            }
            each(shape);
        });
    };
    for (const Sentence& s : sentences) {
        for_each_term(s.text, [&](const std::string& w) { ++uses[w]; });
    }
    std::unordered_set<std::string_view> seen;
    std::unordered_set<std::size_t> error_lines;
    std::vector<bool> fragment(sentences.size(), false);
    for (Sentence& s : sentences) {
        const Facts f = facts_of(s.text);
        s.score = score_of(f);
        s.facts = s.score;
        s.error = f.error && f.alnum >= 3;
        fragment[s.index] = f.alnum < 3 && !f.reference;
        if (s.error) error_lines.insert(s.line);
    }
    for (std::size_t i = 0; i < sentences.size(); ++i) {
        Sentence& s = sentences[i];
        if (!seen.insert(s.text).second || fragment[i]) {
            s.score = -1;  // a repeat or a fragment: never kept for itself
            continue;
        }
        bool rare = false;
        for_each_term(s.text, [&](const std::string& w) { rare = rare || uses[w] == 1; });
        if (rare) s.score += 2;
        if (is_command(s.text)) s.score += 3;
        if (i == 0 || sentences[i - 1].segment != s.segment) {
            const bool whole_line = i + 1 == sentences.size() ||
                                    sentences[i + 1].segment != s.segment ||
                                    sentences[i + 1].line != s.line;
            s.score += whole_line ? kFirstLineScore : 1;
        }
        if (i + 1 == sentences.size() || sentences[i + 1].segment != s.segment) s.score += 2;
        if (!s.error && (error_lines.contains(s.line + 1) ||
                         (s.line > 0 && error_lines.contains(s.line - 1)))) {
            s.score += 1;
        }
    }
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

/// Tokens as the host counts them (compaction.111), or bytes/4 when it cannot.
class Measure {
  public:
    explicit Measure(std::string_view counter) : counter_(counter) {
        exact_ = !counter_.empty() && nucleo::plugin::Host::count_tokens(counter_, "") >= 0;
    }
    [[nodiscard]] bool exact() const noexcept { return exact_; }
    [[nodiscard]] std::size_t tokens(std::string_view text) const {
        if (exact_) {
            const int64_t n = nucleo::plugin::Host::count_tokens(counter_, text);
            if (n >= 0) return static_cast<std::size_t>(n);
        }
        return approx_tokens(text.size());
    }

  private:
    std::string_view counter_;
    bool exact_ = false;
};

std::size_t source_bytes_tokens(const Measure& measure, const std::vector<std::string_view>& texts,
                                std::size_t bytes) {
    if (!measure.exact()) return approx_tokens(bytes);
    std::size_t n = 0;
    for (std::string_view t : texts) n += measure.tokens(t);
    return n;
}

/// The kept sentences in their order: a space between two of one line, a line break between
/// lines and segments (compaction.113: the shape of a log or a listing survives).
std::string join(const std::vector<Sentence>& sentences, const std::vector<bool>& keep) {
    std::string out;
    std::size_t last_line = 0;
    bool any = false;
    for (const Sentence& s : sentences) {
        if (!keep[s.index]) continue;
        if (any) out += s.line != last_line ? "\n" : " ";
        out += s.text;
        last_line = s.line;
        any = true;
    }
    return out;
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

        std::string counter;
        if (req.HasMember("token_counter")) {
            if (!req["token_counter"].IsString()) bad_request("\"token_counter\" must be a string");
            counter.assign(req["token_counter"].GetString(),
                           req["token_counter"].GetStringLength());
        }
        const Measure measure{counter};

        std::vector<Sentence> sentences;
        std::size_t source_bytes = 0;
        std::size_t line = 0;
        std::vector<std::string_view> texts;
        if (req.HasMember("segments")) {
            const auto& segs = req["segments"];
            if (!segs.IsArray()) bad_request("\"segments\" must be an array of strings");
            for (rapidjson::SizeType i = 0; i < segs.Size(); ++i) {
                if (!segs[i].IsString()) {
                    bad_request("segments[" + std::to_string(i) + "] is not a string");
                }
                texts.emplace_back(segs[i].GetString(), segs[i].GetStringLength());
            }
        } else if (req.HasMember("text") && req["text"].IsString()) {
            texts.emplace_back(req["text"].GetString(), req["text"].GetStringLength());
        } else {
            bad_request("the request needs \"text\" (a string) or \"segments\"");
        }
        for (std::size_t i = 0; i < texts.size(); ++i) {
            source_bytes += texts[i].size();
            split_sentences(texts[i], i, line, sentences);
        }

        score_all(sentences);
        std::vector<const Sentence*> ranked;
        for (const auto& s : sentences) ranked.push_back(&s);
        std::stable_sort(ranked.begin(), ranked.end(),
                         [](const Sentence* a, const Sentence* b) { return a->score > b->score; });

        // Greedy by rank: a sentence that does not fit is skipped, a shorter one may still fit.
        // Each costs its own tokens and one for what joins it to the others.
        // Without the host's counter the estimate is of the bytes kept so far, as a whole.
        std::vector<bool> keep(sentences.size(), false);
        std::size_t used = 0;
        std::size_t kept = 0;
        for (const Sentence* s : ranked) {
            if (s->score < 0) break;  // repeats and fragments: never
            const std::size_t joint = kept > 0 ? 1 : 0;
            const std::size_t cost =
                measure.exact() ? measure.tokens(s->text) + joint : s->text.size() + joint;
            if ((measure.exact() ? used + cost : approx_tokens(used + cost)) > target) continue;
            keep[s->index] = true;
            used += cost;
            ++kept;
        }

        // The best sentence carries facts but did not fit while filler did: facts win, cut.
        const Sentence* best = ranked.empty()
                                   ? nullptr
                                   : *std::max_element(ranked.begin(), ranked.end(),
                                                       [](const Sentence* a, const Sentence* b) {
                                                           return a->facts < b->facts;
                                                       });
        const bool facts_lost = best != nullptr && best->facts > 0 &&
                                std::none_of(ranked.begin(), ranked.end(), [&](const Sentence* s) {
                                    return s->facts > 0 && keep[s->index];
                                });
        std::string summary;
        if ((kept == 0 || facts_lost) && best != nullptr) {
            std::size_t bytes = target * 4;
            summary = cut_to(best->text, bytes);
            while (bytes > 4 && measure.tokens(summary) > target) {
                bytes = bytes * 3 / 4;
                summary = cut_to(best->text, bytes);
            }
            kept = 1;
        } else {
            summary = join(sentences, keep);
            // Joined text may count a token more than its parts: drop the lowest-ranked kept
            // sentence until the whole is within the target.
            for (auto it = ranked.rbegin();
                 it != ranked.rend() && kept > 1 && measure.tokens(summary) > target; ++it) {
                if (!keep[(*it)->index]) continue;
                keep[(*it)->index] = false;
                --kept;
                summary = join(sentences, keep);
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
        w.Uint64(measure.tokens(summary));
        w.Key("summary_chars");
        w.Uint64(summary.size());
        w.Key("source_tokens");
        w.Uint64(source_bytes_tokens(measure, texts, source_bytes));
        w.Key("sentences_kept");
        w.Uint64(kept);
        w.Key("sentences_total");
        w.Uint64(sentences.size());
        w.Key("token_estimate");
        w.String(measure.exact() ? "host" : "bytes/4");
        w.EndObject();
        out.write({buf.GetString(), buf.GetSize()});
        nucleo::plugin::Host::log(NUCLEO_LOG_LEVEL_DEBUG,
                                  "summarized " + std::to_string(source_bytes) + " bytes into " +
                                      std::to_string(summary.size()));
    }
};

}  // namespace

NUCLEO_PLUGIN_ENTRY("extractive", "0.1.0",
                    "Offline deterministic summarizer: keeps the sentences that carry names, "
                    "numbers, paths, errors and decisions",
                    nucleo::plugin::summarizer_factory<Extractive>())
