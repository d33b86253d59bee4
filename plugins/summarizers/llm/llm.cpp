// nucleo-llm: a summarizer that asks a model ("nucleo.summarizer/1", compaction.40).
//
// compaction.40: every summary is a call to a model, run as a job of its own at the SMALL grade
// unless the compactor is built with another, admitted against rate limits, recorded and costed
// like any other call. The plugin does not call a
// provider itself: it asks the host through "nucleo.host.model_call/1" (plugin.h 1.1), and the
// host picks the model, limits, records and costs the call. The answer carries the call's cost
// and model so the core's compaction report can show them.
//
// Configuration (JSON object, all optional): {"grade": "SMALL"|"MEDIUM"|"LARGE" (default SMALL),
// "model": "<catalog id>" (wins over grade)}.
//
// Decisions of our own:
//  - The prompt is the request's "instructions" (the core's, compaction.114: a handoff with
//    headings for a run of messages, a verbatim shortening for one tool output) or this plugin's
//    own prompt of the same intent, then the conversation's standing instructions as context when
//    the request carries them ("objective"), then the size asked for, then the segments, each
//    under a "--- part N ---" line. The system prompt says what the writer is for.
//  - The answer is capped at 2 × target_tokens + 64 output tokens: room for a model that
//    overshoots a little, never an unbounded bill; the core checks the size anyway.
//  - "summary_tokens" is the answer's output token count as the provider reported it.
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "nucleo/plugin.hpp"

namespace {

using nucleo::plugin::Failure;

/// compaction.114: who the model is while it writes a summary.
constexpr const char* kSystem =
    "You write the working memory of an AI agent: summaries it continues its work from. Be exact "
    "and terse; copy names, paths, numbers and error messages verbatim; never invent.";

constexpr const char* kDefaultInstructions =
    "Summarize this part of a conversation for an AI agent that will continue the work from your "
    "summary alone. Keep file paths, identifiers, numbers, error messages and decisions with "
    "their reasons, and every «artifact:TYPE~ID» reference exactly as written. Do not add "
    "anything that is not in the text.";

int32_t append(void* ctx, const char* data, size_t size) {
    static_cast<std::string*>(ctx)->append(data, size);
    return NUCLEO_OK;
}

class Llm final : public nucleo::plugin::Summarizer {
  public:
    /// abi.109: the options of the `llm` summarizer.
    static constexpr const char* kOptionsSchema = R"({
      "type": "object", "additionalProperties": false,
      "properties": {
        "grade": {"type": "string", "enum": ["SMALL", "MEDIUM", "LARGE"],
                  "description": "the grade of the model asked, default SMALL"},
        "model": {"type": "string", "minLength": 1, "description": "a catalog id, wins over grade"}
      }
    })";

    explicit Llm(std::string_view config_json) {
        rapidjson::Document config;
        if (!config_json.empty() &&
            (config.Parse(config_json.data(), config_json.size()).HasParseError() ||
             !config.IsObject())) {
            throw Failure(NUCLEO_ERR_CONFIG, "llm: the configuration is not a JSON object");
        }
        if (config_json.empty()) return;
        if (config.HasMember("grade")) {
            if (!config["grade"].IsString()) {
                throw Failure(NUCLEO_ERR_CONFIG, "llm: \"grade\" must be a string");
            }
            grade_ = config["grade"].GetString();
            if (grade_ != "SMALL" && grade_ != "MEDIUM" && grade_ != "LARGE") {
                throw Failure(
                    NUCLEO_ERR_CONFIG,
                    "llm: \"grade\" must be SMALL, MEDIUM or LARGE, got \"" + grade_ + "\"");
            }
        }
        if (config.HasMember("model")) {
            if (!config["model"].IsString()) {
                throw Failure(NUCLEO_ERR_CONFIG, "llm: \"model\" must be a catalog id string");
            }
            model_ = config["model"].GetString();
        }
    }

    void summarize(std::string_view request_json, nucleo::plugin::Sink& out) override {
        rapidjson::Document req;
        if (req.Parse(request_json.data(), request_json.size()).HasParseError() ||
            !req.IsObject()) {
            throw Failure(NUCLEO_ERR_INVALID_ARGUMENT,
                          "summarize: the request is not a JSON object");
        }
        if (!req.HasMember("target_tokens") || !req["target_tokens"].IsUint64() ||
            req["target_tokens"].GetUint64() == 0) {
            throw Failure(NUCLEO_ERR_INVALID_ARGUMENT,
                          "summarize: \"target_tokens\" must be a positive integer");
        }
        const std::uint64_t target = req["target_tokens"].GetUint64();
        std::string prompt = req.HasMember("instructions") && req["instructions"].IsString()
                                 ? req["instructions"].GetString()
                                 : kDefaultInstructions;
        if (req.HasMember("objective") && req["objective"].IsString() &&
            req["objective"].GetStringLength() > 0) {
            prompt +=
                "\n\nThe agent's standing instructions, as context (do not summarize them):\n";
            prompt.append(req["objective"].GetString(), req["objective"].GetStringLength());
        }
        prompt += "\n\nWrite at most about " + std::to_string(target) +
                  " tokens. Answer with the summary only.\n";
        if (req.HasMember("segments") && req["segments"].IsArray()) {
            const auto& segs = req["segments"];
            for (rapidjson::SizeType i = 0; i < segs.Size(); ++i) {
                if (!segs[i].IsString()) {
                    throw Failure(NUCLEO_ERR_INVALID_ARGUMENT,
                                  "summarize: segments[" + std::to_string(i) + "] is not a string");
                }
                prompt += "\n--- part " + std::to_string(i + 1) + " ---\n";
                prompt.append(segs[i].GetString(), segs[i].GetStringLength());
            }
        } else if (req.HasMember("text") && req["text"].IsString()) {
            prompt += "\n---\n";
            prompt.append(req["text"].GetString(), req["text"].GetStringLength());
        } else {
            throw Failure(NUCLEO_ERR_INVALID_ARGUMENT,
                          "summarize: the request needs \"text\" (a string) or \"segments\"");
        }

        const std::string answer = call_model(prompt, 2 * target + 64);
        rapidjson::Document doc;
        if (doc.Parse(answer.data(), answer.size()).HasParseError() || !doc.IsObject() ||
            !doc.HasMember("text") || !doc["text"].IsString()) {
            throw Failure(NUCLEO_ERR_PROTOCOL, "llm: the host's model-call answer has no \"text\"");
        }
        std::string summary(doc["text"].GetString(), doc["text"].GetStringLength());
        // Trim the whitespace models like to put around an answer.
        const auto first = summary.find_first_not_of(" \n\r\t");
        const auto last = summary.find_last_not_of(" \n\r\t");
        summary = first == std::string::npos ? "" : summary.substr(first, last - first + 1);
        if (summary.empty()) {
            throw Failure(NUCLEO_ERR_PROTOCOL, "llm: the model answered with an empty summary");
        }

        rapidjson::StringBuffer buf;
        rapidjson::Writer<rapidjson::StringBuffer> w(buf);
        w.StartObject();
        w.Key("schema_version");
        w.Int(1);
        w.Key("summary");
        w.String(summary.data(), static_cast<rapidjson::SizeType>(summary.size()));
        w.Key("summary_tokens");
        const bool has_usage = doc.HasMember("usage") && doc["usage"].IsObject() &&
                               doc["usage"].HasMember("output_tokens") &&
                               doc["usage"]["output_tokens"].IsInt64();
        w.Int64(has_usage ? doc["usage"]["output_tokens"].GetInt64()
                          : static_cast<std::int64_t>((summary.size() + 3) / 4));
        w.Key("cost");
        w.Double(doc.HasMember("cost") && doc["cost"].IsNumber() ? doc["cost"].GetDouble() : 0.0);
        if (doc.HasMember("model") && doc["model"].IsString()) {
            w.Key("model");
            w.String(doc["model"].GetString());
        }
        if (doc.HasMember("usage") && doc["usage"].IsObject()) {
            w.Key("usage");
            doc["usage"].Accept(w);
        }
        w.EndObject();
        out.write({buf.GetString(), buf.GetSize()});
    }

  private:
    std::string call_model(const std::string& prompt, std::uint64_t max_output) const {
        const nucleo_host* host = nucleo::plugin::Host::raw();
        const auto* ext = NUCLEO_HAS_SLOT(host, nucleo_host, get_extension)
                              ? static_cast<const nucleo_host_model_call*>(
                                    host->get_extension(host, NUCLEO_EXT_HOST_MODEL_CALL))
                              : nullptr;
        if (!NUCLEO_HAS_SLOT(ext, nucleo_host_model_call, call)) {
            throw Failure(NUCLEO_ERR_NOT_IMPLEMENTED,
                          "llm: the host does not offer \"" NUCLEO_EXT_HOST_MODEL_CALL
                          "\" (ABI 1.1): this summarizer needs it");
        }
        rapidjson::StringBuffer buf;
        rapidjson::Writer<rapidjson::StringBuffer> w(buf);
        w.StartObject();
        w.Key("schema_version");
        w.Int(1);
        w.Key("prompt");
        w.String(prompt.data(), static_cast<rapidjson::SizeType>(prompt.size()));
        w.Key("system");
        w.String(kSystem);
        if (!model_.empty()) {
            w.Key("model");
            w.String(model_.c_str());
        }
        w.Key("grade");
        w.String(grade_.c_str());
        w.Key("max_output_tokens");
        w.Uint64(max_output);
        w.Key("purpose");
        w.String("compaction");
        w.EndObject();

        std::string answer;
        const nucleo_sink sink{sizeof(nucleo_sink), &answer, &append};
        nucleo_error err;
        nucleo_error_init(&err);
        const int32_t status = ext->call(
            host->host_ctx, nucleo_string_view{buf.GetString(), buf.GetSize()}, &sink, &err);
        if (status != NUCLEO_OK) throw Failure(status, std::string("llm: ") + err.message);
        return answer;
    }

    std::string grade_ = "SMALL";
    std::string model_;
};

}  // namespace

NUCLEO_PLUGIN_ENTRY("llm", "0.1.0",
                    "Summarizer that asks a model (SMALL grade by default) through the host's "
                    "model-call extension; each summary a recorded, costed call",
                    nucleo::plugin::summarizer_factory<Llm>())
