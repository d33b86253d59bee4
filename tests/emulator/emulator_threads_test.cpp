// nucleo-emulator's Anthropic message threads (docs/emulator.md "Message threads",
// wire.199-wire.205; the shapes of @anthropic-ai/sdk 1.17.0): over HTTP, a create leaves its
// conversation under its answer's id, a continue is answered as the whole conversation it
// rebuilds (the same id and usage as a request that sends it all), each answer is continued once,
// an unknown, expired, evicted or lost thread is a 404, a changed fingerprint field and a busy
// thread are 400s, each with the SDK's `error.details.error_code`. Without the beta the member is
// refused, and a model whose record does not say `threads: true` refuses it. The clock of
// `POST /clock` expires threads, `--thread-capacity` bounds them, and `/stats` counts them and the
// bytes a client sent.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <memory>
#include <string>
#include <vector>

#include "emulator_client.hpp"

namespace nucleo::emulator_test {
namespace {

const std::string kBeta = "anthropic-beta: message-threads-2026-08-12";

// Models of the test's own: two that hold threads, one whose record does not say so, one that
// binds its thinking blocks to their prefix (wire.193) and holds threads.
const char* const kThreadsCatalog = R"(models:
  - id: claude-emu-threads
    provider: anthropic
    wire_model: claude-emu-threads
    threads: true
    thinking: {efforts: [low, medium, high]}
  - id: claude-emu-threads-2
    provider: anthropic
    wire_model: claude-emu-threads-2
    threads: true
    thinking: {efforts: [low, medium, high]}
  - id: claude-emu-plain
    provider: anthropic
    wire_model: claude-emu-plain
  - id: claude-emu-bound
    provider: anthropic
    wire_model: claude-emu-bound
    threads: true
    thinking: {forms: [adaptive], efforts: [low, medium, high], bound_to_prefix: true}
)";

const std::string kSystem = R"("You answer questions about parcels, tersely.")";
const std::string kTools =
    R"([{"name":"track","description":"Tracks a parcel","input_schema":{"type":"object",)"
    R"("properties":{"parcel":{"type":"string"}},"required":["parcel"]}}])";

std::string user(const std::string& text) {
    return R"({"role":"user","content":")" + text + "\"}";
}

/// A request body: `model`, max_tokens, the members of `extra` (each with a leading comma), then
/// `messages` (a JSON list's items) and `thread` (its JSON value, left out when empty).
std::string body(const std::string& messages, const std::string& thread,
                 const std::string& extra = "", const std::string& model = "claude-emu-threads") {
    std::string b = R"({"model":")" + model + R"(","max_tokens":20000)" + extra +
                    R"(,"messages":[)" + messages + "]";
    if (!thread.empty()) b += R"(,"thread":)" + thread;
    return b + "}";
}

std::string create() {
    return R"({"type":"create"})";
}

std::string continuing(const std::string& id) {
    return R"({"type":"continue","previous_message_id":")" + id + "\"}";
}

/// The error object of an error answer: its type, message and details.error_code.
struct ApiError {
    std::string type, message, code;
};

ApiError error_of(const HttpResult& r) {
    const rapidjson::Document d = parse(r.body);
    ApiError e;
    if (!d.IsObject() || !d.HasMember("error")) return e;
    const auto& err = d["error"];
    e.type = err["type"].GetString();
    e.message = err["message"].GetString();
    if (err.HasMember("details") && err["details"]["error_code"].IsString())
        e.code = err["details"]["error_code"].GetString();
    return e;
}

class Threads : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        catalog_ = std::make_unique<CatalogFile>(kThreadsCatalog);
        emu_ = std::make_unique<EmulatorProcess>(
            std::vector<std::string>{"--catalog", catalog_->path(), "--min-cacheable", "16"});
    }
    static void TearDownTestSuite() {
        EXPECT_EQ(emu_->stop(), 0);
        emu_.reset();
        catalog_.reset();
    }
    void SetUp() override { ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200); }

    /// POST /v1/messages with the beta (unless `beta` is false) and the faults `fault`.
    static HttpResult send(const std::string& b, const std::string& fault = "", bool beta = true) {
        std::vector<std::string> extra;
        if (beta) extra.push_back(kBeta);
        if (!fault.empty()) extra.push_back("x-emulator-fault: " + fault);
        return emu_->post("/v1/messages", b, anthropic_headers(extra));
    }

    /// The answer to `b`, which must be a 200.
    static rapidjson::Document answer(const std::string& b, const std::string& fault = "") {
        const HttpResult r = send(b, fault);
        EXPECT_EQ(r.status, 200) << r.body;
        return parse(r.body);
    }

    /// The answer's message as a client sends it back: `{"role":"assistant","content":…}`.
    static std::string sent_back(const rapidjson::Document& a) {
        return R"({"role":"assistant","content":)" + str(a["content"]) + "}";
    }

    static rapidjson::Document stats() { return parse(emu_->get("/stats").body); }

    static inline std::unique_ptr<CatalogFile> catalog_;
    static inline std::unique_ptr<EmulatorProcess> emu_;
};

// wire.200: the continue is the conversation it rebuilds: its answer reads the new question, and
// it has the id and the usage of a request that sends the whole conversation without a thread.
TEST_F(Threads, ContinueIsAnsweredAsTheWholeConversation) {
    const std::string system = R"(,"system":)" + kSystem;
    const auto first = answer(body(user("Where is parcel A1"), create(), system));
    const std::string a1 = first["id"].GetString();
    const auto second = answer(body(user("And parcel B2"), continuing(a1)));
    EXPECT_EQ(std::string(second["content"][0]["text"].GetString()),
              "This is the emulator's answer to: And parcel B2");

    const std::string whole =
        body(user("Where is parcel A1") + "," + sent_back(first) + "," + user("And parcel B2"), "",
             system);
    const auto full = answer(whole);
    EXPECT_EQ(std::string(second["id"].GetString()), full["id"].GetString());
    EXPECT_EQ(second["usage"]["input_tokens"].GetInt64(), full["usage"]["input_tokens"].GetInt64());
    EXPECT_GT(second["usage"]["input_tokens"].GetInt64(),
              first["usage"]["input_tokens"].GetInt64());
    // The system came from the thread: without it the whole request is another prompt.
    const auto no_system = answer(body(
        user("Where is parcel A1") + "," + sent_back(first) + "," + user("And parcel B2"), ""));
    EXPECT_NE(std::string(no_system["id"].GetString()), second["id"].GetString());

    // The continue's answer is a thread too: it is continued in turn.
    const auto third = answer(body(user("And parcel C3"), continuing(second["id"].GetString())));
    EXPECT_EQ(std::string(third["content"][0]["text"].GetString()),
              "This is the emulator's answer to: And parcel C3");
}

// wire.200: the tools too come from the thread; a streamed continue is stored like any other.
TEST_F(Threads, ToolsComeFromTheThreadAndStreamedAnswersAreStored) {
    const auto first = answer(body(user("Say hello"), create(),
                                   R"(,"tools":)" + kTools + R"(,"tool_choice":{"type":"none"})"));
    EXPECT_EQ(std::string(first["stop_reason"].GetString()), "end_turn");
    // No tools sent: the thread's `track` is offered and called with the question's last word.
    const HttpResult streamed = send(
        body(user("Track parcel Z9"), continuing(first["id"].GetString()), R"(,"stream":true)"));
    ASSERT_EQ(streamed.status, 200) << streamed.body;
    std::string id;
    std::string tool_id;
    for (const auto& [event, data] : parse_sse(streamed.body)) {
        const rapidjson::Document d = parse(data);
        if (event == "message_start") id = d["message"]["id"].GetString();
        if (event == "content_block_start" &&
            std::string(d["content_block"]["type"].GetString()) == "tool_use" &&
            std::string(d["content_block"]["name"].GetString()) == "track")
            tool_id = d["content_block"]["id"].GetString();
    }
    ASSERT_FALSE(tool_id.empty()) << streamed.body;
    ASSERT_FALSE(id.empty());
    const auto result = [](const std::string& use) {
        return R"({"role":"user","content":[{"type":"tool_result","tool_use_id":")" + use +
               R"(","content":"In Lyon"}]})";
    };
    // The stored answer's tool_use is read by the rule book, at its place in the conversation.
    const HttpResult orphan = send(body(result("toolu_other"), continuing(id)));
    EXPECT_EQ(orphan.status, 400);
    EXPECT_EQ(error_of(orphan).message,
              "messages.3: `tool_use` ids were found without `tool_result` blocks immediately "
              "after: " +
                  tool_id +
                  ". Each `tool_use` block must have a corresponding `tool_result` block in the "
                  "next message.");
    const auto answered = answer(body(result(tool_id), continuing(id)));
    EXPECT_EQ(std::string(answered["content"][0]["text"].GetString()),
              "The tool track returned: In Lyon");
}

// wire.201: an answer is continued once; the second continue is thread_already_continued.
TEST_F(Threads, AnAnswerIsContinuedOnce) {
    const auto first = answer(body(user("Where is parcel A1"), create()));
    const std::string a1 = first["id"].GetString();
    answer(body(user("And parcel B2"), continuing(a1)));
    const HttpResult again = send(body(user("And parcel B2"), continuing(a1)));
    EXPECT_EQ(again.status, 400);
    const ApiError e = error_of(again);
    EXPECT_EQ(e.type, "invalid_request_error");
    EXPECT_EQ(e.code, "thread_already_continued");
    EXPECT_NE(e.message.find("'" + a1 + "' has already been continued"), std::string::npos)
        << e.message;
    const HttpResult other = send(body(user("Or parcel D4"), continuing(a1)));
    EXPECT_EQ(error_of(other).code, "thread_already_continued");
}

// wire.201: an id no thread holds is 404 not_found_error thread_not_found.
TEST_F(Threads, AnUnknownIdIsNotFound) {
    const HttpResult r = send(body(user("Hi"), continuing("msg_never_answered")));
    EXPECT_EQ(r.status, 404);
    const ApiError e = error_of(r);
    EXPECT_EQ(e.type, "not_found_error");
    EXPECT_EQ(e.code, "thread_not_found");
    EXPECT_NE(e.message.find("'msg_never_answered'"), std::string::npos) << e.message;
    // An answer of a request without a thread is no thread either.
    const auto plain = answer(body(user("Where is parcel A1"), ""));
    EXPECT_EQ(send(body(user("And B2"), continuing(plain["id"].GetString()))).status, 404);
}

// wire.202: model, thinking and output_config stay as the thread was created, and a system or
// tools sent again must be the thread's; a mismatch names each field and consumes nothing.
TEST_F(Threads, AFingerprintFieldThatDiffersIsRefusedNamingIt) {
    const std::string fixed = R"(,"system":)" + kSystem +
                              R"(,"thinking":{"type":"adaptive"},"output_config":{"effort":"low"})";
    const auto first = answer(body(user("Where is parcel A1"), create(), fixed));
    const std::string a1 = first["id"].GetString();
    const auto refused = [&](const std::string& extra, const std::string& model) {
        const HttpResult r = send(body(user("And B2"), continuing(a1), extra, model));
        EXPECT_EQ(r.status, 400) << r.body;
        const ApiError e = error_of(r);
        EXPECT_EQ(e.type, "invalid_request_error");
        EXPECT_EQ(e.code, "thread_fingerprint_mismatch");
        return e.message;
    };
    const std::string same = R"(,"thinking":{"type":"adaptive"},"output_config":{"effort":"low"})";
    EXPECT_NE(refused(same, "claude-emu-threads-2").find("differing field(s): model."),
              std::string::npos);
    EXPECT_NE(refused(R"(,"output_config":{"effort":"high"})", "claude-emu-threads")
                  .find("differing field(s): thinking, output_config."),
              std::string::npos);
    EXPECT_NE(refused(same + R"(,"system":"Another system.")", "claude-emu-threads")
                  .find("differing field(s): system."),
              std::string::npos);
    EXPECT_NE(refused(same + R"(,"tools":)" + kTools, "claude-emu-threads")
                  .find("differing field(s): tools."),
              std::string::npos);
    // The same values, in another member order and with a cache mark on the system, are the
    // thread's: the continue is answered.
    const auto ok = answer(body(
        user("And B2"), continuing(a1),
        R"(,"output_config":{"effort":"low"},"thinking":{"type":"adaptive"},"system":[{"type":"text",)"
        R"("text":"You answer questions about parcels, tersely.","cache_control":{"type":"ephemeral"}}])"));
    EXPECT_EQ(std::string(ok["content"].GetArray()[ok["content"].Size() - 1]["text"].GetString()),
              "This is the emulator's answer to: And B2");
}

// wire.200, wire.203: a continue refused after it began (here the rule book, over the rebuilt
// conversation, naming its place in it) leaves the answer it names continuable.
TEST_F(Threads, ARefusedContinueConsumesNothing) {
    const auto first = answer(body(user("Where is parcel A1"), create()));
    const std::string a1 = first["id"].GetString();
    const HttpResult r = send(body(R"({"role":"assistant","content":"I guess"})", continuing(a1)));
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(error_of(r).message,
              "messages: roles must alternate between \"user\" and \"assistant\", but found "
              "multiple \"assistant\" roles in a row");
    answer(body(user("And parcel B2"), continuing(a1)));
}

// wire.203: a thread lives --thread-ttl (300 s) after the answer it stored, on the clock
// `POST /clock` moves; each stored answer starts it again.
TEST_F(Threads, AThreadExpiresOnTheClock) {
    const auto first = answer(body(user("Where is parcel A1"), create()));
    advance_clock(*emu_, 299);
    const auto second = answer(body(user("And parcel B2"), continuing(first["id"].GetString())));
    advance_clock(*emu_, 299);
    const auto third = answer(body(user("And parcel C3"), continuing(second["id"].GetString())));
    EXPECT_EQ(stats()["threads"]["live"].GetInt64(), 1);
    advance_clock(*emu_, 300);
    EXPECT_EQ(stats()["threads"]["live"].GetInt64(), 0);
    const HttpResult gone = send(body(user("And parcel D4"), continuing(third["id"].GetString())));
    EXPECT_EQ(gone.status, 404);
    EXPECT_EQ(error_of(gone).code, "thread_not_found");
}

// wire.204: thread-lost answers a continue 404 and forgets the thread; thread-busy answers it
// thread_continue_in_flight and leaves it as it was; neither changes a create.
TEST_F(Threads, FaultsAnswerAContinueAsLostOrBusy) {
    const auto first =
        answer(body(user("Where is parcel A1"), create()), "thread-lost,thread-busy");
    const std::string a1 = first["id"].GetString();
    const HttpResult busy = send(body(user("And B2"), continuing(a1)), "thread-busy");
    EXPECT_EQ(busy.status, 400);
    EXPECT_EQ(error_of(busy).code, "thread_continue_in_flight");
    EXPECT_EQ(error_of(busy).type, "invalid_request_error");
    const auto second = answer(body(user("And B2"), continuing(a1)));
    const std::string b2 = second["id"].GetString();
    const HttpResult lost = send(body(user("And C3"), continuing(b2)), "thread-lost");
    EXPECT_EQ(lost.status, 404);
    EXPECT_EQ(error_of(lost).code, "thread_not_found");
    // Gone for good: the client replays the whole conversation with a create.
    EXPECT_EQ(send(body(user("And C3"), continuing(b2))).status, 404);
    const auto replayed =
        answer(body(user("Where is parcel A1") + "," + sent_back(first) + "," + user("And B2") +
                        "," + sent_back(second) + "," + user("And C3"),
                    create()));
    answer(body(user("And D4"), continuing(replayed["id"].GetString())));
    EXPECT_GE(stats()["faults"].GetInt64(), 3);
}

// wire.199: without the beta `thread` is an extra input; with it a malformed one is named.
TEST_F(Threads, TheMemberNeedsTheBetaAndItsShape) {
    const HttpResult no_beta = send(body(user("Hi"), create()), "", false);
    EXPECT_EQ(no_beta.status, 400);
    EXPECT_EQ(error_of(no_beta).message, "thread: Extra inputs are not permitted");
    EXPECT_EQ(stats()["threads"]["created"].GetInt64(), 0);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"("create")", "thread: Input should be a valid dictionary"},
        {R"({})", "thread.type: Field required"},
        {R"({"type":"fork"})", "thread.type: Input should be 'create' or 'continue'"},
        {R"({"type":"create","previous_message_id":"msg_x"})",
         "thread.previous_message_id: Extra inputs are not permitted"},
        {R"({"type":"continue"})", "thread.previous_message_id: Field required"},
        {R"({"type":"continue","previous_message_id":7})",
         "thread.previous_message_id: Input should be a valid string"},
    };
    for (const auto& [thread, message] : cases) {
        const HttpResult r = send(body(user("Hi"), thread));
        EXPECT_EQ(r.status, 400) << thread;
        EXPECT_EQ(error_of(r).message, message) << thread;
    }
    // null asks nothing; count_tokens does not read the member.
    answer(body(user("Hi"), "null"));
    const HttpResult counted = emu_->post("/v1/messages/count_tokens",
                                          R"({"model":"claude-emu-threads","messages":[)" +
                                              user("Hi") + R"(],"thread":{"type":"create"}})",
                                          anthropic_headers());
    EXPECT_EQ(counted.status, 200) << counted.body;
}

// wire.199: a model whose record does not say `threads: true` refuses a thread, naming itself;
// a model no record names takes one.
TEST_F(Threads, AModelWithoutThreadsRefusesThem) {
    const HttpResult r = send(body(user("Hi"), create(), "", "claude-emu-plain"));
    EXPECT_EQ(r.status, 400);
    const ApiError e = error_of(r);
    EXPECT_EQ(e.code, "thread_unsupported_request");
    EXPECT_NE(e.message.find("model 'claude-emu-plain'"), std::string::npos) << e.message;
    EXPECT_EQ(send(body(user("Hi"), continuing("msg_x"), "", "claude-emu-plain")).status, 400);
    const auto unnamed = answer(body(user("Where is parcel A1"), create(), "", "claude-emu"));
    answer(body(user("And B2"), continuing(unnamed["id"].GetString()), "", "claude-emu"));
}

// wire.200: the marks of the requests that built a thread are not kept; a continue caches with
// its own, as the whole request would: the top-level mark reads what the create wrote.
TEST_F(Threads, ACacheMarkBelongsToItsRequest) {
    const std::string marked = R"(,"system":[{"type":"text","text":"You answer questions about )"
                               R"(parcels, tersely, and cite the tracking page of each parcel.",)"
                               R"("cache_control":{"type":"ephemeral"}}])";
    const auto first = answer(body(user("Where is parcel A1"), create(), marked));
    const long long written = first["usage"]["cache_creation_input_tokens"].GetInt64();
    ASSERT_GT(written, 0);
    // No mark of its own: the system's mark stayed with the create, nothing is read or written.
    const auto second = answer(body(user("And parcel B2"), continuing(first["id"].GetString())));
    EXPECT_EQ(second["usage"]["cache_read_input_tokens"].GetInt64(), 0);
    EXPECT_EQ(second["usage"]["cache_creation_input_tokens"].GetInt64(), 0);
    // The top-level mark: the whole conversation is written; the next continue reads it back.
    const auto third = answer(body(user("And parcel C3"), continuing(second["id"].GetString()),
                                   R"(,"cache_control":{"type":"ephemeral"})"));
    EXPECT_EQ(third["usage"]["cache_read_input_tokens"].GetInt64(), written);
    const long long whole = third["usage"]["input_tokens"].GetInt64() +
                            third["usage"]["cache_creation_input_tokens"].GetInt64() +
                            third["usage"]["cache_read_input_tokens"].GetInt64();
    const auto fourth = answer(body(user("And parcel D4"), continuing(third["id"].GetString()),
                                    R"(,"cache_control":{"type":"ephemeral"})"));
    EXPECT_EQ(fourth["usage"]["cache_read_input_tokens"].GetInt64(), whole);
}

// wire.193, wire.200: the stored answer keeps its thinking block and signature; the continue's
// prefix is the one the block was bound to, so the bound model takes it.
TEST_F(Threads, AStoredThinkingBlockStaysBound) {
    const std::string thinking = R"(,"system":)" + kSystem + R"(,"thinking":{"type":"adaptive"})";
    const auto first =
        answer(body(user("Where is parcel A1"), create(), thinking, "claude-emu-bound"));
    ASSERT_EQ(std::string(first["content"][0]["type"].GetString()), "thinking") << str(first);
    const auto second = answer(body(user("And parcel B2"), continuing(first["id"].GetString()),
                                    R"(,"thinking":{"type":"adaptive"})", "claude-emu-bound"));
    EXPECT_EQ(std::string(second["stop_reason"].GetString()), "end_turn");
}

// wire.205: request_bytes counts the bodies received on /v1/messages; threads counts the live
// threads and the creates and continues stored; POST /reset forgets them.
TEST_F(Threads, StatsCountBytesAndThreads) {
    const std::string b1 = body(user("Where is parcel A1"), create());
    const auto first = answer(b1);
    const std::string b2 = body(user("And parcel B2"), continuing(first["id"].GetString()));
    answer(b2);
    const std::string b3 = body(user("Where is parcel X"), create());
    answer(b3);
    const std::string refused = body(user("Hi"), continuing("msg_never_answered"));
    send(refused);
    emu_->post("/v1/messages/count_tokens",
               R"({"model":"claude-emu-threads","messages":[)" + user("Hi") + "]}",
               anthropic_headers());
    const auto s = stats();
    EXPECT_EQ(s["request_bytes"].GetInt64(),
              static_cast<long long>(b1.size() + b2.size() + b3.size() + refused.size()));
    EXPECT_EQ(s["threads"]["live"].GetInt64(), 2);
    EXPECT_EQ(s["threads"]["created"].GetInt64(), 2);
    EXPECT_EQ(s["threads"]["continued"].GetInt64(), 1);
    ASSERT_EQ(emu_->post("/reset", "{}", {}).status, 200);
    const auto reset = stats();
    EXPECT_EQ(reset["request_bytes"].GetInt64(), 0);
    EXPECT_EQ(str(reset["threads"]), R"({"live":0,"created":0,"continued":0})");
}

// wire.203: at most --thread-capacity answers are kept, the oldest stored evicted first;
// --thread-ttl sets the lifetime.
TEST(ThreadStoreBounds, TheOldestIsEvictedAndTheTtlIsTheOption) {
    EmulatorProcess emu({"--catalog", "none", "--thread-capacity", "2", "--thread-ttl", "60"});
    const auto create_one = [&](const std::string& q) {
        const HttpResult r = emu.post("/v1/messages", body(user(q), create(), "", "claude-emu"),
                                      anthropic_headers({kBeta}));
        EXPECT_EQ(r.status, 200) << r.body;
        return std::string(parse(r.body)["id"].GetString());
    };
    const std::string a = create_one("Parcel A");
    const std::string b = create_one("Parcel B");
    const std::string c = create_one("Parcel C");
    const auto cont = [&](const std::string& id) {
        return emu.post("/v1/messages", body(user("And then"), continuing(id), "", "claude-emu"),
                        anthropic_headers({kBeta}));
    };
    EXPECT_EQ(cont(a).status, 404);
    EXPECT_EQ(parse(emu.get("/stats").body)["threads"]["live"].GetInt64(), 2);
    EXPECT_EQ(cont(b).status, 200);
    advance_clock(emu, 60);
    EXPECT_EQ(cont(c).status, 404);
    EXPECT_EQ(emu.stop(), 0);
}

// wire.199: the shipped catalog: Sonnet 5.5, the default model, takes threads; Fable 5.2, which
// the page does not name, refuses them.
TEST(ThreadsShippedCatalog, SonnetTakesThreadsFableFiveTwoDoesNot) {
    EmulatorProcess emu({"--catalog", shipped_catalog()});
    const auto send = [&](const std::string& model) {
        return emu.post("/v1/messages", body(user("Hi"), create(), "", model),
                        anthropic_headers({kBeta}));
    };
    const HttpResult sonnet = send("claude-sonnet-5-5");
    EXPECT_EQ(sonnet.status, 200) << sonnet.body;
    const HttpResult fable = send("claude-fable-5-2");
    EXPECT_EQ(fable.status, 400);
    EXPECT_EQ(error_of(fable).code, "thread_unsupported_request");
    EXPECT_EQ(emu.stop(), 0);
}

}  // namespace
}  // namespace nucleo::emulator_test
