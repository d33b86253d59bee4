// The compaction ladder's levels over a working copy of the message list (compaction.10-16,
// compaction.30-34).
#include "compaction/work.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "artifacts/artifacts_internal.hpp"
#include "common/json_text.hpp"
#include "common/log_internal.hpp"
#include "common/utf8.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/prepared.hpp"
#include "nucleo/wire/json_escape.hpp"

namespace nucleo::compaction {

namespace {

/// compaction.114: what a summary of messages asks for, a handoff the agent can continue from.
/// The llm summarizer sends it to the model; the extractive one keeps sentences by its own rules
/// and ignores it.
constexpr const char* kHandoffInstructions =
    "Write a handoff summary of this part of a conversation for an AI agent that will continue "
    "the work from your summary alone. Use these headings, each only when it has content:\n"
    "Objective: what the user wants overall.\n"
    "User requests: each request the user made, in their words where short.\n"
    "Decisions: each decision with its reason.\n"
    "Files and identifiers: paths, function, variable, tool and record names, ids, commands.\n"
    "Errors: each error message verbatim, and whether it was fixed.\n"
    "Done: what has been completed.\n"
    "Next: what remains to do, and any open question.\n"
    "An earlier summary in the text is the record of what came before: carry its facts into "
    "yours. Keep every reference of the form «artifact:TYPE~ID» exactly as written. Do not add "
    "anything that is not in the text.";

/// compaction.114: what a summary of one tool result or tool call input asks for.
constexpr const char* kToolOutputInstructions =
    "Shorten the output of one tool call for an AI agent that will continue the work from it. "
    "Keep lines verbatim rather than rephrasing them: the command or header lines, every error "
    "and failure with the lines that explain it, file paths, identifiers, numbers, and the "
    "result's conclusion (counts, status, the last lines). Drop repeated and boilerplate lines. "
    "Keep every reference of the form «artifact:TYPE~ID» exactly as written. Do not add anything "
    "that is not in the output.";

/// compaction.114: the standing instructions a summarizer is given as context, at most this many
/// bytes (a summary call should not cost a second copy of a long system prompt).
constexpr std::size_t kObjectiveContextBytes = 4000;
/// compaction.116: the least a tool result's LIGHT summary is asked for: a sixteenth of the
/// result, and never under 128 tokens (nor over half the result). A result of 1,700 tokens asked
/// for 16 came back as two wrapped fragments; 128 tokens hold a search's or a build's header line
/// and its first findings. Measured in bench/compaction_quality: with a floor of an eighth LIGHT
/// landed within ±10% of its target in 64 of 84 runs, with this one in 71.
constexpr double kLightFloorShare = 1.0 / 16;
constexpr std::int64_t kLightFloorTokens = 128;

/// The first words of a tool result's summary (LIGHT, and the last result at AGGRESSIVE).
constexpr std::string_view kResultSummaryHeader = "[Summary of the tool result]";
/// The first words of a tool call input's summary, sent as {"summary": "..."} (compaction.103).
constexpr std::string_view kInputSummaryHeader = "[Summary of the tool call input]";

constexpr std::string_view kRefOpen =
    "\xC2\xAB"
    "artifact:";                                    // «artifact:
constexpr std::string_view kRefClose = "\xC2\xBB";  // »

/// A disjoint-set over message positions. Unions here are always of whole ranges, so every
/// component is a contiguous range of the list.
class Ranges {
  public:
    explicit Ranges(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
    std::size_t find(std::size_t i) {
        while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
        return i;
    }
    void join_range(std::size_t from, std::size_t to) {
        for (std::size_t i = from + 1; i <= to; ++i) parent_[find(i)] = find(from);
    }

  private:
    std::vector<std::size_t> parent_;
};

/// Tool pairs (compaction.32: never an orphan on either side, also with parallel calls in one
/// turn): each tool_result joined with the message carrying its tool_use, and every message
/// between them, so a summary can never land between a kept call and its result either.
Ranges pair_groups(const std::vector<Message>& msgs) {
    Ranges groups(msgs.size());
    std::unordered_map<std::string, std::size_t> use_at;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        for (const ContentBlock& b : msgs[i].blocks) {
            if (const auto* use = b.get_if<ToolUseBlock>()) use_at[use->id] = i;
            if (const auto* result = b.get_if<ToolResultBlock>()) {
                if (auto it = use_at.find(result->tool_use_id); it != use_at.end()) {
                    groups.join_range(it->second, i);
                }
            }
        }
    }
    return groups;
}

std::optional<std::size_t> last_outgoing(const std::vector<Message>& msgs) {
    for (std::size_t i = msgs.size(); i-- > 0;) {
        if (msgs[i].outgoing()) return i;
    }
    return std::nullopt;
}

/// The messages kept by position at every level (compaction.102): the most recent one our side
/// sent and the very last one, so a compacted conversation ends with the message it ended with.
std::vector<std::size_t> kept_by_position(const std::vector<Message>& msgs) {
    std::vector<std::size_t> out;
    if (msgs.empty()) return out;
    if (const auto last = last_outgoing(msgs)) out.push_back(*last);
    if (out.empty() || out.front() != msgs.size() - 1) out.push_back(msgs.size() - 1);
    return out;
}

/// Which messages a level may summarize: compactable, and not in a pair group that holds a
/// message which must stay (compactable=false, or one of `keep_also`).
std::vector<bool> summarizable(const std::vector<Message>& msgs, Ranges& groups,
                               const std::vector<std::size_t>& keep_also) {
    std::vector<bool> kept_group(msgs.size(), false);
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        if (!msgs[i].compactable) kept_group[groups.find(i)] = true;
    }
    for (std::size_t k : keep_also) kept_group[groups.find(k)] = true;
    std::vector<bool> out(msgs.size());
    for (std::size_t i = 0; i < msgs.size(); ++i) out[i] = !kept_group[groups.find(i)];
    return out;
}

/// The references of `refs` that `text` does not carry.
std::vector<std::string> missing_refs(std::string_view text, const std::vector<std::string>& refs) {
    std::vector<std::string> out;
    for (const std::string& ref : refs) {
        if (text.find(ref) == std::string_view::npos) out.push_back(ref);
    }
    return out;
}

/// The line a summary ends with when references must be re-appended ("" when none).
std::string refs_line(const std::vector<std::string>& refs) {
    if (refs.empty()) return "";
    std::string out = "\nArtifacts referenced:";
    for (const std::string& ref : refs) out += " " + ref;
    return out;
}

bool is_result_summary(const ToolResultBlock& r) {
    if (r.content.size() != 1) return false;
    const auto* t = r.content.front().get_if<TextBlock>();
    return t != nullptr && t->text.starts_with(kResultSummaryHeader);
}

/// The text of a summary after its header (and the blank that follows it).
std::string summary_body(std::string_view text, std::string_view header) {
    text.remove_prefix(std::min(header.size(), text.size()));
    while (!text.empty() && (text.front() == ' ' || text.front() == '\n')) text.remove_prefix(1);
    return std::string(text);
}

bool is_input_summary(const ToolUseBlock& u) {
    return u.input_json.starts_with(R"({"summary":")" + std::string(kInputSummaryHeader));
}

/// The body of a tool call input summarized in place ({"summary": "[header] body"}); the input
/// as it is when it does not read as one.
std::string input_summary_body(const ToolUseBlock& u) {
    rapidjson::Document d;
    d.Parse(u.input_json.data(), u.input_json.size());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("summary") || !d["summary"].IsString())
        return u.input_json;
    return summary_body({d["summary"].GetString(), d["summary"].GetStringLength()},
                        kInputSummaryHeader);
}

/// {"summary": text} as compact JSON: a tool call's input summarized in place stays an object.
std::string input_summary_json(const std::string& text) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("summary");
    w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

bool is_summary_message(const Message& m) {
    if (m.blocks.size() != 1 || !m.app_authored) return false;
    const auto* t = m.blocks.front().get_if<TextBlock>();
    return t != nullptr && t->text.starts_with(ContextWindowManager::kSummaryHeader);
}

/// Targets for jobs of `sources` tokens so that the total falls from `total` to `aim`: the room
/// left (sum − (total − aim)) shared out by weight × source, each at least kMinSummaryTokens (with
/// a `floor_share`: at least that share of its source and kLightFloorTokens, compaction.116) and,
/// below MAXIMUM, at most half its source (a summary that saves little is not worth a call).
std::vector<std::int64_t> targets_for(const std::vector<std::int64_t>& sources,
                                      const std::vector<double>& weights, std::int64_t total,
                                      std::int64_t aim, bool maximum, double floor_share) {
    const std::int64_t sum = std::accumulate(sources.begin(), sources.end(), std::int64_t{0});
    const std::int64_t room =
        std::max<std::int64_t>(0, sum - std::max<std::int64_t>(0, total - aim));
    double weighted = 0;
    for (std::size_t i = 0; i < sources.size(); ++i) {
        weighted += weights[i] * static_cast<double>(sources[i]);
    }
    std::vector<std::int64_t> out(sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
        const double share =
            weighted > 0 ? weights[i] * static_cast<double>(sources[i]) / weighted : 0;
        auto t = static_cast<std::int64_t>(std::floor(static_cast<double>(room) * share));
        if (!maximum) t = std::min(t, sources[i] / 2);
        if (floor_share > 0) {
            const auto floor =
                std::max(kLightFloorTokens,
                         static_cast<std::int64_t>(floor_share * static_cast<double>(sources[i])));
            t = std::max(t, std::min(floor, sources[i] / 2));
        }
        out[i] = std::max(ContextWindowManager::kMinSummaryTokens, t);
    }
    return out;
}

std::string role_of(const Message& m) {
    return m.outgoing() ? "User" : "Assistant";
}

void render_block(const ContentBlock& block, std::string& out, const ArtifactRegistry* registry) {
    struct Visitor {
        std::string& out;
        const ArtifactRegistry* registry;
        void operator()(const TextBlock& b) const { out += b.text; }
        void operator()(const JsonBlock& b) const { out += b.json; }
        void operator()(const PojoBlock& b) const {
            out += registry != nullptr ? artifacts::rendered_with_refs(*registry, b) : b.value_json;
        }
        void operator()(const ImageBlock& b) const { out += "[image " + b.media_type + "]"; }
        void operator()(const FileBlock& b) const {
            out += "[file " + b.name + " " + b.media_type + "]";
        }
        // compaction.105: a call input or a result summarized earlier enters as its summary's
        // body, never with its header, so a summary of the message does not quote one.
        void operator()(const ToolUseBlock& b) const {
            out += "[tool call " + b.name + " id=" + b.id + "] ";
            out += is_input_summary(b) ? input_summary_body(b) : b.input_json;
        }
        void operator()(const ToolResultBlock& b) const {
            out += "[tool result for " + b.tool_use_id + (b.is_error ? ", an error" : "") + "] ";
            if (is_result_summary(b)) {
                out += summary_body(std::get<TextBlock>(b.content.front().value).text,
                                    kResultSummaryHeader);
                out += "\n";
                return;
            }
            for (const ContentBlock& inner : b.content) {
                render_block(inner, out, registry);
                out += "\n";
            }
        }
        void operator()(const ThinkingBlock& b) const { out += "[reasoning] " + b.thinking; }
        void operator()(const RedactedThinkingBlock&) const {}
        void operator()(const SkillBlock& b) const { out += "[skill " + b.name + "] " + b.content; }
        void operator()(const ToolDefinitionBlock& b) const {
            out += render_tool_definition_text(b);
        }
        // answers.110: a provider's own block (its compaction summary, a search result) is
        // content the summary may need; it goes as the provider wrote it.
        void operator()(const ProviderBlock& b) const { out += "[" + b.type + "] " + b.json; }
    };
    std::visit(Visitor{out, registry}, block.value);
}

}  // namespace

std::string render_for_summary(const Message& message, const ArtifactRegistry* registry) {
    std::string out = role_of(message) + ": ";
    for (std::size_t i = 0; i < message.blocks.size(); ++i) {
        if (i > 0) out += "\n";
        render_block(message.blocks[i], out, registry);
    }
    return out;
}

std::string render_result_for_summary(const ToolResultBlock& result,
                                      const ArtifactRegistry* registry) {
    std::string out;
    for (const ContentBlock& inner : result.content) {
        if (!out.empty()) out += "\n";
        render_block(inner, out, registry);
    }
    return out;
}

std::vector<std::string> artifact_refs(std::string_view text) {
    std::vector<std::string> out;
    std::unordered_set<std::string_view> seen;
    std::size_t pos = 0;
    while ((pos = text.find(kRefOpen, pos)) != std::string_view::npos) {
        const std::size_t end = text.find(kRefClose, pos + kRefOpen.size());
        if (end == std::string_view::npos) break;
        const std::string_view ref = text.substr(pos, end + kRefClose.size() - pos);
        // A reference never spans a line or a blank: anything else is not one.
        if (ref.find_first_of(" \n\t") == std::string_view::npos && seen.insert(ref).second) {
            out.emplace_back(ref);
        }
        pos = end;
    }
    return out;
}

std::string cut_to_tokens(const TokenCounter& counter, std::string_view text, std::int64_t target) {
    if (counter.count_text(text) <= target) return std::string(text);
    const std::string_view ellipsis = "\xE2\x80\xA6";  // …
    auto boundary = [&](std::size_t n) {
        while (n > 0 && n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) {
            --n;
        }
        return n;
    };
    std::size_t lo = 0, hi = text.size();
    while (lo < hi) {  // the longest prefix whose cut form fits
        const std::size_t mid = boundary(lo + (hi - lo + 1) / 2);
        if (mid <= lo) break;
        std::string candidate(text.substr(0, mid));
        candidate += ellipsis;
        if (counter.count_text(candidate) <= target) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo = boundary(lo);
    return lo == 0 ? std::string() : std::string(text.substr(0, lo)) + std::string(ellipsis);
}

// ---- Work ----------------------------------------------------------------------------------

struct Work::Job {
    std::vector<std::size_t> members;  ///< a run of messages, or the one holding the result
    std::optional<std::size_t> block;  ///< set: a summary in place in msgs[members[0]]
    bool input = false;                ///< with block: of a tool call's input, not a result
    std::vector<std::string> segments;
    std::vector<std::string> refs;
    std::int64_t source = 0;
    std::int64_t target = 0;
};

struct Work::Outcome {
    bool ok = false;
    std::string summary;
    std::int64_t reported = 0;
    double cost = 0;
    std::string model;
    ErrorKind kind = ErrorKind::kPlugin;
    std::string error;
    std::string text;  ///< the composed text, header and references included
    std::int64_t tokens = 0;
    bool cut = false;
};

Work::Work(const TokenCounter& counter, const SummarizerInstance& summarizer,
           const ConversationContext& conversation, CompactionReport& report)
    : msgs(conversation.messages()),
      counter_(counter),
      summarizer_(summarizer),
      report_(report),
      conversation_id_(conversation.conversation_id()),
      registry_(&conversation.artifacts()),
      counter_lease_(counter) {
    origins.resize(msgs.size());
    std::iota(origins.begin(), origins.end(), 0);
    // compaction.114: the standing instructions' text, as context for a summarizer.
    for (const ObjectiveSlot& slot : conversation.main_objective()) {
        const auto* text = slot.value.get_if<TextBlock>();
        if (text == nullptr) continue;
        if (!objective_.empty()) objective_ += "\n";
        objective_ += text->text;
    }
    if (objective_.size() > kObjectiveContextBytes) {
        std::size_t end = kObjectiveContextBytes;
        while (end > 0 && (static_cast<unsigned char>(objective_[end]) & 0xC0) == 0x80) --end;
        objective_.resize(end);
    }
    counts.reserve(msgs.size());
    for (const Message& m : msgs) counts.push_back(counter_.count_message(m, registry_));
}

std::int64_t Work::total() const {
    return fixed + std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
}

void Work::run_level(CompactionLevel level, std::int64_t aim, std::int64_t trigger,
                     std::int64_t hard_room) {
    switch (level) {
        case CompactionLevel::kLight:
            light(aim);
            break;
        case CompactionLevel::kModerate:
            moderate(aim);
            break;
        case CompactionLevel::kAggressive:
        case CompactionLevel::kMaximum:
            collapse(level, aim, trigger, hard_room);
            break;
        case CompactionLevel::kNone:
            break;
    }
}

std::vector<Work::Outcome> Work::run_jobs(std::vector<Job>& jobs, CompactionLevel level,
                                          bool parallel) {
    auto run_one = [this, level](Job& job) {
        Outcome out;
        // limits.142: the request is written once, into room for what it holds, and the job's
        // segments are let go before the summarizer reads it, so a summary of S bytes costs the
        // conversation, the request and the summarizer's own reading of it.
        std::size_t bytes = 256;
        for (const std::string& s : job.segments) bytes += s.size() + 8;
        rapidjson::StringBuffer buf;
        buf.Reserve(bytes);
        // The shared escaper writes a string as it goes; RapidJSON's own String reserves six
        // bytes for each byte of it first.
        json_escape::StringWriter w(buf);
        w.StartObject();
        w.Key("schema_version");
        w.Int(1);
        w.Key("segments");
        w.StartArray();
        for (const std::string& s : job.segments) json_escape::write_string(w, s);
        w.EndArray();
        w.Key("target_tokens");
        w.Int64(body_target(job));
        w.Key("instructions");
        w.String(job.block ? kToolOutputInstructions : kHandoffInstructions);
        if (!objective_.empty()) {
            w.Key("objective");
            json_escape::write_string(w, objective_);
        }
        w.Key("level");
        w.String(to_string(level));
        w.Key("purpose");
        w.String("compaction");
        w.Key("token_counter");
        w.String(counter_lease_.id().c_str());
        w.EndObject();
        std::vector<std::string>().swap(job.segments);
        try {
            const std::string answer = summarizer_.summarize({buf.GetString(), buf.GetSize()});
            rapidjson::Document doc;
            // limits.120: a model's answer is read under the guard.
            if (json_guard::parse(doc, answer) || !doc.IsObject() || !doc.HasMember("summary") ||
                !doc["summary"].IsString()) {
                out.kind = ErrorKind::kProtocol;
                out.error = "the answer has no \"summary\" string";
                return out;
            }
            out.summary.assign(doc["summary"].GetString(), doc["summary"].GetStringLength());
            // compaction.115: a summary that says nothing, or says it in invalid UTF-8, is a
            // failed summary (the originals stay), never text no dialect can send.
            if (out.summary.find_first_not_of(" \t\r\n") == std::string::npos) {
                out.kind = ErrorKind::kProtocol;
                out.error = "the summary is empty";
                return out;
            }
            if (!internal::is_valid_utf8(out.summary)) {
                out.kind = ErrorKind::kProtocol;
                out.error = "the summary is not valid UTF-8";
                return out;
            }
            if (doc.HasMember("summary_tokens") && doc["summary_tokens"].IsInt64()) {
                out.reported = doc["summary_tokens"].GetInt64();
            }
            if (doc.HasMember("cost") && doc["cost"].IsNumber()) out.cost = doc["cost"].GetDouble();
            if (doc.HasMember("model") && doc["model"].IsString()) {
                out.model = doc["model"].GetString();
            }
            out.ok = true;
        } catch (const Error& e) {
            out.kind = e.kind();
            out.error = e.what();
        } catch (const std::exception& e) {
            out.kind = ErrorKind::kInternal;
            out.error = e.what();
        }
        return out;
    };

    std::vector<Outcome> outcomes(jobs.size());
    if (!parallel || jobs.size() <= 1) {
        for (std::size_t i = 0; i < jobs.size(); ++i) outcomes[i] = run_one(jobs[i]);
        return outcomes;
    }
    // compaction.41: at LIGHT and MODERATE the summaries of the separate exchanges run in parallel.
    // A few workers pull jobs in order; the instance is thread-safe (plugin.h thread rule).
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i = next++; i < jobs.size(); i = next++) outcomes[i] = run_one(jobs[i]);
    };
    const std::size_t n = std::min(jobs.size(), ContextWindowManager::kMaxParallelSummaries);
    std::vector<std::future<void>> running;
    for (std::size_t i = 1; i < n; ++i) running.push_back(std::async(std::launch::async, worker));
    worker();
    for (auto& f : running) f.get();
    return outcomes;
}

bool Work::accept(const Job& job, Outcome& outcome, CompactionLevel level) {
    const bool maximum = level == CompactionLevel::kMaximum;
    const std::string where = std::string(to_string(level)) + ": summary of " +
                              (!job.block  ? "messages from '"
                               : job.input ? "the tool call input in message '"
                                           : "the tool result in message '") +
                              msgs[job.members.front()].id + "'";
    if (!outcome.ok) {
        if (maximum) {
            // compaction.20: a failure at MAXIMUM fails the call.
            throw Error(outcome.kind, "compaction of conversation '" + conversation_id_ +
                                          "' failed at " + where + ": " + outcome.error);
        }
        report_.failures.push_back(where + " failed (originals kept): " + outcome.error);
        NUCLEO_LOG_WARN("compaction: {}", report_.failures.back());
        return false;
    }
    // What must survive: every artifact reference of the summarized text.
    const std::string header = header_of(job);
    std::string tail = refs_line(missing_refs(outcome.summary, job.refs));
    std::string body = outcome.summary;
    auto compose = [&] { return header + body + tail; };
    outcome.text = compose();
    outcome.tokens = counter_.count_text(outcome.text);
    if (outcome.tokens > job.target) {
        // compaction.111: a summary over its target is cut to it, at every level (the bounded cut
        // of MAXIMUM, compaction.14, is the same cut): the body shrinks to what the target leaves
        // after the header and the references, which are never cut (a reference cut out of the
        // body is appended).
        const std::int64_t frame = counter_.count_text(header + refs_line(job.refs));
        body = cut_to_tokens(counter_, body, std::max<std::int64_t>(0, job.target - frame));
        tail = refs_line(missing_refs(body, job.refs));
        outcome.text = compose();
        outcome.tokens = counter_.count_text(outcome.text);
        outcome.cut = true;
    }
    // compaction.104: a summary is never longer than what it replaces, counted as it will sit in
    // the conversation (message or block framing included). A longer one is a failed summary at
    // every level: the originals stay (at MAXIMUM too: they are the shorter form) and the ladder
    // goes on.
    if (const std::int64_t replacing = replacing_tokens(job, outcome.text);
        replacing >= job.source) {
        report_.failures.push_back(where +
                                   " refused (originals kept): " + std::to_string(replacing) +
                                   " tokens for " + std::to_string(job.source) + " summarized");
        NUCLEO_LOG_WARN("compaction: {}", report_.failures.back());
        return false;
    }
    // Each summary reports its size; ours is the count that matters. Small overshoots are the
    // summarizers' estimates (bytes / 4) meeting a real tokenizer: DEBUG; twice the target: WARN.
    if (outcome.tokens > 2 * job.target) {
        NUCLEO_LOG_WARN("compaction: {} is {} tokens for a target of {} (summarizer said {})",
                        where, outcome.tokens, job.target, outcome.reported);
    } else if (outcome.tokens > job.target) {
        NUCLEO_LOG_DEBUG("compaction: {} is {} tokens for a target of {} (summarizer said {})",
                         where, outcome.tokens, job.target, outcome.reported);
    }
    return true;
}

std::string Work::header_of(const Job& job) {
    return job.input   ? std::string(kInputSummaryHeader) + " "
           : job.block ? std::string(kResultSummaryHeader) + " "
                       : std::string(ContextWindowManager::kSummaryHeader) + "\n";
}

std::int64_t Work::body_target(const Job& job) const {
    // compaction.111: the summarizer is asked for what the target leaves after the header, so the
    // summary as it sits in the conversation lands on the target rather than just over it.
    return std::max<std::int64_t>(1, job.target - counter_.count_text(header_of(job)));
}

std::int64_t Work::replacing_tokens(const Job& job, const std::string& text) const {
    if (job.block) {
        ContentBlock block = msgs[job.members.front()].blocks[*job.block];
        if (job.input) {
            std::get<ToolUseBlock>(block.value).input_json = input_summary_json(text);
        } else {
            std::get<ToolResultBlock>(block.value).content = {TextBlock{text}};
        }
        return counter_.count_block(block, registry_);
    }
    return TokenArithmetic::kMessageOverheadTokens + counter_.count_text(text);
}

void Work::apply_in_place(std::size_t message, std::size_t block, const std::string& text) {
    ContentBlock& target = msgs[message].blocks[block];
    if (auto* use = target.get_if<ToolUseBlock>()) {
        use->input_json = input_summary_json(text);  // id and name stay: the pair is intact
    } else {
        auto& result = std::get<ToolResultBlock>(target.value);
        result.content = {TextBlock{text}};  // tool_use_id and is_error stay: the pair is intact
    }
    counts[message] = counter_.count_message(msgs[message], registry_);
}

void Work::replace_run(const std::vector<std::size_t>& members, std::string text) {
    Message summary;
    summary.direction = Direction::kOutgoing;
    summary.app_authored = true;  // composed by the framework, not said by the user
    summary.compactable = true;   // a later, deeper level may summarize it again
    summary.blocks = {TextBlock{std::move(text)}};
    std::unordered_set<std::string> ids;
    for (const Message& m : msgs) ids.insert(m.id);
    std::size_t n = msgs.size();
    do {
        summary.id = "summary-" + std::to_string(n++);
    } while (ids.count(summary.id) != 0);

    const std::size_t at = members.front();
    msgs[at] = std::move(summary);
    counts[at] = counter_.count_message(msgs[at], registry_);
    for (auto it = members.rbegin(); it != members.rend() && *it != at; ++it) {
        msgs.erase(msgs.begin() + static_cast<std::ptrdiff_t>(*it));
        origins.erase(origins.begin() + static_cast<std::ptrdiff_t>(*it));
        counts.erase(counts.begin() + static_cast<std::ptrdiff_t>(*it));
    }
}

void Work::execute(std::vector<Job>& jobs, CompactionLevel level) {
    if (jobs.empty()) return;
    std::vector<Outcome> outcomes = run_jobs(jobs, level, /*parallel=*/true);
    std::vector<std::size_t> order(jobs.size());
    std::iota(order.begin(), order.end(), 0);
    // In-place result summaries first (no position moves), then runs from the back, so every
    // position a job names is still right when it is applied.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (jobs[a].block.has_value() != jobs[b].block.has_value())
            return jobs[a].block.has_value();
        return jobs[a].members.front() > jobs[b].members.front();
    });
    std::vector<CompactionSummary> made;
    for (std::size_t k : order) {
        Job& job = jobs[k];
        Outcome& outcome = outcomes[k];
        if (!accept(job, outcome, level)) continue;
        CompactionSummary s;
        s.level = level;
        for (std::size_t i : job.members) s.replaced.push_back(msgs[i].id);
        s.source_tokens = job.source;
        s.target_tokens = job.target;
        s.summary_tokens = outcome.tokens;
        s.reported_tokens = outcome.reported;
        s.cut = outcome.cut;
        s.cost = outcome.cost;
        s.model = outcome.model;
        if (job.block) {
            apply_in_place(job.members.front(), *job.block, outcome.text);
            s.message_id = msgs[job.members.front()].id;
        } else {
            replace_run(job.members, std::move(outcome.text));
            s.message_id = msgs[job.members.front()].id;
        }
        made.push_back(std::move(s));
    }
    // The report lists summaries in conversation order within a level.
    std::reverse(made.begin(), made.end());
    for (auto& s : made) report_.summaries.push_back(std::move(s));
}

Work::Job Work::in_place_job(std::size_t message, std::size_t block) const {
    Job job;
    job.members = {message};
    job.block = block;
    job.source = counter_.count_block(msgs[message].blocks[block], registry_);
    if (const auto* use = msgs[message].blocks[block].get_if<ToolUseBlock>()) {
        // compaction.103: a tool call's input, summarized in place (the call's id and name stay).
        job.input = true;
        job.segments = {is_input_summary(*use)
                            ? input_summary_body(*use)
                            : "[tool call " + use->name + "] " + use->input_json};
        job.refs = artifact_refs(job.segments.front());
        return job;
    }
    const auto& result = std::get<ToolResultBlock>(msgs[message].blocks[block].value);
    // compaction.105: a summary summarized again is read without its header, so the new one
    // replaces it instead of quoting it.
    job.segments = {is_result_summary(result)
                        ? summary_body(std::get<TextBlock>(result.content.front().value).text,
                                       kResultSummaryHeader)
                        : render_result_for_summary(result, registry_)};
    job.refs = artifact_refs(job.segments.front());
    return job;
}

Work::Job Work::run_job(std::vector<std::size_t> members) const {
    Job job;
    for (std::size_t i : members) {
        // compaction.105: an earlier summary enters as its body, not as "User: [Summary ...".
        job.segments.push_back(
            is_summary_message(msgs[i])
                ? summary_body(std::get<TextBlock>(msgs[i].blocks.front().value).text,
                               ContextWindowManager::kSummaryHeader)
                : render_for_summary(msgs[i], registry_));
        job.source += counts[i];
        for (std::string& ref : artifact_refs(job.segments.back())) {
            if (std::find(job.refs.begin(), job.refs.end(), ref) == job.refs.end()) {
                job.refs.push_back(std::move(ref));
            }
        }
    }
    job.members = std::move(members);
    return job;
}

void Work::light(std::int64_t aim) {
    // LIGHT: "Only tool results; everything else stays as it was." The most recent outgoing
    // message (and its pair) stays as it is. compaction.103: a result summarized in place keeps
    // its block, id and is_error, so its pair stays whole; a pinned message elsewhere in its pair
    // group does not shield it, only its own message being pinned does.
    // A compactable tool call whose pair group holds a pinned message is summarized in place too
    // (its input): no later level can take it, since the group stays.
    Ranges groups = pair_groups(msgs);
    std::vector<bool> kept_group(msgs.size(), false);
    for (std::size_t k : kept_by_position(msgs)) kept_group[groups.find(k)] = true;
    std::vector<bool> pinned_group(msgs.size(), false);
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        if (!msgs[i].compactable) pinned_group[groups.find(i)] = true;
    }
    std::vector<Job> jobs;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        if (!msgs[i].compactable || kept_group[groups.find(i)]) continue;
        for (std::size_t b = 0; b < msgs[i].blocks.size(); ++b) {
            if (const auto* use = msgs[i].blocks[b].get_if<ToolUseBlock>()) {
                if (!pinned_group[groups.find(i)] || is_input_summary(*use)) continue;
                Job job = in_place_job(i, b);
                if (job.source >= ContextWindowManager::kMinSummarizedTokens) {
                    jobs.push_back(std::move(job));
                }
                continue;
            }
            // compaction.112: a result summarized by an earlier compaction is taken again (its
            // body, compaction.105) before the ladder moves up to summarizing whole exchanges.
            if (msgs[i].blocks[b].get_if<ToolResultBlock>() == nullptr) continue;
            Job job = in_place_job(i, b);
            if (job.source >= ContextWindowManager::kMinSummarizedTokens) jobs.push_back(job);
        }
    }
    // compaction.112: results are taken oldest first and only as many as the aim needs (each at
    // most halves, targets_for, so the taken ones hold twice what has to go), and LIGHT lands on
    // the aim rather than far under it. The most recent results are what the model is working
    // with: they are taken only when the older ones cannot give enough.
    std::size_t older = jobs.size();
    for (std::size_t recent = 0;
         older > 0 && recent < ContextWindowManager::kRecentToolResultsKept;) {
        if (!jobs[--older].input) ++recent;
    }
    const std::int64_t need = std::max<std::int64_t>(0, total() - aim);
    std::int64_t held = 0;
    for (std::size_t k = 0; k < older; ++k) held += jobs[k].source;
    if (held < 2 * need) older = jobs.size();
    std::size_t used = 0;
    for (held = 0; used < older && held < 2 * need;) held += jobs[used++].source;
    jobs.resize(used);
    std::vector<std::int64_t> sources;
    for (const Job& j : jobs) sources.push_back(j.source);
    // compaction.116: a LIGHT summary is asked for at least its floor (kLightFloorShare of its
    // result, kLightFloorTokens), so it still says what the result held; when the aim needs
    // more, the ladder decides whether to climb.
    const auto targets = targets_for(sources, std::vector<double>(jobs.size(), 1.0), total(), aim,
                                     false, kLightFloorShare);
    for (std::size_t k = 0; k < jobs.size(); ++k) jobs[k].target = targets[k];
    execute(jobs, CompactionLevel::kLight);
}

void Work::moderate(std::int64_t aim) {
    // MODERATE: "Each exchange (the messages between two answers of the model) becomes one
    // summary; the older the exchange, the shorter its summary." Decision: an exchange is one
    // answer of the model and what our side sent back before the next answer (the messages before
    // the first answer are one exchange too), so a call and its results fall in one exchange; it
    // is widened until no tool pair crosses its edge.
    Ranges groups = pair_groups(msgs);
    const std::vector<bool> ok = summarizable(msgs, groups, kept_by_position(msgs));
    Ranges exchanges = pair_groups(msgs);
    for (std::size_t i = 1; i < msgs.size(); ++i) {
        if (!(msgs[i].incoming() && msgs[i - 1].outgoing())) exchanges.join_range(i - 1, i);
    }
    std::vector<Job> jobs;
    // compaction.117: the running summary. The earliest summary of messages takes in every
    // message after it up to the first one compaction may not touch, so a conversation compacted
    // again keeps one summary that is updated in place rather than a chain of them.
    std::vector<bool> taken(msgs.size(), false);
    const auto first_summary = std::find_if(
        msgs.begin(), msgs.end(), [&](const Message& m) { return is_summary_message(m); });
    if (first_summary != msgs.end()) {
        std::vector<std::size_t> running;
        for (auto i = static_cast<std::size_t>(first_summary - msgs.begin());
             i < msgs.size() && ok[i]; ++i)
            running.push_back(i);
        if (running.size() > 1) {
            for (std::size_t i : running) taken[i] = true;
            Job job = run_job(std::move(running));
            if (job.source >= ContextWindowManager::kMinSummarizedTokens) jobs.push_back(job);
        }
    }
    for (std::size_t start = 0; start < msgs.size();) {
        std::size_t end = start;
        while (end + 1 < msgs.size() && exchanges.find(end + 1) == exchanges.find(start)) ++end;
        std::vector<std::size_t> members;
        for (std::size_t i = start; i <= end; ++i) {
            if (ok[i] && !taken[i]) members.push_back(i);
        }
        const bool only_a_summary = members.size() == 1 && is_summary_message(msgs[members[0]]);
        if (!members.empty() && !only_a_summary) {
            Job job = run_job(std::move(members));
            if (job.source >= ContextWindowManager::kMinSummarizedTokens) jobs.push_back(job);
        }
        start = end + 1;
    }
    // Oldest first, for the weights by age (the running summary holds the oldest messages).
    std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
        return a.members.front() < b.members.front();
    });
    std::vector<std::int64_t> sources;
    std::vector<double> weights;
    for (std::size_t k = 0; k < jobs.size(); ++k) {
        sources.push_back(jobs[k].source);
        const auto age = static_cast<double>(jobs.size() - 1 - k);  // 0: the newest exchange
        weights.push_back(1.0 / (1.0 + age));
    }
    const auto targets = targets_for(sources, weights, total(), aim, false, 0.0);
    for (std::size_t k = 0; k < jobs.size(); ++k) jobs[k].target = targets[k];
    execute(jobs, CompactionLevel::kModerate);
}

void Work::collapse(CompactionLevel level, std::int64_t aim, std::int64_t trigger,
                    std::int64_t hard_room) {
    // AGGRESSIVE: "Everything that may be compacted becomes one summary of the whole
    // conversation." compaction.102: the most recent outgoing message is never folded in: a
    // question is kept by position, and when it holds tool results they get "a summary of their
    // own" in place while the call they answer stays. The last message is kept too.
    const bool maximum = level == CompactionLevel::kMaximum;
    Ranges groups = pair_groups(msgs);
    const std::vector<bool> ok = summarizable(msgs, groups, kept_by_position(msgs));

    std::vector<Job> jobs;
    std::vector<std::size_t> members;
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        if (ok[i]) members.push_back(i);
    }
    const bool only_a_summary = members.size() == 1 && is_summary_message(msgs[members[0]]);
    if (!members.empty() && (maximum || !only_a_summary)) jobs.push_back(run_job(members));
    // The tool results the collapse cannot take — in the message kept by position, or in a pair
    // group that holds a pinned message — get a summary of their own in place (compaction.102,
    // compaction.103), so what stays whole is only what is pinned. MAXIMUM summarizes an earlier
    // result summary again to cut it further.
    for (std::size_t i = 0; i < msgs.size(); ++i) {
        if (ok[i] || !msgs[i].compactable) continue;
        for (std::size_t b = 0; b < msgs[i].blocks.size(); ++b) {
            const auto* result = msgs[i].blocks[b].get_if<ToolResultBlock>();
            const auto* use = msgs[i].blocks[b].get_if<ToolUseBlock>();
            if (result == nullptr && use == nullptr) continue;
            const bool summarized =
                result != nullptr ? is_result_summary(*result) : is_input_summary(*use);
            Job job = in_place_job(i, b);
            const bool worth = job.source >= ContextWindowManager::kMinSummarizedTokens &&
                               (maximum || !summarized);
            if (worth) jobs.push_back(std::move(job));
        }
    }
    if (jobs.empty()) return;

    std::vector<std::int64_t> sources;
    for (const Job& j : jobs) sources.push_back(j.source);
    const std::vector<double> weights(jobs.size(), 1.0);
    if (maximum) {
        // Aim where a fit is possible. What compaction may not touch, plus the
        // smallest summaries, is the floor; the aim falls back from under the trigger to the
        // trigger, then to the hard limit minus the reserve.
        const std::int64_t sum = std::accumulate(sources.begin(), sources.end(), std::int64_t{0});
        const std::int64_t floor =
            total() - sum +
            static_cast<std::int64_t>(jobs.size()) * ContextWindowManager::kMinSummaryTokens;
        if (floor > aim) aim = floor <= trigger ? trigger : hard_room;
    }
    const auto targets = targets_for(sources, weights, total(), aim, maximum, 0.0);
    for (std::size_t k = 0; k < jobs.size(); ++k) {
        // compaction.104: never ask for more than the source; the cut then keeps it shorter.
        jobs[k].target = std::max<std::int64_t>(1, std::min(targets[k], jobs[k].source - 1));
    }
    execute(jobs, level);

    if (maximum) {
        // Overheads the targets did not see (message framing): trim the whole-conversation
        // summary further until the aim is met or it is down to its header and references.
        for (int round = 0; round < 3 && total() > aim; ++round) {
            auto it = std::find_if(msgs.begin(), msgs.end(), is_summary_message);
            if (it == msgs.end()) break;
            const auto at = static_cast<std::size_t>(it - msgs.begin());
            auto& text = std::get<TextBlock>(it->blocks.front().value).text;
            const std::int64_t want = counter_.count_text(text) - (total() - aim);
            if (want <= 0) break;
            // References survive the trim: cut the rest, then put back any that fell out.
            const std::vector<std::string> refs = artifact_refs(text);
            const std::int64_t room = want - counter_.count_text(refs_line(refs));
            std::string cut = cut_to_tokens(counter_, text, room);
            if (cut.size() >= text.size() ||
                cut.size() <= std::string_view(ContextWindowManager::kSummaryHeader).size()) {
                break;
            }
            cut += refs_line(missing_refs(cut, refs));
            text = std::move(cut);
            counts[at] = counter_.count_message(*it, registry_);
        }
    }
}

}  // namespace nucleo::compaction
