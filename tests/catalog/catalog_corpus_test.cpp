// The corpus of conversation documents (tests/catalog/conversations/,
// docs/conversation-document.md) rendered by `nucleo render` for every model of the shipped catalog
// that is not retired. Each rendering either gives a request, kept under the build tree
// (tests/catalog/corpus_bodies/<provider plugin>/<model>-<document>.json, the request's method, url
// and body) for the SDK type check (sdk_types.corpus), or is refused with exit status 2 for a
// reason listed below, each a documented refusal matched by its message. Any other refusal, any
// other exit status, fails naming the model and the document. Adding a model to config/models.yaml
// or a document to the corpus adds its cases.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli_run.hpp"
#include "nucleo/catalog.hpp"
#include "nucleo/config.hpp"

namespace nucleo {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(NUCLEO_SOURCE_DIR) / "tests" / "catalog" / "conversations";
const fs::path kBodies = fs::path(NUCLEO_BINARY_DIR) / "tests" / "catalog" / "corpus_bodies";

/// Runs `nucleo render` on the shipped configuration.
test_support::CliRun render(const std::string& model, const fs::path& document) {
    return test_support::run_command(std::string("\"") + NUCLEO_CLI + "\" render --model " + model +
                                     " --in \"" + document.string() + "\" --config \"" +
                                     NUCLEO_SOURCE_DIR + "/config/nucleo.yaml\"");
}

const Config& shipped() {
    static const Config config =
        Config::load(fs::path(NUCLEO_SOURCE_DIR) / "config" / "nucleo.yaml");
    return config;
}

/// The documents of the corpus, by name (the file name without .json), sorted.
std::vector<std::string> corpus() {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(kCorpus)) {
        if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

/// A refusal the corpus may meet: a documented one, matched by its message text, for the models
/// it applies to.
struct Refusal {
    const char* where;  ///< where it is documented
    const char* text;   ///< a part of the message
    std::function<bool(const ModelSpec&, const std::string& family)> applies;
};

const std::vector<Refusal>& documented_refusals() {
    static const std::vector<Refusal> refusals = {
        {"catalog.6: tools where the model takes them only without reasoning, and has no none",
         "takes function tools only without reasoning (its catalog record: refuses: "
         "[tools_with_reasoning]) and has no \"none\" effort",
         [](const ModelSpec& m, const std::string&) { return m.refuses_tools_with_reasoning; }},
        {"catalog.6: a prefill on a model that refuses it",
         "refuses prefill (its catalog record: refuses: [prefill])",
         [](const ModelSpec& m, const std::string&) { return m.refuses_prefill; }},
        {"catalog.6: a prefill while the call thinks",
         "a prefill, and thinking is on for this call",
         [](const ModelSpec&, const std::string&) { return true; }},
        {"plugins/providers/openai/README.md: Chat Completions has no form for a file by URL",
         "a file by URL cannot be sent to OpenAI Chat Completions (a file part takes base64 "
         "data or an uploaded file id)",
         [](const ModelSpec&, const std::string& f) { return f == "openai"; }},
        {"plugins/providers/bedrock/encode.cpp: Converse takes attachments as bytes or S3 only",
         "given by URL cannot be expressed in Converse (it takes the bytes, base64, or an S3 "
         "location)",
         [](const ModelSpec&, const std::string& f) { return f == "bedrock"; }},
    };
    return refusals;
}

/// Documents that carry what no model of a dialect can be sent: each is refused by every model of
/// that provider plugin (checked: an entry that stops being true must be taken out).
const std::set<std::pair<std::string, std::string>> kRefusedByEveryModel = {
    {"image_by_url", "bedrock"},
    {"file_by_url", "openai"},
    {"file_by_url", "bedrock"},
};

/// Keeps the request (method, url and body; the headers are not what the SDK types check) as
/// <family>/<name>.json, written whole under a temporary name and renamed, so a reader never sees
/// half a file.
void keep_request(const std::string& family, const std::string& name,
                  const rapidjson::Document& request) {
    const fs::path dir = kBodies / family;
    fs::create_directories(dir);
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    for (const char* key : {"method", "url", "body"}) {
        w.Key(key);
        request[key].Accept(w);
    }
    w.EndObject();
    const fs::path tmp = dir / (name + ".json.tmp" + std::to_string(::getpid()));
    std::ofstream(tmp, std::ios::binary) << buf.GetString();
    fs::rename(tmp, dir / (name + ".json"));
}

TEST(CatalogCorpus, EveryModelRendersEveryDocumentOrRefusesItAsDocumented) {
    const std::vector<std::string> documents = corpus();
    ASSERT_GE(documents.size(), 8U) << "the corpus lies in " << kCorpus;
    std::map<std::string, std::size_t> kept;                            // by provider plugin
    std::map<std::pair<std::string, std::string>, std::size_t> shown;   // by (document, plugin)
    std::map<std::pair<std::string, std::string>, std::size_t> models;  // by (document, plugin)
    std::vector<std::size_t> met(documented_refusals().size(), 0);
    std::set<fs::path> written;
    for (const ModelSpec& m : shipped().catalog().all()) {
        if (m.status == ModelStatus::kRetired) continue;
        const std::string family = shipped().provider(m.provider).plugin;
        for (const std::string& doc : documents) {
            SCOPED_TRACE("model " + m.id + ", document " + doc + ".json");
            ++models[{doc, family}];
            const test_support::CliRun run = render(m.id, kCorpus / (doc + ".json"));
            if (run.status == 2) {
                EXPECT_EQ(run.out, "");
                const auto& refusals = documented_refusals();
                const auto it =
                    std::find_if(refusals.begin(), refusals.end(), [&](const Refusal& r) {
                        return run.err.find(r.text) != std::string::npos && r.applies(m, family);
                    });
                if (it == refusals.end()) {
                    ADD_FAILURE() << "model " << m.id << " refuses document " << doc
                                  << ".json, not one of the documented refusals:\n"
                                  << run.err;
                } else {
                    ++met[static_cast<std::size_t>(it - refusals.begin())];
                }
                continue;
            }
            if (run.status != 0) {
                ADD_FAILURE() << "model " << m.id << ", document " << doc
                              << ".json: nucleo render exits " << run.status << "\n"
                              << run.err;
                continue;
            }
            rapidjson::Document request;
            request.Parse(run.out.c_str());
            const bool whole = !request.HasParseError() && request.IsObject() &&
                               request.HasMember("method") && request.HasMember("url") &&
                               request.HasMember("body") && request["body"].IsObject();
            if (!whole) {
                ADD_FAILURE() << "model " << m.id << ", document " << doc
                              << ".json: not a request:\n"
                              << run.out;
                continue;
            }
            keep_request(family, m.id + "-" + doc, request);
            written.insert(kBodies / family / (m.id + "-" + doc + ".json"));
            ++kept[family];
            ++shown[{doc, family}];
        }
    }
    // A request of an earlier run that this one did not give (a model or document taken out) goes.
    if (fs::exists(kBodies)) {
        for (const auto& entry : fs::recursive_directory_iterator(kBodies)) {
            if (entry.is_regular_file() && entry.path().extension() == ".json" &&
                !written.contains(entry.path())) {
                fs::remove(entry.path());
            }
        }
    }
    // The type check cannot silently check nothing: every provider keeps at least three requests
    // per document, and every document reaches every provider unless listed above.
    for (const char* family : {"anthropic", "openai", "openai-responses", "bedrock"}) {
        EXPECT_GE(kept[family], 3U * documents.size()) << family;
        for (const std::string& doc : documents) {
            const auto key = std::make_pair(doc, std::string(family));
            EXPECT_GT(models[key], 0U) << "no model of " << family;
            if (kRefusedByEveryModel.contains(key)) {
                EXPECT_EQ(shown[key], 0U) << doc << ".json is rendered for a " << family
                                          << " model now: take it out of kRefusedByEveryModel";
            } else {
                EXPECT_GT(shown[key], 0U)
                    << doc << ".json is rendered for no " << family << " model";
            }
        }
    }
    // Every documented refusal is met by the corpus: the list holds no dead entry.
    for (std::size_t i = 0; i < met.size(); ++i) {
        EXPECT_GT(met[i], 0U) << "no rendering of the corpus is refused for: "
                              << documented_refusals()[i].where;
    }
}

}  // namespace
}  // namespace nucleo
