// The host's model-call service ("nucleo.host.model_call/1", plugin.h 1.1): what the `llm`
// summarizer asks a model through. compaction.40: every summary is a call "run as a
// CompactionJob of its own: a job at the Grade.SMALL grade unless the compactor is built with
// another, admitted against rate limits, recorded and costed like any other call".
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/cost.hpp"
#include "compaction/model_call_internal.hpp"
#include "nucleo/compaction.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugin.h"
#include "nucleo/provider_client.hpp"

namespace nucleo {

namespace {

std::mutex& handler_mutex() {
    static std::mutex m;
    return m;
}
std::shared_ptr<const ModelCallHandler>& handler_slot() {
    static std::shared_ptr<const ModelCallHandler> h;
    return h;
}

}  // namespace

ModelCallHandler set_model_call_handler(ModelCallHandler handler) {
    auto next = handler ? std::make_shared<const ModelCallHandler>(std::move(handler)) : nullptr;
    std::lock_guard lock(handler_mutex());
    std::shared_ptr<const ModelCallHandler> previous = std::exchange(handler_slot(), next);
    return previous ? *previous : ModelCallHandler{};
}

namespace internal {

std::pair<int32_t, std::string> call_model_handler(std::string_view request, std::string& answer) {
    std::shared_ptr<const ModelCallHandler> handler;
    {
        std::lock_guard lock(handler_mutex());
        handler = handler_slot();  // a snapshot: the call itself runs without the lock
    }
    if (!handler) {
        return {NUCLEO_ERR_NOT_IMPLEMENTED,
                "model call: the host has no model-call service installed "
                "(nucleo::set_model_call_handler)"};
    }
    try {
        answer = (*handler)(request);
        return {NUCLEO_OK, {}};
    } catch (const Error& e) {
        // plugin.h: code == (int)nucleo::ErrorKind + 1.
        return {static_cast<int32_t>(e.kind()) + 1, std::string("model call: ") + e.what()};
    } catch (const std::exception& e) {
        return {NUCLEO_ERR_INTERNAL, std::string("model call: ") + e.what()};
    }
}

}  // namespace internal

struct ModelCallService::Impl {
    Config config;
    PluginLoader loader;
    mutable std::mutex mutex;
    std::map<std::string, std::unique_ptr<ProviderClient>, std::less<>> clients;
    std::vector<ModelCallRecord> records;

    ProviderClient& client(const std::string& provider) {
        std::lock_guard lock(mutex);
        auto& slot = clients[provider];
        if (!slot) {
            slot = std::make_unique<ProviderClient>(
                ProviderClient::from_config(config, loader, provider));
        }
        return *slot;  // ProviderClient is thread-safe; the map entry lives as long as we do
    }

    const ModelSpec& pick(const rapidjson::Document& req) const {
        if (req.HasMember("model") && req["model"].IsString()) {
            return config.catalog().find(req["model"].GetString());
        }
        Grade grade = Grade::kSmall;
        if (req.HasMember("grade")) {
            const auto parsed =
                req["grade"].IsString() ? parse_grade(req["grade"].GetString()) : std::nullopt;
            if (!parsed) {
                throw Error(ErrorKind::kInvalidArgument,
                            "model call: \"grade\" must be SMALL, MEDIUM or LARGE");
            }
            grade = *parsed;
        }
        for (const ModelSpec& m : config.catalog().all()) {
            if (m.grade == grade) return m;
        }
        throw Error(
            ErrorKind::kNotFound,
            std::string("model call: the catalog has no model of grade ") + to_string(grade));
    }
};

ModelCallService::ModelCallService(Config config, PluginLoader loader)
    : impl_(std::make_unique<Impl>()) {
    impl_->config = std::move(config);
    impl_->loader = std::move(loader);
}

ModelCallService::~ModelCallService() = default;

std::string ModelCallService::call(std::string_view request_json) {
    rapidjson::Document req;
    if (req.Parse(request_json.data(), request_json.size()).HasParseError() || !req.IsObject()) {
        throw Error(ErrorKind::kInvalidArgument, "model call: the request is not a JSON object");
    }
    if (!req.HasMember("prompt") || !req["prompt"].IsString()) {
        throw Error(ErrorKind::kInvalidArgument, "model call: \"prompt\" (a string) is required");
    }
    const ModelSpec& model = impl_->pick(req);
    std::int64_t max_output = model.output_budget_for(OutputSize::kMedium);
    if (req.HasMember("max_output_tokens") && req["max_output_tokens"].IsInt64() &&
        req["max_output_tokens"].GetInt64() > 0) {
        max_output = std::min(req["max_output_tokens"].GetInt64(), model.max_output_tokens);
    }
    ConversationContext conversation =
        ConversationContext::single_turn(model, req["prompt"].GetString(), max_output);
    conversation.set_conversation_id("model-call");
    if (req.HasMember("system") && req["system"].IsString() &&
        req["system"].GetStringLength() > 0) {
        conversation.put_main_objective("system", std::string(req["system"].GetString()));
    }
    const std::string purpose =
        req.HasMember("purpose") && req["purpose"].IsString() ? req["purpose"].GetString() : "";

    const LLMResponse response = impl_->client(model.provider).call(conversation, model);
    std::string text;
    for (const ContentBlock& b : response.message.blocks) {
        if (const auto* t = b.get_if<TextBlock>()) text += t->text;
    }
    {
        std::lock_guard lock(impl_->mutex);
        impl_->records.push_back({purpose, model.id, response.usage.total_input_tokens(),
                                  response.usage.output_tokens, response.cost});
    }

    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("schema_version");
    w.Int(1);
    w.Key("text");
    w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    w.Key("model");
    w.String(model.id.c_str());
    w.Key("usage");
    w.StartObject();
    w.Key("input_tokens");
    w.Int64(response.usage.input_tokens);
    w.Key("output_tokens");
    w.Int64(response.usage.output_tokens);
    w.Key("cache_read_tokens");
    w.Int64(response.usage.cache_read_tokens);
    w.Key("cache_write_tokens");
    w.Int64(response.usage.cache_write_tokens);
    w.EndObject();
    w.Key("cost");
    w.Double(internal::rounded_usd(response.cost));  // obs.109
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::vector<ModelCallRecord> ModelCallService::records() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->records;
}

ModelCallHandler ModelCallService::handler() {
    return [this](std::string_view request) { return call(request); };
}

}  // namespace nucleo
