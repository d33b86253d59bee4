// A test fixture "nucleo.store/1" plugin that INJECTS FAULTS: it wraps a real store plugin (loaded
// through the host's own PluginLoader) and fails the Nth call of chosen slots, so the service
// tests can drive every save, load, history and lease path through a failure and then check
// that the durable record still loads, in order, and that the next save succeeds.
//
// Config: {"inner": "<plugin name or path>", "inner_config": {...},
//          "faults": [{"slot": "update_conversation", "nth": 2, "after": false}, ...]}
// A fault fails the nth call (1-based, counted per slot from the instance's creation) with
// NUCLEO_ERR_TRANSPORT "fault store: injected failure of <slot> call <n>". "after": true makes
// the inner store perform the call first (a write that committed but whose answer was lost).
// Every other call passes through unchanged.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "nucleo/errors.hpp"
#include "nucleo/plugin.hpp"
#include "nucleo/plugins.hpp"

namespace {

using nucleo::plugin::Failure;

struct Fault {
    std::string slot;
    int nth = 1;
    bool after = false;
};

[[noreturn]] void config_error(const std::string& what) {
    throw Failure(NUCLEO_ERR_CONFIG, "fault store config: " + what);
}

class FaultStore final : public nucleo::plugin::Store {
  public:
    explicit FaultStore(std::string_view config_json) : inner_(make_inner(config_json)) {}

    void capabilities(nucleo::plugin::Sink& out) override {
        out << call("capabilities", [&] { return inner_->capabilities(); });
    }
    void create_conversation(std::string_view principal, std::string_view id,
                             std::string_view request, nucleo::plugin::Sink& out) override {
        out << call("create_conversation",
                    [&] { return inner_->create_conversation(principal, id, request); });
    }
    void update_conversation(std::string_view principal, std::string_view id,
                             std::string_view request, nucleo::plugin::Sink& out) override {
        out << call("update_conversation",
                    [&] { return inner_->update_conversation(principal, id, request); });
    }
    void load_conversation(std::string_view principal, std::string_view id,
                           nucleo::plugin::Sink& out) override {
        out << call("load_conversation",
                    [&] { return inner_->load_conversation(principal, id); });
    }
    void delete_conversation(std::string_view principal, std::string_view id) override {
        call("delete_conversation", [&] {
            inner_->delete_conversation(principal, id);
            return std::string();
        });
    }
    void list_conversations(std::string_view principal, std::string_view query,
                            nucleo::plugin::Sink& out) override {
        out << call("list_conversations",
                    [&] { return inner_->list_conversations(principal, query); });
    }
    void version_history(std::string_view principal, std::string_view id,
                         nucleo::plugin::Sink& out) override {
        out << call("version_history", [&] { return inner_->version_history(principal, id); });
    }
    void latest_version(std::string_view principal, std::string_view id,
                        nucleo::plugin::Sink& out) {
        out << call("latest_version", [&] { return inner_->latest_version(principal, id); });
    }
    void load_version(std::string_view principal, std::string_view id, std::string_view version,
                      nucleo::plugin::Sink& out) override {
        out << call("load_version",
                    [&] { return inner_->load_version(principal, id, version); });
    }
    void session_get(std::string_view principal, std::string_view id,
                     nucleo::plugin::Sink& out) override {
        std::optional<std::string> hit;
        call("session_get", [&] {
            hit = inner_->session_get(principal, id);
            return std::string();
        });
        if (!hit) throw Failure(NUCLEO_ERR_NOT_FOUND, "fault store: session miss");
        out << *hit;
    }
    void session_put(std::string_view principal, std::string_view id, std::string_view snapshot,
                     int64_t ttl_ms) override {
        call("session_put", [&] {
            inner_->session_put(principal, id, snapshot, ttl_ms);
            return std::string();
        });
    }
    void session_invalidate(std::string_view principal, std::string_view id) override {
        call("session_invalidate", [&] {
            inner_->session_invalidate(principal, id);
            return std::string();
        });
    }
    // abi.128: offered, and passed through (a miss stays a miss).
    void session_apply(std::string_view principal, std::string_view id, std::string_view request,
                       int64_t ttl_ms) {
        bool applied = true;
        call("session_apply", [&] {
            applied = inner_->session_apply(principal, id, request, ttl_ms);
            return std::string();
        });
        if (!applied) throw Failure(NUCLEO_ERR_NOT_FOUND, "fault store: session delta missed");
    }
    void lease(std::string_view principal, std::string_view id, std::string_view request,
               nucleo::plugin::Sink& out) override {
        out << call("lease", [&] { return inner_->lease(principal, id, request); });
    }

  private:
    // Parses the config, remembers the faults and loads the inner store.
    std::optional<nucleo::StoreInstance> make_inner(std::string_view config_json) {
        rapidjson::Document doc;
        doc.Parse(config_json.data(), config_json.size());
        if (doc.HasParseError() || !doc.IsObject()) config_error("not a JSON object");
        auto inner = doc.FindMember("inner");
        if (inner == doc.MemberEnd() || !inner->value.IsString()) {
            config_error("\"inner\" (the wrapped store plugin) must be a string");
        }
        std::string inner_config = "{}";
        if (auto c = doc.FindMember("inner_config"); c != doc.MemberEnd()) {
            if (!c->value.IsObject()) config_error("\"inner_config\" must be an object");
            rapidjson::StringBuffer buffer;
            rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
            c->value.Accept(w);
            inner_config.assign(buffer.GetString(), buffer.GetSize());
        }
        if (auto f = doc.FindMember("faults"); f != doc.MemberEnd()) {
            if (!f->value.IsArray()) config_error("\"faults\" must be an array");
            for (const auto& item : f->value.GetArray()) {
                if (!item.IsObject() || !item.HasMember("slot") || !item["slot"].IsString() ||
                    !item.HasMember("nth") || !item["nth"].IsInt() || item["nth"].GetInt() < 1) {
                    config_error("each fault is {\"slot\": string, \"nth\": integer >= 1}");
                }
                Fault fault{item["slot"].GetString(), item["nth"].GetInt(), false};
                if (item.HasMember("after")) fault.after = item["after"].IsTrue();
                faults_.push_back(std::move(fault));
            }
        }
        try {
            nucleo::PluginLoader loader;
            return loader.load(inner->value.GetString()).make_store(inner_config);
        } catch (const nucleo::Error& e) {
            config_error(std::string("inner store: ") + e.what());
        }
    }

    // Counts the call; fails it when a fault names it (before or after the inner call). The
    // inner store's own errors pass through with their kind.
    template <typename Fn>
    std::string call(const char* slot, Fn&& fn) {
        std::optional<Fault> fault;
        int n = 0;
        {
            std::lock_guard lock(mu_);
            n = ++calls_[slot];
            for (const Fault& f : faults_) {
                if (f.slot == slot && f.nth == n) fault = f;
            }
        }
        const std::string injected = std::string("fault store: injected failure of ") + slot +
                                     " call " + std::to_string(n);
        if (fault && !fault->after) throw Failure(NUCLEO_ERR_TRANSPORT, injected);
        std::string answer;
        try {
            answer = fn();
        } catch (const nucleo::Error& e) {
            throw Failure(static_cast<int32_t>(e.kind()) + 1, e.what());
        }
        if (fault) throw Failure(NUCLEO_ERR_TRANSPORT, injected);
        return answer;
    }

    std::mutex mu_;
    std::vector<Fault> faults_;
    std::map<std::string, int> calls_;
    std::optional<nucleo::StoreInstance> inner_;
};

}  // namespace

NUCLEO_PLUGIN_ENTRY("fault", "1.0.0", "Test fixture: fails the Nth call of chosen store slots",
                    nucleo::plugin::store_factory<FaultStore>())
