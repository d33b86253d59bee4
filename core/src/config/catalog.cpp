#include <algorithm>
#include <ctime>
#include <mutex>
#include <set>
#include <string>

#include "common/log_internal.hpp"

#include "config/config_text.hpp"
#include "nucleo/catalog.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"

namespace nucleo {

const char* to_string(Grade g) noexcept {
    switch (g) {
        case Grade::kSmall:
            return "SMALL";
        case Grade::kMedium:
            return "MEDIUM";
        case Grade::kLarge:
            return "LARGE";
    }
    return "?";
}
const char* to_string(Depth d) noexcept {
    switch (d) {
        case Depth::kImmediate:
            return "IMMEDIATE";
        case Depth::kStandard:
            return "STANDARD";
        case Depth::kDeep:
            return "DEEP";
    }
    return "?";
}
const char* to_string(OutputSize s) noexcept {
    switch (s) {
        case OutputSize::kShort:
            return "SHORT";
        case OutputSize::kMedium:
            return "MEDIUM";
        case OutputSize::kLong:
            return "LONG";
        case OutputSize::kExtended:
            return "EXTENDED";
    }
    return "?";
}
const char* to_string(Input i) noexcept {
    switch (i) {
        case Input::kImages:
            return "IMAGES";
        case Input::kDocuments:
            return "DOCUMENTS";
    }
    return "?";
}

const char* to_string(ModelStatus s) noexcept {
    switch (s) {
        case ModelStatus::kActive:
            return "active";
        case ModelStatus::kDeprecated:
            return "deprecated";
        case ModelStatus::kRetired:
            return "retired";
    }
    return "?";
}
const char* to_string(ThinkingForm f) noexcept {
    switch (f) {
        case ThinkingForm::kEnabled:
            return "enabled";
        case ThinkingForm::kAdaptive:
            return "adaptive";
        case ThinkingForm::kBetweenTools:
            return "between_tools";
        case ThinkingForm::kDisabled:
            return "disabled";
    }
    return "?";
}
std::optional<ModelStatus> parse_model_status(std::string_view s) noexcept {
    for (ModelStatus m : {ModelStatus::kActive, ModelStatus::kDeprecated, ModelStatus::kRetired})
        if (s == to_string(m)) return m;
    return std::nullopt;
}
std::optional<ThinkingForm> parse_thinking_form(std::string_view s) noexcept {
    for (ThinkingForm f : {ThinkingForm::kEnabled, ThinkingForm::kAdaptive,
                           ThinkingForm::kBetweenTools, ThinkingForm::kDisabled})
        if (s == to_string(f)) return f;
    return std::nullopt;
}

namespace {

std::string utc_date_today() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[11];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
}

}  // namespace

void check_model_status(const ModelSpec& model, std::string_view today) {
    if (model.status == ModelStatus::kActive) return;
    const std::string date = today.empty() ? utc_date_today() : std::string(today);
    const std::string instead =
        model.replacement.empty() ? std::string() : "; use \"" + model.replacement + "\" instead";
    if (model.status == ModelStatus::kRetired)
        throw Error(ErrorKind::kInvalidArgument,
                    "model \"" + model.id + "\" (" + model.wire_model + ") was retired by its provider on " +
                        model.retired_on + instead + " (nothing was sent)");
    // Dates are YYYY-MM-DD, so they compare as strings.
    if (!model.shutdown.empty() && date >= model.shutdown)
        throw Error(ErrorKind::kInvalidArgument,
                    "model \"" + model.id + "\" (" + model.wire_model + ") was shut down by its provider on " +
                        model.shutdown + instead + " (nothing was sent)");
    static std::mutex mutex;
    static std::set<std::string> warned;
    const std::lock_guard<std::mutex> lock(mutex);
    if (warned.insert(model.id).second)
        NUCLEO_LOG_WARN("model \"{}\" ({}) is deprecated and shuts down on {}{}", model.id, model.wire_model,
                        model.shutdown, instead);
}

bool ThinkingRecord::accepts(ThinkingForm form) const {
    return std::find(forms.begin(), forms.end(), form) != forms.end();
}
bool ThinkingRecord::accepts_effort(std::string_view effort) const {
    return std::find(efforts.begin(), efforts.end(), effort) != efforts.end();
}
DepthThinking ThinkingRecord::for_depth(Depth d) const {
    auto it = depth.find(d);
    return it == depth.end() ? DepthThinking{} : it->second;
}

std::optional<Grade> parse_grade(std::string_view s) noexcept {
    for (Grade g : {Grade::kSmall, Grade::kMedium, Grade::kLarge})
        if (s == to_string(g)) return g;
    return std::nullopt;
}
std::optional<Depth> parse_depth(std::string_view s) noexcept {
    for (Depth d : {Depth::kImmediate, Depth::kStandard, Depth::kDeep})
        if (s == to_string(d)) return d;
    return std::nullopt;
}
std::optional<OutputSize> parse_output_size(std::string_view s) noexcept {
    for (OutputSize o :
         {OutputSize::kShort, OutputSize::kMedium, OutputSize::kLong, OutputSize::kExtended})
        if (s == to_string(o)) return o;
    return std::nullopt;
}
std::optional<Input> parse_input(std::string_view s) noexcept {
    for (Input i : {Input::kImages, Input::kDocuments})
        if (s == to_string(i)) return i;
    return std::nullopt;
}

std::int64_t ModelSpec::output_budget_for(OutputSize rung) const {
    auto it = output_budget.find(rung);
    const std::int64_t budget = it == output_budget.end() ? max_output_tokens : it->second;
    return std::min(budget, max_output_tokens);
}

std::int64_t ModelSpec::thinking_budget_for(Depth depth) const {
    auto it = thinking_budget.find(depth);
    return it == thinking_budget.end() ? 0 : it->second;
}

bool ModelSpec::accepts(Input input) const {
    return std::find(accepted_inputs.begin(), accepted_inputs.end(), input) !=
           accepted_inputs.end();
}

const Prices& ModelSpec::prices_for(std::int64_t prompt_tokens) const {
    const Prices* chosen = &prices;
    for (const PriceTier& tier : price_tiers)
        if (prompt_tokens > tier.above_prompt_tokens) chosen = &tier.prices;
    return *chosen;
}

DepthThinking ModelSpec::thinking_at(Depth depth) const {
    const bool no_record = thinking.forms.empty() && thinking.efforts.empty() && thinking.depth.empty();
    if (!no_record) return thinking.for_depth(depth);
    if (depth != Depth::kImmediate && thinking_budget_for(depth) > 0) return {DepthThinking::Kind::kBudget, {}};
    return {};
}

bool ModelSpec::thinks_at(Depth depth) const {
    if (thinking.always) return true;
    const DepthThinking d = thinking_at(depth);
    switch (d.kind) {
        case DepthThinking::Kind::kBudget:
            return true;
        case DepthThinking::Kind::kEffort:
            return d.effort != "none";
        case DepthThinking::Kind::kNone:
        case DepthThinking::Kind::kDisabled:
        case DepthThinking::Kind::kBetweenTools:
            return false;
    }
    return false;
}

double ModelSpec::cost(std::int64_t input_tokens, std::int64_t output_tokens,
                       std::int64_t cache_write_tokens, std::int64_t cache_read_tokens,
                       std::int64_t cache_write_1h_tokens) const {
    constexpr double kPerMillion = 1e-6;
    const Prices& rates = prices_for(input_tokens + cache_write_tokens + cache_read_tokens);
    const std::int64_t hour = std::min(cache_write_1h_tokens, cache_write_tokens);
    return kPerMillion * (static_cast<double>(input_tokens) * rates.input +
                          static_cast<double>(output_tokens) * rates.output +
                          static_cast<double>(cache_write_tokens - hour) * rates.cache_write +
                          static_cast<double>(hour) * rates.cache_write_1h_price() +
                          static_cast<double>(cache_read_tokens) * rates.cache_read);
}

}  // namespace nucleo

// ---- ModelCatalog (config.hpp) ----

namespace nucleo {

ModelCatalog::ModelCatalog(std::vector<ModelSpec> models) : models_(std::move(models)) {
    for (std::size_t i = 0; i < models_.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (models_[i].id == models_[j].id)
                throw Error(ErrorKind::kConfig, "model catalog: duplicate model id \"" +
                                                    models_[i].id + "\" (entries " +
                                                    std::to_string(j) + " and " +
                                                    std::to_string(i) + ")");
}

const ModelSpec* ModelCatalog::try_find(std::string_view id) const noexcept {
    for (const auto& m : models_)
        if (m.id == id) return &m;
    return nullptr;
}

const ModelSpec& ModelCatalog::find(std::string_view id) const {
    if (const ModelSpec* m = try_find(id)) return *m;
    std::string known;
    for (const auto& m : models_) known += (known.empty() ? "" : ", ") + m.id;
    throw Error(ErrorKind::kNotFound, "no model " + config_internal::quote(id) +
                                          " in the catalog (known: " +
                                          (known.empty() ? std::string("none") : known) + ")");
}

std::vector<std::string> ModelCatalog::ids() const {
    std::vector<std::string> out;
    out.reserve(models_.size());
    for (const auto& m : models_) out.push_back(m.id);
    return out;
}

}  // namespace nucleo
