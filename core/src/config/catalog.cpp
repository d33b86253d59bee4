#include <algorithm>

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

double ModelSpec::cost(std::int64_t input_tokens, std::int64_t output_tokens,
                       std::int64_t cache_write_tokens, std::int64_t cache_read_tokens,
                       std::int64_t cache_write_1h_tokens) const {
    constexpr double kPerMillion = 1e-6;
    const std::int64_t hour = std::min(cache_write_1h_tokens, cache_write_tokens);
    return kPerMillion * (static_cast<double>(input_tokens) * prices.input +
                          static_cast<double>(output_tokens) * prices.output +
                          static_cast<double>(cache_write_tokens - hour) * prices.cache_write +
                          static_cast<double>(hour) * prices.cache_write_1h_price() +
                          static_cast<double>(cache_read_tokens) * prices.cache_read);
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
