// A test fixture "nucleo.store/1" plugin that RECORDS every call it receives (one line per call,
// the method name, appended to the file named by config "log") and otherwise acts as an empty
// store: reads miss (not found), create answers version 1, update answers the next version.
// It lets the service tests assert which store calls a path made (ownership.3: the temporary
// default does not consult the stores at all; ownership.21: a later save is a plain update with no
// reads).
#include <fstream>
#include <mutex>
#include <string>

#include <rapidjson/document.h>

#include "nucleo/plugin.hpp"

namespace {

class RecordingStore final : public nucleo::plugin::Store {
  public:
    explicit RecordingStore(std::string_view config_json) {
        rapidjson::Document doc;
        doc.Parse(config_json.data(), config_json.size());
        if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("log") ||
            !doc["log"].IsString()) {
            throw nucleo::plugin::Failure(NUCLEO_ERR_CONFIG,
                                          "recording store: needs {\"log\":PATH}");
        }
        log_ = doc["log"].GetString();
    }

    void capabilities(nucleo::plugin::Sink& out) override {
        record("capabilities");
        out.write(R"({"persistent":true,"session":true,"version_history":true,"lease":false})");
    }
    void create_conversation(std::string_view, std::string_view, std::string_view,
                             nucleo::plugin::Sink& out) override {
        record("create_conversation");
        version_ = 1;
        answer(out);
    }
    void update_conversation(std::string_view, std::string_view, std::string_view,
                             nucleo::plugin::Sink& out) override {
        record("update_conversation");
        ++version_;
        answer(out);
    }
    void load_conversation(std::string_view, std::string_view, nucleo::plugin::Sink&) override {
        record("load_conversation");
        throw nucleo::plugin::Failure(NUCLEO_ERR_NOT_FOUND, "recording store holds nothing");
    }
    void version_history(std::string_view, std::string_view, nucleo::plugin::Sink&) override {
        record("version_history");
        throw nucleo::plugin::Failure(NUCLEO_ERR_NOT_FOUND, "recording store holds nothing");
    }
    void session_get(std::string_view, std::string_view, nucleo::plugin::Sink&) override {
        record("session_get");
        throw nucleo::plugin::Failure(NUCLEO_ERR_NOT_FOUND, "recording store holds nothing");
    }
    void session_put(std::string_view, std::string_view, std::string_view, int64_t) override {
        record("session_put");
    }
    void session_invalidate(std::string_view, std::string_view) override {
        record("session_invalidate");
    }

  private:
    void record(const char* call) {
        std::lock_guard lock(mu_);
        std::ofstream(log_, std::ios::app) << call << "\n";
    }
    void answer(nucleo::plugin::Sink& out) {
        out.write(R"({"schema_version":1,"version":")" + std::to_string(version_) +
                  R"(","saved_at":"2026-01-01T00:00:00.000Z","bytes_written":1,)"
                  R"("messages_written":1})");
    }

    std::mutex mu_;
    std::string log_;
    int version_ = 0;
};

}  // namespace

NUCLEO_PLUGIN_ENTRY("recording", "1.0.0", "Test fixture: records every store call",
                    nucleo::plugin::store_factory<RecordingStore>())
