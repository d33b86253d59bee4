// Reading one catalog record (docs/catalog.md, docs/spec/catalog.md): a model's limits, prices
// with their tiers, status, thinking, caching and tokenizer, each refused with file:line:column
// and its key path when it is not what the record's other fields allow.
#include <algorithm>
#include <string>
#include <vector>

#include "config/yaml_reader.hpp"
#include "nucleo/catalog.hpp"

namespace nucleo::config_internal {
namespace {

/// Effort levels a provider may name (Anthropic output_config.effort, OpenAI reasoning_effort,
/// Converse outputConfig.effort, Nova maxReasoningEffort), lowest first.
constexpr std::string_view kEfforts[] = {"none", "minimal", "low", "medium",
                                         "high", "xhigh",   "max"};
constexpr std::string_view kDisplays[] = {"summarized", "omitted"};
constexpr std::string_view kBreakpoints[] = {"explicit", "automatic", "none"};

template <std::size_t N>
bool one_of(std::string_view s, const std::string_view (&set)[N]) {
    return std::find(std::begin(set), std::end(set), s) != std::end(set);
}
template <std::size_t N>
std::string names_of(const std::string_view (&set)[N]) {
    std::string out;
    for (std::string_view s : set) out += (out.empty() ? "" : ", ") + std::string(s);
    return out;
}

/// catalog.2: a date written YYYY-MM-DD.
std::string date(const Reader& r, const YamlNode& n, const std::string& path) {
    const std::string s = r.string(n, path);
    const bool shaped =
        s.size() == 10 && s[4] == '-' && s[7] == '-' &&
        std::all_of(s.begin(), s.end(), [](char c) { return c == '-' || (c >= '0' && c <= '9'); });
    if (!shaped) r.fail(n.mark(), path, "expected a date YYYY-MM-DD, got " + quote(s));
    return s;
}

/// A sequence of strings, each one of `allowed` (when given), none twice.
template <std::size_t N>
std::vector<std::string> string_list(const Reader& r, const YamlNode& n, const std::string& path,
                                     const std::string_view (*allowed)[N]) {
    if (!n.is_sequence()) r.fail(n.mark(), path, "expected a sequence, got " + describe(n));
    std::vector<std::string> out;
    std::size_t i = 0;
    for (const auto& item : n.items()) {
        const std::string at = element(path, i++);
        std::string s = r.string(item, at);
        if (allowed != nullptr && !one_of(s, *allowed))
            r.fail(item.mark(), at, "expected one of " + names_of(*allowed) + ", got " + quote(s));
        if (std::find(out.begin(), out.end(), s) != out.end())
            r.fail(item.mark(), at, quote(s) + " twice");
        out.push_back(std::move(s));
    }
    return out;
}

void read_source(const Reader& r, const YamlNode& n, const std::string& path, ModelSpec& m) {
    r.expect_map(n, path, {"urls", "read", "third_party"});
    m.source.read = date(r, r.need(n, "read", path), child(path, "read"));
    m.source.urls = string_list<1>(r, r.need(n, "urls", path), child(path, "urls"), nullptr);
    if (m.source.urls.empty())
        r.fail(n.mark(), child(path, "urls"), "at least one source is required");
    if (auto v = Reader::get(n, "third_party"); Reader::present(v))
        m.source.third_party = r.string(v, child(path, "third_party"));
}

void read_status(const Reader& r, const YamlNode& n, const std::string& path, ModelSpec& m) {
    const YamlNode status = Reader::get(n, "status");
    if (Reader::present(status))
        m.status = r.enumerator<ModelStatus>(
            status, child(path, "status"), parse_model_status,
            {ModelStatus::kActive, ModelStatus::kDeprecated, ModelStatus::kRetired});
    const YamlNode shutdown = Reader::get(n, "shutdown");
    const YamlNode retired_on = Reader::get(n, "retired_on");
    const YamlNode replacement = Reader::get(n, "replacement");
    if (Reader::present(shutdown)) m.shutdown = date(r, shutdown, child(path, "shutdown"));
    if (Reader::present(retired_on)) m.retired_on = date(r, retired_on, child(path, "retired_on"));
    if (Reader::present(replacement)) m.replacement = r.name(n, "replacement", path);
    switch (m.status) {
        case ModelStatus::kActive:
            if (Reader::present(shutdown) || Reader::present(retired_on))
                r.fail((Reader::present(shutdown) ? shutdown : retired_on).mark(), path,
                       "an active model has no shutdown or retired_on date (status: deprecated or "
                       "retired)");
            break;
        case ModelStatus::kDeprecated:
            if (!Reader::present(shutdown))
                r.fail(status.mark(), child(path, "shutdown"),
                       "required value missing: a deprecated model names the date it shuts down");
            break;
        case ModelStatus::kRetired:
            if (!Reader::present(retired_on))
                r.fail(status.mark(), child(path, "retired_on"),
                       "required value missing: a retired model names the date it was retired");
            if (!Reader::present(replacement))
                r.fail(status.mark(), child(path, "replacement"),
                       "required value missing: a retired model names the catalog id that replaces "
                       "it");
            break;
    }
}

/// catalog.10: the window and the output ceiling of a record that leaves them out. Small on
/// purpose: a local server's window is often its runner's default (Ollama's num_ctx), and a
/// window larger than the server's would be cut by the server, silently or with a 400.
constexpr std::int64_t kDefaultContextTokens = 8192;
constexpr std::int64_t kDefaultOutputTokens = 2048;

constexpr OutputSize kRungs[] = {OutputSize::kShort, OutputSize::kMedium, OutputSize::kLong,
                                 OutputSize::kExtended};

/// budget.1, budget.2: an `output_budget:` given translates every rung, so all four are required
/// in it (a rung the entry cannot translate would be a number invented at call time); each rung
/// missing or wrong is named (config.4).
void read_output_budget(const Reader& r, const YamlNode& n, const std::string& path, ModelSpec& m) {
    r.expect_map(n, path, {"SHORT", "MEDIUM", "LONG", "EXTENDED"});
    for (OutputSize rung : kRungs) {
        r.attempt([&] {
            const YamlNode v = r.need(n, to_string(rung), path);
            const std::int64_t tokens = r.positive(v, child(path, to_string(rung)));
            if (tokens > m.max_output_tokens)
                r.fail(v.mark(), child(path, to_string(rung)),
                       std::to_string(tokens) + " exceeds max_output_tokens " +
                           std::to_string(m.max_output_tokens));
            m.output_budget[rung] = tokens;
        });
    }
}

/// catalog.10: the rungs of a record without `output_budget:`, the shipped records' usual
/// 1,024 / 4,096 / 16,384 tokens and the whole ceiling for EXTENDED, each capped at
/// max_output_tokens.
void default_output_budget(ModelSpec& m) {
    constexpr std::int64_t kTokens[] = {1024, 4096, 16384};
    for (std::size_t i = 0; i < 3; ++i)
        m.output_budget[kRungs[i]] = std::min(kTokens[i], m.max_output_tokens);
    m.output_budget[OutputSize::kExtended] = m.max_output_tokens;
}

/// Thinking tokens per depth: the manual budget of the enabled form, and the tokens the output
/// reserve books for thinking at that depth (budget.5). A depth left out books none.
void read_budget(const Reader& r, const YamlNode& n, const std::string& path, ModelSpec& m) {
    r.expect_map(n, path, {"IMMEDIATE", "STANDARD", "DEEP"});
    for (Depth depth : {Depth::kImmediate, Depth::kStandard, Depth::kDeep}) {
        const YamlNode v = Reader::get(n, to_string(depth));
        if (!Reader::present(v)) continue;
        const std::int64_t tokens = r.non_negative(v, child(path, to_string(depth)));
        if (tokens > m.max_output_tokens)
            r.fail(v.mark(), child(path, to_string(depth)),
                   std::to_string(tokens) + " exceeds max_output_tokens " +
                       std::to_string(m.max_output_tokens));
        m.thinking_budget[depth] = tokens;
    }
}

/// catalog.4, catalog.5: the `thinking:` mapping.
void read_thinking(const Reader& r, const YamlNode& n, const std::string& path, ModelSpec& m) {
    r.expect_map(n, path,
                 {"forms", "always", "efforts", "default_effort", "display", "bound_to_prefix",
                  "depth", "budget"});
    ThinkingRecord& t = m.thinking;
    if (auto v = Reader::get(n, "forms"); Reader::present(v)) {
        const std::string at = child(path, "forms");
        if (!v.is_sequence()) r.fail(v.mark(), at, "expected a sequence, got " + describe(v));
        std::size_t i = 0;
        for (const auto& item : v.items()) {
            const ThinkingForm f =
                r.enumerator<ThinkingForm>(item, element(at, i++), parse_thinking_form,
                                           {ThinkingForm::kEnabled, ThinkingForm::kAdaptive,
                                            ThinkingForm::kBetweenTools, ThinkingForm::kDisabled});
            if (t.accepts(f))
                r.fail(item.mark(), element(at, i - 1), quote(to_string(f)) + " twice");
            t.forms.push_back(f);
        }
    }
    if (auto v = Reader::get(n, "always"); Reader::present(v))
        t.always = r.boolean(v, child(path, "always"));
    if (auto v = Reader::get(n, "bound_to_prefix"); Reader::present(v))
        t.bound_to_prefix = r.boolean(v, child(path, "bound_to_prefix"));
    if (auto v = Reader::get(n, "efforts"); Reader::present(v))
        t.efforts = string_list(r, v, child(path, "efforts"), &kEfforts);
    if (auto v = Reader::get(n, "display"); Reader::present(v))
        t.display = string_list(r, v, child(path, "display"), &kDisplays);
    if (auto v = Reader::get(n, "default_effort"); Reader::present(v)) {
        t.default_effort = r.string(v, child(path, "default_effort"));
        if (!t.accepts_effort(t.default_effort))
            r.fail(v.mark(), child(path, "default_effort"),
                   quote(t.default_effort) + " is not one of the model's efforts (" +
                       join(t.efforts) + ")");
    }
    if (auto v = Reader::get(n, "budget"); Reader::present(v))
        read_budget(r, v, child(path, "budget"), m);
    const YamlNode depth = r.need(n, "depth", path);
    const std::string at = child(path, "depth");
    r.expect_map(depth, at, {"IMMEDIATE", "STANDARD", "DEEP"});
    for (Depth d : {Depth::kImmediate, Depth::kStandard, Depth::kDeep}) {
        const YamlNode v = r.need(depth, to_string(d), at);
        const std::string where = child(at, to_string(d));
        const std::string s = r.string(v, where);
        DepthThinking dt;
        const auto need_form = [&](ThinkingForm f) {
            if (!t.accepts(f))
                r.fail(v.mark(), where,
                       quote(s) + " needs the " + quote(to_string(f)) +
                           " form, which thinking.forms lacks");
        };
        if (s == "none" && !t.accepts_effort("none")) {
            // A model with a `none` effort (OpenAI's current models reason at medium when nothing
            // is sent) gets it sent, below; elsewhere `none` sends nothing.
            dt.kind = DepthThinking::Kind::kNone;
        } else if (s == "disabled") {
            need_form(ThinkingForm::kDisabled);
            dt.kind = DepthThinking::Kind::kDisabled;
        } else if (s == "between_tools") {
            need_form(ThinkingForm::kBetweenTools);
            dt.kind = DepthThinking::Kind::kBetweenTools;
        } else if (s == "budget") {
            need_form(ThinkingForm::kEnabled);
            if (m.thinking_budget_for(d) <= 0)
                r.fail(v.mark(), where,
                       "\"budget\" needs a positive thinking.budget." + std::string(to_string(d)));
            dt.kind = DepthThinking::Kind::kBudget;
        } else if (t.accepts_effort(s)) {
            if (!t.forms.empty() && !t.accepts(ThinkingForm::kAdaptive))
                r.fail(v.mark(), where,
                       "an effort needs the \"adaptive\" form, which thinking.forms lacks");
            dt.kind = DepthThinking::Kind::kEffort;
            dt.effort = s;
        } else {
            r.fail(
                v.mark(), where,
                "expected none, disabled, between_tools, budget or one of the model's efforts (" +
                    (t.efforts.empty() ? std::string("none listed") : join(t.efforts)) + "), got " +
                    quote(s));
        }
        t.depth[d] = dt;
        // budget.5: a call that thinks books its thinking; a model that always thinks books it at
        // every depth, or a SHORT answer would be eaten by the thinking it spends.
        const bool thinks = t.always || dt.kind == DepthThinking::Kind::kBudget ||
                            (dt.kind == DepthThinking::Kind::kEffort && dt.effort != "none");
        if (thinks && m.thinking_budget_for(d) <= 0)
            r.fail(v.mark(), where,
                   std::string(t.always ? "the model always thinks" : "this depth thinks") +
                       ", so thinking.budget." + to_string(d) +
                       " (the tokens booked for it) is required");
        if (!thinks && m.thinking_budget_for(d) > 0)
            r.fail(v.mark(), where,
                   "this depth does not think, so thinking.budget." + std::string(to_string(d)) +
                       " must be 0 or left out");
    }
}

/// The legacy `thinking_budget:` (no `thinking:` mapping): the enabled form at every depth with a
/// positive budget, IMMEDIATE off.
void read_legacy_thinking_budget(const Reader& r, const YamlNode& n, const std::string& path,
                                 ModelSpec& m) {
    read_budget(r, n, path, m);
    if (m.thinking_budget_for(Depth::kImmediate) != 0)
        r.fail(Reader::get(n, "IMMEDIATE").mark(), child(path, "IMMEDIATE"),
               "IMMEDIATE is thinking off: expected 0, got " +
                   std::to_string(m.thinking_budget_for(Depth::kImmediate)));
    bool any = false;
    for (Depth d : {Depth::kStandard, Depth::kDeep}) {
        if (m.thinking_budget_for(d) <= 0) continue;
        m.thinking.depth[d] = DepthThinking{DepthThinking::Kind::kBudget, ""};
        any = true;
    }
    if (any) m.thinking.forms = {ThinkingForm::kEnabled};
}

/// catalog.4, catalog.5: `thinking:` or the legacy `thinking_budget:`, not both.
void read_thinking_fields(const Reader& r, const YamlNode& n, const std::string& path,
                          ModelSpec& m) {
    const YamlNode thinking = Reader::get(n, "thinking");
    const YamlNode legacy_budget = Reader::get(n, "thinking_budget");
    if (Reader::present(thinking) && Reader::present(legacy_budget))
        r.fail(legacy_budget.mark(), child(path, "thinking_budget"),
               "give the budget as thinking.budget beside thinking.depth, not both");
    if (Reader::present(thinking)) read_thinking(r, thinking, child(path, "thinking"), m);
    if (Reader::present(legacy_budget))
        read_legacy_thinking_budget(r, legacy_budget, child(path, "thinking_budget"), m);
}

void read_caching(const Reader& r, const YamlNode& n, const std::string& path, ModelSpec& m) {
    r.expect_map(n, path, {"min_tokens", "ttls", "breakpoints", "diagnostics"});
    m.cache_breakpoints = r.string(r.need(n, "breakpoints", path), child(path, "breakpoints"));
    if (!one_of(m.cache_breakpoints, kBreakpoints))
        r.fail(Reader::get(n, "breakpoints").mark(), child(path, "breakpoints"),
               "expected one of " + names_of(kBreakpoints) + ", got " + quote(m.cache_breakpoints));
    m.supports_caching = m.cache_breakpoints != "none";
    if (auto v = Reader::get(n, "min_tokens"); Reader::present(v))
        m.min_cacheable_tokens = r.non_negative(v, child(path, "min_tokens"));
    if (auto v = Reader::get(n, "ttls"); Reader::present(v)) {
        // Anthropic and Bedrock: 5 minutes and 1 hour; OpenAI: 30 minutes and 12 hours.
        constexpr std::string_view kTtls[] = {"5m", "1h", "30m", "12h"};
        for (const std::string& ttl : string_list(r, v, child(path, "ttls"), &kTtls))
            if (ttl == "1h") m.cache_ttl_1h = true;
    }
    // caching.131: the provider explains a cache miss against the previous answer.
    if (auto v = Reader::get(n, "diagnostics"); Reader::present(v))
        m.cache_diagnostics = r.boolean(v, child(path, "diagnostics"));
}

/// caching.109: the legacy `cache_ttls:`.
void read_cache_ttls(const Reader& r, const YamlNode& v, const std::string& path, ModelSpec& m) {
    constexpr std::string_view kTtls[] = {"5m", "1h"};
    for (const std::string& ttl : string_list(r, v, path, &kTtls))
        if (ttl == "1h") m.cache_ttl_1h = true;
}

void read_tokenizer(const Reader& r, const YamlNode& n, const std::string& path, ModelSpec& m) {
    r.expect_map(n, path, {"counter", "calibration"});
    const YamlNode counter = r.need(n, "counter", path);
    m.token_counter = r.string(counter, child(path, "counter"));
    if (!one_of(m.token_counter, kTokenCounters))
        r.fail(counter.mark(), child(path, "counter"),
               "expected one of o200k_base, cl100k_base, anthropic_approx, got " +
                   quote(m.token_counter));
    if (auto v = Reader::get(n, "calibration"); Reader::present(v)) {
        m.token_calibration = r.price(v, child(path, "calibration"));
        if (m.token_calibration < 0.5 || m.token_calibration > 4)
            r.fail(v.mark(), child(path, "calibration"),
                   "expected a factor between 0.5 and 4, got " + v.scalar());
    }
}

/// One set of rates. input and output are required; the cache prices too when the entry caches
/// (a cache price left out would bill cached tokens at $0).
void read_rates(const Reader& r, const YamlNode& n, const std::string& path, const ModelSpec& m,
                Prices& p, std::initializer_list<std::string_view> keys) {
    r.expect_map(n, path, keys);
    for (auto [key, slot] : {std::pair<const char*, double*>{"input", &p.input},
                             std::pair<const char*, double*>{"output", &p.output}})
        r.attempt([&, key = key, slot = slot] {
            *slot = r.price(r.need(n, key, path), child(path, key));
        });
    for (auto [key, slot] : {std::pair<const char*, double*>{"cache_write", &p.cache_write},
                             std::pair<const char*, double*>{"cache_read", &p.cache_read}}) {
        r.attempt([&, key = key, slot = slot] {
            const YamlNode v = m.supports_caching ? r.need(n, key, path) : Reader::get(n, key);
            if (Reader::present(v)) *slot = r.price(v, child(path, key));
        });
    }
    // caching.108: optional; absent, the 1-hour write costs twice the input price.
    r.attempt([&] {
        if (auto v = Reader::get(n, "cache_write_1h"); Reader::present(v))
            p.cache_write_1h = r.price(v, child(path, "cache_write_1h"));
    });
}

/// catalog.7: the base rates and the tiers above a prompt size.
void read_prices(const Reader& r, const YamlNode& n, const std::string& path, ModelSpec& m) {
    read_rates(r, n, path, m, m.prices,
               {"input", "output", "cache_write", "cache_read", "cache_write_1h", "tiers"});
    const YamlNode tiers = Reader::get(n, "tiers");
    if (!Reader::present(tiers)) return;
    const std::string at = child(path, "tiers");
    if (!tiers.is_sequence())
        r.fail(tiers.mark(), at, "expected a sequence, got " + describe(tiers));
    std::size_t i = 0;
    for (const auto& item : tiers.items())
        r.attempt([&] {
            const std::string where = element(at, i++);
            if (!item.is_map())
                r.fail(item.mark(), where, "expected a mapping, got " + describe(item));
            PriceTier tier;
            const YamlNode above = Reader::get(item, "above");
            if (!Reader::present(above))
                r.fail(
                    item.mark(), child(where, "above"),
                    "required value missing: a tier names the prompt size above which it applies");
            tier.above_prompt_tokens = r.positive(above, child(where, "above"));
            if (!m.price_tiers.empty() &&
                tier.above_prompt_tokens <= m.price_tiers.back().above_prompt_tokens)
                r.fail(above.mark(), child(where, "above"),
                       "tiers are listed by ascending threshold");
            read_rates(r, item, where, m, tier.prices,
                       {"above", "input", "output", "cache_write", "cache_read", "cache_write_1h"});
            m.price_tiers.push_back(tier);
        });
}

}  // namespace

ModelSpec read_model_record(const Reader& r, const YamlNode& n, const std::string& path) {
    r.expect_map(n, path,
                 {"id",
                  "provider",
                  "wire_model",
                  "grade",
                  "status",
                  "shutdown",
                  "retired_on",
                  "replacement",
                  "source",
                  "max_context_tokens",
                  "max_output_tokens",
                  "comfort_context_tokens",
                  "output_budget",
                  "thinking",
                  "thinking_budget",
                  "refuses",
                  "mid_conversation",
                  "caching",
                  "supports_caching",
                  "native_tools",
                  "min_cacheable_tokens",
                  "cache_ttls",
                  "prices",
                  "accepts",
                  "threads",
                  "tokenizer",
                  "token_counter",
                  "rate_limits"});
    ModelSpec m;
    // config.4: each field is read on its own, so a record with several problems has each named.
    r.attempt([&] { m.id = r.name(n, "id", path); });
    r.attempt([&] { m.provider = r.name(n, "provider", path); });
    r.attempt([&] { m.wire_model = r.name(n, "wire_model", path); });
    // catalog.10: every other field has a default, for an operator's own model (an Ollama or
    // vLLM server): MEDIUM, active, no source, the limits of kDefaultContextTokens and
    // kDefaultOutputTokens, the rungs of default_output_budget, no thinking, no caching, prices
    // 0, the o200k_base counter.
    r.attempt([&] {
        if (auto v = Reader::get(n, "grade"); Reader::present(v))
            m.grade = r.enumerator<Grade>(v, child(path, "grade"), parse_grade,
                                          {Grade::kSmall, Grade::kMedium, Grade::kLarge});
    });
    r.attempt([&] { read_status(r, n, path, m); });
    r.attempt([&] {
        if (auto v = Reader::get(n, "source"); Reader::present(v))
            read_source(r, v, child(path, "source"), m);
    });
    const YamlNode context = Reader::get(n, "max_context_tokens");
    const YamlNode output = Reader::get(n, "max_output_tokens");
    const bool limits_read = r.attempt([&] {
        m.max_context_tokens = Reader::present(context)
                                   ? r.positive(context, child(path, "max_context_tokens"))
                                   : kDefaultContextTokens;
    }) & r.attempt([&] {
        m.max_output_tokens = Reader::present(output)
                                  ? r.positive(output, child(path, "max_output_tokens"))
                                  : std::min(kDefaultOutputTokens, m.max_context_tokens);
    });
    // What depends on the ceiling is checked only against a ceiling that was read: a refused
    // max_output_tokens is named once, not again at every rung above a default.
    if (limits_read) {
        r.attempt([&] {
            if (m.max_output_tokens > m.max_context_tokens)
                r.fail((Reader::present(output) ? output : context).mark(),
                       child(path, "max_output_tokens"),
                       std::to_string(m.max_output_tokens) + " exceeds max_context_tokens " +
                           std::to_string(m.max_context_tokens));
        });
        r.attempt([&] {
            if (auto v = Reader::get(n, "comfort_context_tokens"); Reader::present(v)) {
                m.comfort_context_tokens = r.positive(v, child(path, "comfort_context_tokens"));
                if (*m.comfort_context_tokens > m.max_context_tokens)
                    r.fail(v.mark(), child(path, "comfort_context_tokens"),
                           std::to_string(*m.comfort_context_tokens) +
                               " exceeds max_context_tokens " +
                               std::to_string(m.max_context_tokens));
            }
        });
        r.attempt([&] {
            if (auto v = Reader::get(n, "output_budget"); Reader::present(v))
                read_output_budget(r, v, child(path, "output_budget"), m);
            else
                default_output_budget(m);
        });
        r.attempt([&] { read_thinking_fields(r, n, path, m); });
    }
    r.attempt([&] {
        if (auto v = Reader::get(n, "refuses"); Reader::present(v)) {
            constexpr std::string_view kRefusals[] = {"sampling", "prefill", "forced_tool_use",
                                                      "tools_with_reasoning"};
            for (const std::string& what : string_list(r, v, child(path, "refuses"), &kRefusals)) {
                m.refuses_sampling = m.refuses_sampling || what == "sampling";
                m.refuses_prefill = m.refuses_prefill || what == "prefill";
                m.refuses_forced_tool_use = m.refuses_forced_tool_use || what == "forced_tool_use";
                m.refuses_tools_with_reasoning =
                    m.refuses_tools_with_reasoning || what == "tools_with_reasoning";
            }
        }
    });
    // catalog.9: what the model takes inside `messages` besides user and assistant turns.
    r.attempt([&] {
        if (auto v = Reader::get(n, "mid_conversation"); Reader::present(v)) {
            constexpr std::string_view kMidConversation[] = {"system_messages", "tool_changes"};
            for (const std::string& what :
                 string_list(r, v, child(path, "mid_conversation"), &kMidConversation)) {
                m.system_messages = m.system_messages || what == "system_messages";
                m.tool_changes = m.tool_changes || what == "tool_changes";
            }
        }
    });
    r.attempt([&] {
        const YamlNode caching = Reader::get(n, "caching");
        if (Reader::present(caching)) {
            for (const char* legacy : {"supports_caching", "min_cacheable_tokens", "cache_ttls"})
                if (Reader::present(Reader::get(n, legacy)))
                    r.fail(Reader::get(n, legacy).mark(), child(path, legacy),
                           "give it inside caching: (min_tokens, ttls, breakpoints), not both");
            read_caching(r, caching, child(path, "caching"), m);
        } else {
            if (auto v = Reader::get(n, "supports_caching"); Reader::present(v))
                m.supports_caching = r.boolean(v, child(path, "supports_caching"));
            m.cache_breakpoints = m.supports_caching ? "explicit" : "none";
            if (auto v = Reader::get(n, "min_cacheable_tokens"); Reader::present(v))
                m.min_cacheable_tokens = r.non_negative(v, child(path, "min_cacheable_tokens"));
            if (auto v = Reader::get(n, "cache_ttls"); Reader::present(v))
                read_cache_ttls(r, v, child(path, "cache_ttls"), m);
        }
    });
    r.attempt([&] {
        if (auto v = Reader::get(n, "native_tools"); Reader::present(v))
            m.native_tools = r.boolean(v, child(path, "native_tools"));
    });
    // catalog.10: prices left out are every figure 0, so a call costs $0.
    r.attempt([&] {
        if (auto v = Reader::get(n, "prices"); Reader::present(v))
            read_prices(r, v, child(path, "prices"), m);
    });
    r.attempt([&] {
        if (auto v = Reader::get(n, "accepts"); Reader::present(v)) {
            if (!v.is_sequence())
                r.fail(v.mark(), child(path, "accepts"), "expected a sequence, got " + describe(v));
            std::size_t i = 0;
            for (const auto& item : v.items()) {
                const Input input =
                    r.enumerator<Input>(item, element(child(path, "accepts"), i++), parse_input,
                                        {Input::kImages, Input::kDocuments});
                if (!m.accepts(input)) m.accepted_inputs.push_back(input);
            }
        }
    });
    // wire.205: whether the provider holds the model's conversations as message threads.
    r.attempt([&] {
        if (auto v = Reader::get(n, "threads"); Reader::present(v))
            m.threads = r.boolean(v, child(path, "threads"));
    });
    r.attempt([&] {
        if (auto v = Reader::get(n, "rate_limits"); Reader::present(v)) {
            const std::string limits = child(path, "rate_limits");
            r.expect_map(v, limits, {"requests_per_minute", "tokens_per_minute"});
            if (auto rpm = Reader::get(v, "requests_per_minute"); Reader::present(rpm))
                m.requests_per_minute = r.non_negative(rpm, child(limits, "requests_per_minute"));
            if (auto tpm = Reader::get(v, "tokens_per_minute"); Reader::present(tpm))
                m.tokens_per_minute = r.non_negative(tpm, child(limits, "tokens_per_minute"));
        }
    });
    r.attempt([&] {
        const YamlNode tokenizer = Reader::get(n, "tokenizer");
        const YamlNode counter = Reader::get(n, "token_counter");
        if (Reader::present(tokenizer) && Reader::present(counter))
            r.fail(counter.mark(), child(path, "token_counter"),
                   "give it as tokenizer.counter, not both");
        if (Reader::present(tokenizer)) read_tokenizer(r, tokenizer, child(path, "tokenizer"), m);
        if (Reader::present(counter)) {
            m.token_counter = r.string(counter, child(path, "token_counter"));
            if (!one_of(m.token_counter, kTokenCounters))
                r.fail(counter.mark(), child(path, "token_counter"),
                       "expected one of o200k_base, cl100k_base, anthropic_approx, got " +
                           quote(m.token_counter));
        }
    });
    return m;
}

}  // namespace nucleo::config_internal
