// Config accessors, the config lookup order and the redacted dump.
#include <dlfcn.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdlib>
#include <utility>

#include "config/build_tree.hpp"
#include "config/config_text.hpp"
#include "config/mcp_servers.hpp"
#include "nucleo/config.hpp"
#include "nucleo/errors.hpp"

#include <rapidjson/document.h>

namespace fs = std::filesystem;

namespace nucleo {

namespace config_internal {

std::string quote(std::string_view value) {
    constexpr std::size_t kMax = 80;
    std::string out = "\"";
    std::size_t n = 0;
    for (char c : value) {
        if (n++ == kMax) {
            out += "...";
            break;
        }
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    static constexpr char kHex[] = "0123456789abcdef";
                    out += "\\x";
                    out += kHex[(c >> 4) & 0xf];
                    out += kHex[c & 0xf];
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

}  // namespace config_internal

namespace {

constexpr const char* kMask = "***";

/// The value shown for a secret: "***" when set, "" when not (so an unset key stays visible).
std::string masked(const std::string& secret) {
    return secret.empty() ? std::string() : kMask;
}

void emit_json(YAML::Emitter& out, const rapidjson::Value& v, bool secret) {
    if (v.IsObject()) {
        out << YAML::BeginMap;
        for (const auto& m : v.GetObject()) {
            const std::string key(m.name.GetString(), m.name.GetStringLength());
            out << YAML::Key << key << YAML::Value;
            emit_json(out, m.value, secret || is_secret_key(key));
        }
        out << YAML::EndMap;
    } else if (v.IsArray()) {
        out << YAML::BeginSeq;
        for (const auto& item : v.GetArray()) emit_json(out, item, secret);
        out << YAML::EndSeq;
    } else if (secret && !v.IsNull()) {
        out << kMask;
    } else if (v.IsString()) {
        out << YAML::DoubleQuoted << redact_url({v.GetString(), v.GetStringLength()});
    } else if (v.IsBool()) {
        out << v.GetBool();
    } else if (v.IsInt64()) {
        out << v.GetInt64();
    } else if (v.IsUint64()) {
        out << v.GetUint64();
    } else if (v.IsNumber()) {
        out << v.GetDouble();
    } else {
        out << YAML::Null;
    }
}

void emit_options(YAML::Emitter& out, const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.c_str(), json.size());
    if (doc.HasParseError() || !doc.IsObject()) {
        out << YAML::Key << "options" << YAML::Value << kMask;  // not ours: show nothing of it
        return;
    }
    if (doc.ObjectEmpty()) return;
    out << YAML::Key << "options" << YAML::Value;
    emit_json(out, doc, false);
}

void emit_choice(YAML::Emitter& out, const char* key, const std::optional<PluginChoice>& choice) {
    if (!choice) return;
    out << YAML::Key << key << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "plugin" << YAML::Value << choice->plugin;
    emit_options(out, choice->options_json);
    // abi.133: an isolated summarizer shows where it runs and its call's deadline.
    if (choice->process_isolation) {
        out << YAML::Key << "isolation" << YAML::Value << "process";
        out << YAML::Key << "deadline_ms" << YAML::Value << choice->deadline.count();
    }
    out << YAML::EndMap;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

bool is_secret_key(std::string_view key) noexcept {
    // Split on anything not a letter or digit, and at lower→upper case changes (apiKey).
    std::vector<std::string> words;
    std::string word;
    for (std::size_t i = 0; i < key.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(key[i]);
        const bool upper_after_lower =
            std::isupper(c) && i > 0 && std::islower(static_cast<unsigned char>(key[i - 1]));
        if (!std::isalnum(c) || upper_after_lower) {
            if (!word.empty()) words.push_back(lower(word));
            word.clear();
            if (!std::isalnum(c)) continue;
        }
        word += static_cast<char>(c);
    }
    if (!word.empty()) words.push_back(lower(word));
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (w == "password" || w == "passwd" || w == "pwd" || w == "secret" || w == "token" ||
            w == "credential" || w == "credentials" || w == "authorization" || w == "apikey" ||
            w == "auth" || w == "dsn")
            return true;
        if (w == "key" && (words.size() == 1 ||
                           (i > 0 && (words[i - 1] == "api" || words[i - 1] == "access" ||
                                      words[i - 1] == "private" || words[i - 1] == "secret" ||
                                      words[i - 1] == "signing"))))
            return true;
    }
    return false;
}

std::string redact_url(std::string_view url) {
    std::string out(url);
    // userinfo: scheme://user:password@host
    if (auto scheme = out.find("://"); scheme != std::string::npos) {
        const std::size_t start = scheme + 3;
        const std::size_t end = out.find_first_of("/?#", start);
        const std::size_t at = out.rfind('@', end == std::string::npos ? out.size() : end);
        if (at != std::string::npos && at > start) {
            // limits.105: the password, or the whole userinfo when it is one word (a bare token).
            const std::size_t colon = out.find(':', start);
            if (colon != std::string::npos && colon < at)
                out.replace(colon + 1, at - colon - 1, kMask);
            else
                out.replace(start, at - start, kMask);
        }
    }
    // key=value parameters (URL query, libpq "k=v k=v" DSN): mask the secret ones.
    std::size_t i = 0;
    while ((i = out.find('=', i)) != std::string::npos) {
        std::size_t name_start = i;
        while (name_start > 0) {
            const char c = out[name_start - 1];
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
                break;
            --name_start;
        }
        const bool at_boundary =
            name_start == 0 ||
            std::string_view("?&; ").find(out[name_start - 1]) != std::string_view::npos;
        if (name_start == i || !at_boundary ||
            !is_secret_key(std::string_view(out).substr(name_start, i - name_start))) {
            ++i;
            continue;
        }
        std::size_t value_end;
        if (i + 1 < out.size() && out[i + 1] == '\'') {  // libpq quoted value
            value_end = out.find('\'', i + 2);
            value_end = value_end == std::string::npos ? out.size() : value_end + 1;
        } else {
            value_end = out.find_first_of("&; #", i + 1);
            if (value_end == std::string::npos) value_end = out.size();
        }
        out.replace(i + 1, value_end - i - 1, kMask);
        i += 1 + std::string_view(kMask).size();
    }
    return out;
}

fs::path Config::installed_path() {
    // The config installed with this library, found from where libnucleo itself is loaded
    // (<libdir>/NUCLEO_CONFIG_FROM_LIBDIR), so an install copied or moved to another prefix reads
    // its own config; a build tree has none beside it and reads the source tree's (config.1);
    // else the folder compiled in.
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&Config::installed_path), &info) != 0 &&
        info.dli_fname != nullptr) {
        const fs::path self_dir = fs::path(info.dli_fname).parent_path();
        const fs::path beside = self_dir / NUCLEO_CONFIG_FROM_LIBDIR / "nucleo.yaml";
        std::error_code ec;
        if (fs::is_regular_file(beside, ec)) return beside.lexically_normal();
        if (auto source = config_internal::build_tree_config(self_dir)) return *source;
    }
    return fs::path(NUCLEO_INSTALLED_CONFIG_DIR) / "nucleo.yaml";
}

fs::path Config::user_path() {
    // XDG Base Directory: a relative $XDG_CONFIG_HOME is invalid and ignored.
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg == '/')
        return fs::path(xdg) / "nucleo" / "nucleo.yaml";
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
        return fs::path(home) / ".config" / "nucleo" / "nucleo.yaml";
    return {};
}

fs::path Config::default_path() {
    // config.1: the variable, the user's file, the install's; never the working folder.
    if (const char* env = std::getenv("NUCLEO_CONFIG"); env != nullptr && *env != '\0') return env;
    const fs::path user = user_path();
    std::error_code ec;
    if (!user.empty() && fs::is_regular_file(user, ec)) return user;
    return installed_path();
}

const ModelSpec& Config::default_model() const {
    const auto& all = catalog_.all();
    if (all.empty())
        throw Error(ErrorKind::kConfig, path_.string() + ": the model catalog is empty");
    // config.2: the variable, the file's choice, the first model whose provider has a key.
    if (const char* env = std::getenv("NUCLEO_MODEL"); env != nullptr && *env != '\0') {
        if (const ModelSpec* m = catalog_.try_find(env)) return *m;
        std::string known;
        for (const ModelSpec& m : all) known += (known.empty() ? "" : ", ") + m.id;
        throw Error(ErrorKind::kConfig, "NUCLEO_MODEL: " + config_internal::quote(env) +
                                            " is no model of the catalog of " + path_.string() +
                                            " (known: " + known + ")");
    }
    if (default_model_id_) return catalog_.find(*default_model_id_);  // checked at load
    for (const ModelSpec& m : all) {
        for (const ProviderConfig& p : providers_) {
            if (p.name != m.provider) continue;
            if (!p.credentials.api_key.empty() || !p.credentials.access_key_id.empty()) return m;
        }
    }
    return all.front();
}

const ProviderConfig& Config::provider(std::string_view name) const {
    std::string known;
    for (const auto& p : providers_) {
        if (p.name == name) return p;
        known += (known.empty() ? "" : ", ") + p.name;
    }
    throw Error(ErrorKind::kNotFound, "no provider instance " + config_internal::quote(name) +
                                          " in " + path_.string() +
                                          " (providers: " + (known.empty() ? "none" : known) + ")");
}

Config Config::with_provider(ProviderConfig provider) const {
    (void)this->provider(provider.name);  // kNotFound naming the known instances
    Config out = *this;
    for (ProviderConfig& p : out.providers_) {
        if (p.name == provider.name) p = std::move(provider);
    }
    return out;
}

std::string Config::redacted() const {
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "config" << YAML::Value << path_.string();
    if (!plugin_paths_.empty()) {
        out << YAML::Key << "plugins" << YAML::Value << YAML::BeginMap << YAML::Key << "paths"
            << YAML::Value << YAML::BeginSeq;
        for (const auto& p : plugin_paths_) out << p.string();
        out << YAML::EndSeq << YAML::EndMap;
    }
    if (!providers_.empty()) {
        out << YAML::Key << "providers" << YAML::Value << YAML::BeginMap;
        for (const auto& p : providers_) {
            out << YAML::Key << p.name << YAML::Value << YAML::BeginMap;
            out << YAML::Key << "plugin" << YAML::Value << p.plugin;
            out << YAML::Key << "base_url" << YAML::Value << YAML::DoubleQuoted
                << redact_url(p.base_url);
            out << YAML::Key << "api_key" << YAML::Value << YAML::DoubleQuoted
                << masked(p.credentials.api_key);
            const auto& c = p.credentials;
            if (!c.access_key_id.empty() || !c.secret_access_key.empty() ||
                !c.session_token.empty() || !c.region.empty()) {
                out << YAML::Key << "credentials" << YAML::Value << YAML::BeginMap;
                out << YAML::Key << "access_key_id" << YAML::Value << YAML::DoubleQuoted
                    << masked(c.access_key_id);
                out << YAML::Key << "secret_access_key" << YAML::Value << YAML::DoubleQuoted
                    << masked(c.secret_access_key);
                out << YAML::Key << "session_token" << YAML::Value << YAML::DoubleQuoted
                    << masked(c.session_token);
                out << YAML::Key << "region" << YAML::Value << YAML::DoubleQuoted << c.region;
                out << YAML::EndMap;
            }
            emit_options(out, p.options_json);
            // limits.139: the transport limits in force, defaults included, as `defaults:` shows
            // the declarations in force.
            const TransportLimits& t = p.transport;
            out << YAML::Key << "transport" << YAML::Value << YAML::BeginMap;
            out << YAML::Key << "connect_timeout_ms" << YAML::Value << t.connect_timeout.count();
            out << YAML::Key << "idle_timeout_ms" << YAML::Value << t.idle_timeout.count();
            out << YAML::Key << "deadline_ms" << YAML::Value << t.deadline.count();
            out << YAML::Key << "max_response_bytes" << YAML::Value << t.max_response_bytes;
            out << YAML::EndMap;
            // abi.130: shown when it is not the default, in-process.
            if (p.process_isolation) out << YAML::Key << "isolation" << YAML::Value << "process";
            out << YAML::EndMap;
        }
        out << YAML::EndMap;
    }
    if (session_store_ || persistent_store_) {
        out << YAML::Key << "stores" << YAML::Value << YAML::BeginMap;
        emit_choice(out, "session", session_store_);
        emit_choice(out, "persistent", persistent_store_);
        out << YAML::EndMap;
    }
    emit_choice(out, "summarizer", summarizer_);
    config_internal::emit_mcp_servers(out, mcp_servers_);
    // budget.102: the declarations in force, `none` where the config opted out.
    out << YAML::Key << "defaults" << YAML::Value << YAML::BeginMap;
    if (default_model_id_) out << YAML::Key << "model" << YAML::Value << *default_model_id_;
    out << YAML::Key << "depth" << YAML::Value
        << (defaults_.depth ? to_string(*defaults_.depth) : "none");
    out << YAML::Key << "output" << YAML::Value;
    if (!defaults_.output) {
        out << "none";
    } else if (const auto* rung = std::get_if<OutputSize>(&*defaults_.output)) {
        out << to_string(*rung);
    } else {
        out << std::get<std::int64_t>(*defaults_.output);
    }
    out << YAML::EndMap;
    out << YAML::Key << "models" << YAML::Value << YAML::BeginSeq;
    for (const auto& m : catalog_.all()) out << m.id;
    out << YAML::EndSeq;
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

}  // namespace nucleo
