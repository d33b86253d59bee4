// ConversationService in one process (docs/spec/ownership.md): ownership between threads,
// the temporary default, the dual stores, the save discipline, release patterns, cleanup and
// shutdown. Real stores: memory for pure logic, sqlite for durability, and the recording fixture
// store for "which calls did this path make".
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <latch>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "nucleo/document.hpp"
#include "nucleo/errors.hpp"
#include "nucleo/plugins.hpp"
#include "nucleo/service.hpp"
#include "service_support.hpp"

namespace {

using namespace std::chrono_literals;
using nucleo::ConversationService;
using nucleo::ConversationServiceOptions;
using nucleo::ErrorKind;
using nucleo::Message;
using nucleo::Thinker;
using service_test::thinker;
using store_test::error_kind;
using store_test::make_store;

ConversationServiceOptions memory_options() {
    ConversationServiceOptions o;
    auto store = make_store("memory");
    o.persistent.emplace(store);
    o.session.emplace(make_store("memory"));
    o.cleanup_thread = false;
    return o;
}

Message user_says(std::string text, bool app_authored = false) {
    Message m = Message::outgoing_text(std::move(text));
    m.app_authored = app_authored;
    return m;
}

struct ProseHandler final : nucleo::ResponseHandler {
    bool uses_schema_notation() const override { return false; }
    std::string response_instructions(bool, bool) const override { return {}; }
};

std::vector<std::string> read_lines(const std::string& path) {
    std::vector<std::string> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

TEST(ConversationIdentity, MintedIdsAreReadableAndRandom) {
    Thinker t;
    t.name = "ChatThinker";
    t.job_id = "job-1";
    EXPECT_EQ(t.conversation_id(), "job-1");  // the temporary default: keyed by the job id
    EXPECT_EQ(t.intent(), nucleo::ConversationIntent::kTemporary);
    const std::string a = t.mint_conversation_id();
    // ownership.1: "e.g. conv-a26f-52b01fa3bd75", without the thinker's name.
    EXPECT_TRUE(std::regex_match(a, std::regex("conv-[0-9a-f]{4}-[0-9a-f]{12}"))) << a;
    EXPECT_EQ(t.intent(), nucleo::ConversationIntent::kMinted);
    EXPECT_EQ(t.conversation_id(), a);
    EXPECT_NE(t.mint_conversation_id(), a);
    t.set_conversation_id("ChatThinker-conv-0000-000000000000");
    EXPECT_EQ(t.intent(), nucleo::ConversationIntent::kAdopted);
}

// ownership.10: "an acquiring turn parks on the condition until the owner releases".
TEST(ConversationOwnership, SecondThreadWaitsAndGetsTheFirstsMessages) {
    ConversationService service(memory_options());
    auto a = thinker("A");
    auto b = thinker("B");
    const std::string id = a->mint_conversation_id();
    b->set_conversation_id(id);

    auto ctx_a = service.obtain_conversation(id, a).get();
    ctx_a->add_message(user_says("hello from A"));
    ASSERT_TRUE(service.save_conversation(*ctx_a, *a).has_value());

    auto waiting = service.obtain_conversation(id, b, {}, true);
    // B cannot hold it while A owns it: the future is not ready before the release.
    EXPECT_EQ(waiting.wait_for(0s), std::future_status::timeout);
    EXPECT_EQ(service.owning_thinker(id, "alice"), a);
    ctx_a->add_message(Message::incoming_text("answer from A"));
    service.release(*a);

    auto ctx_b = waiting.get();
    EXPECT_EQ(service.waiters(id), 0u);  // the waiter left the condition with the conversation
    ASSERT_EQ(ctx_b->messages().size(), 2u);
    EXPECT_EQ(ctx_b->messages()[1].blocks.size(), 1u);
    EXPECT_EQ(service.owning_thinker(id, "alice"), b);
    // "At acquisition success the holder ... stamps the context's workflowId".
    EXPECT_EQ(ctx_b->workflow_id(), b->workflow_id);
}

TEST(ConversationOwnership, TimeoutNamesTheOwner) {
    auto options = memory_options();
    options.acquire_timeout = 50ms;
    ConversationService service(std::move(options));
    auto a = thinker("OwnerThinker");
    auto b = thinker("Late");
    const std::string id = a->mint_conversation_id();
    service.obtain_conversation(id, a).get();
    std::string message;
    EXPECT_EQ(error_kind([&] { service.obtain_conversation(id, b).get(); }, &message),
              ErrorKind::kOwnership);
    EXPECT_NE(message.find("OwnerThinker"), std::string::npos) << message;
    EXPECT_NE(message.find(a->job_id), std::string::npos) << message;
    EXPECT_EQ(service.owning_thinker(id, "alice"), a);  // the waiter's failure changed nothing
}

TEST(ConversationOwnership, ReacquiresAtOnceWhenAlreadyItsOwn) {
    auto options = memory_options();
    options.acquire_timeout = 10s;
    ConversationService service(std::move(options));
    auto a = thinker("A");
    const std::string id = a->mint_conversation_id();
    auto first = service.obtain_conversation(id, a).get();
    auto again = service.obtain_conversation(id, a);
    ASSERT_EQ(again.wait_for(0s), std::future_status::ready);
    EXPECT_EQ(again.get(), first);
}

// ownership.14: "User-guarded: only the conversation's owner may reach it."
TEST(ConversationOwnership, OwningThinkerIsUserGuarded) {
    ConversationService service(memory_options());
    auto a = thinker("A", "alice");
    const std::string id = a->mint_conversation_id();
    service.obtain_conversation(id, a).get();
    EXPECT_EQ(service.owning_thinker(id, "alice"), a);
    EXPECT_EQ(service.owning_thinker(id, "mallory"), nullptr);
    EXPECT_EQ(service.owning_thinker("no-such-conversation", "alice"), nullptr);
    // Another user cannot adopt it either: it reads as not found, as the stores answer (her own
    // holder of that id is hers alone: ownership.101).
    auto m = thinker("M", "mallory");
    m->set_conversation_id(id);
    EXPECT_EQ(error_kind([&] { service.obtain_conversation(m).get(); }), ErrorKind::kNotFound);
    EXPECT_FALSE(service.force_release(id, "mallory"));
    EXPECT_EQ(service.owning_thinker(id, "alice"), a);
    service.release(*a);
    EXPECT_EQ(service.owning_thinker(id, "alice"), nullptr);
}

// ownership.3: "obtain_conversation does not consult the stores at all for the job-id-keyed
// default".
TEST(TemporaryConversation, NeverTouchesAStore) {
    const std::string log = store_test::temp_sqlite_path() + ".log";
    nucleo::PluginLoader loader;
    auto recording = loader.load(NUCLEO_RECORDING_STORE).make_store(R"({"log":")" + log + R"("})");
    ConversationServiceOptions options;
    options.persistent.emplace(recording);
    options.session.emplace(recording);
    options.cleanup_thread = false;
    ConversationService service(std::move(options));

    auto t = thinker("Lane");
    auto ctx = service.obtain_conversation(t->conversation_id(), t).get();
    EXPECT_EQ(ctx->conversation_id(), t->job_id);
    ctx->add_message(user_says("what is 2+2?"));
    EXPECT_FALSE(service.save_conversation(*ctx, *t).has_value());  // never saved
    service.release(*t);
    EXPECT_EQ(service.run_cleanup(std::chrono::steady_clock::now() + 1h), 1u);
    EXPECT_TRUE(read_lines(log).empty());
    std::filesystem::remove(log);
}

// ownership.21: "every other save is a plain update with no reads (PersistentStore::update)".
TEST(SaveDiscipline, LaterSavesAreUpdatesWithNoReads) {
    const std::string log = store_test::temp_sqlite_path() + ".log";
    nucleo::PluginLoader loader;
    auto recording = loader.load(NUCLEO_RECORDING_STORE).make_store(R"({"log":")" + log + R"("})");
    ConversationServiceOptions options;
    options.persistent.emplace(recording);
    options.cleanup_thread = false;
    ConversationService service(std::move(options));

    auto t = thinker("Chat");
    const std::string id = t->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, t).get();
    ctx->add_message(user_says("first question"));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    EXPECT_EQ(read_lines(log).back(), "create_conversation");
    std::filesystem::remove(log);
    ctx->add_message(Message::incoming_text("an answer"));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    ctx->add_message(user_says("second question"));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    EXPECT_EQ(read_lines(log),
              (std::vector<std::string>{"update_conversation", "update_conversation"}));
    std::filesystem::remove(log);
}

// persistence.108: a save after appends builds its delta from the new messages alone; what
// changed in place (a flag on an old message) or outside the messages (the grade) still reaches
// the store, and the stored snapshot is the conversation's document byte for byte.
TEST(SaveDiscipline, AGrownConversationSavesTheNewMessagesAndEveryOtherChange) {
    auto store = make_store("memory");
    ConversationServiceOptions o;
    o.persistent.emplace(store);
    o.cleanup_thread = false;
    ConversationService service(std::move(o));
    const nucleo::PersistentStore durable(store);
    auto t = thinker("Chat");
    const std::string id = t->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, t).get();
    const auto stored_matches = [&] {
        const nucleo::ConversationParts now = ctx->parts();
        EXPECT_EQ(nucleo::write_conversation_parts(durable.load(ctx->user_id(), id), {.pretty = false}),
                  nucleo::write_conversation_parts(now, {.pretty = false}));
    };
    ctx->add_message(user_says("first question"));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    for (int i = 0; i < 3; ++i) {
        ctx->add_message(Message::incoming_text("answer " + std::to_string(i)));
        ctx->add_message(user_says("question " + std::to_string(i)));
        ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
        stored_matches();
    }
    // In place: no new message, one old message's flag.
    ctx->set_message_compactable(ctx->messages()[1].id, false);
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    stored_matches();
    // Outside the messages, with an append.
    ctx->set_grade(nucleo::Grade::kLarge);
    ctx->add_message(Message::incoming_text("a last answer"));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    stored_matches();
    // Nothing changed: nothing to write.
    EXPECT_FALSE(service.save_conversation(*ctx, *t).has_value());
    // A rewrite of the list (compaction) renews its epoch: the whole comparison runs.
    std::vector<Message> kept(ctx->messages().begin() + 2, ctx->messages().end());
    std::vector<std::size_t> origins;
    for (std::size_t i = 2; i < ctx->messages().size(); ++i) origins.push_back(i);
    ctx->replace_messages(kept, origins);
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    stored_matches();
}

// ownership.21: "The FIRST save of a minted conversation CREATES the durable record - titled and
// embedded from that first user message"; "the utterance scan skips [app-authored messages]".
TEST(SaveDiscipline, FirstSaveCreatesTitledFromTheFirstHumanUtterance) {
    auto options = memory_options();
    std::vector<std::string> embedded;
    options.embedder = [&](std::string_view, std::string_view id, std::string_view text) {
        embedded.push_back(std::string(id) + "|" + std::string(text));
    };
    auto persistent = *options.persistent;
    ConversationService service(std::move(options));
    auto t = thinker("Chat");
    const std::string id = t->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, t).get();
    // Nothing exists in the store before the first user message.
    EXPECT_FALSE(service.save_conversation(*ctx, *t).has_value());
    ctx->add_message(user_says("You are talking to Acme support.", true));
    EXPECT_FALSE(service.save_conversation(*ctx, *t).has_value());
    ctx->add_message(user_says("Where is my parcel?\nIt was due Monday."));
    auto first = service.save_conversation(*ctx, *t);
    ASSERT_TRUE(first.has_value());
    const auto page = persistent.list("alice");
    ASSERT_EQ(page.conversations.size(), 1u);
    EXPECT_EQ(page.conversations[0].conversation_id, id);
    EXPECT_EQ(page.conversations[0].title, "Where is my parcel?");
    ASSERT_EQ(embedded.size(), 1u);
    EXPECT_EQ(embedded[0], id + "|Where is my parcel?\nIt was due Monday.");

    ctx->add_message(Message::incoming_text("On its way."));
    auto second = service.save_conversation(*ctx, *t);
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->messages_written, 1u);  // the delta, not the whole conversation
    EXPECT_EQ(embedded.size(), 1u);           // embedded exactly once
    EXPECT_EQ(persistent.versions("alice", id).size(), 2u);
    EXPECT_EQ(persistent.load("alice", id).messages.size(), 3u);
}

// ownership.22: "A missing row on update means the user deleted the conversation mid-turn: the save
// fails loudly, never resurrects."
TEST(SaveDiscipline, DeletedMidTurnFailsAndNeverResurrects) {
    auto options = memory_options();
    auto persistent = *options.persistent;
    ConversationService service(std::move(options));
    auto t = thinker("Chat");
    const std::string id = t->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, t).get();
    ctx->add_message(user_says("hello"));
    ASSERT_TRUE(service.save_conversation(*ctx, *t).has_value());
    persistent.remove("alice", id);
    ctx->add_message(Message::incoming_text("hi"));
    std::string message;
    EXPECT_EQ(error_kind([&] { service.save_conversation(*ctx, *t); }, &message),
              ErrorKind::kNotFound);
    EXPECT_NE(message.find("deleted"), std::string::npos) << message;
    EXPECT_EQ(error_kind([&] { (void)persistent.load("alice", id); }), ErrorKind::kNotFound);
    EXPECT_TRUE(persistent.list("alice").conversations.empty());
}

TEST(SaveDiscipline, OnlyTheOwnerSaves) {
    ConversationService service(memory_options());
    auto a = thinker("A");
    auto b = thinker("B");
    const std::string id = a->mint_conversation_id();
    auto ctx = service.obtain_conversation(id, a).get();
    ctx->add_message(user_says("hello"));
    EXPECT_EQ(error_kind([&] { service.save_conversation(*ctx, *b); }), ErrorKind::kOwnership);
    service.release(*a);
    EXPECT_EQ(error_kind([&] { service.save_conversation(*ctx, *a); }), ErrorKind::kOwnership);
}

// ownership.12: "ConversationService tries SessionStore first, falls back to
// PersistentStore"; a save refreshes the session copy so it never serves stale data.
TEST(DualStores, ReadThroughFillsTheSessionStoreAndASaveRefreshesIt) {
    auto options = memory_options();
    auto persistent = *options.persistent;
    auto session = *options.session;
    auto writer = thinker("Writer");
    const std::string id = writer->mint_conversation_id();
    {
        // A conversation only the persistent store holds.
        nucleo::ConversationParts parts;
        parts.conversation_id = id;
        parts.user_id = "alice";
        parts.messages.push_back(user_says("stored question"));
        persistent.create("alice", parts, "stored question");
    }
    ASSERT_FALSE(session.get("alice", id).has_value());
    ConversationService service(std::move(options));
    auto t = thinker("Resumer");
    t->set_conversation_id(id);
    t->grade = nucleo::Grade::kLarge;
    t->palette = [] {
        return std::vector<nucleo::ToolDefinitionBlock>{{"lookup", "Looks an order up."}};
    };
    auto handler = std::make_shared<ProseHandler>();
    auto ctx = service.obtain_conversation(id, t, handler, true).get();
    ASSERT_EQ(ctx->messages().size(), 1u);
    // Handlers are never persisted: the resuming thinker's reaches the restored outgoing message.
    EXPECT_EQ(ctx->messages()[0].response_handler, handler);
    // The adopting thinker's CURRENT declarations and palette.
    EXPECT_EQ(ctx->grade(), nucleo::Grade::kLarge);
    ASSERT_EQ(ctx->declared_tools().size(), 1u);
    EXPECT_EQ(ctx->declared_tools()[0].definition.name, "lookup");
    auto cached = session.get("alice", id);
    ASSERT_TRUE(cached.has_value());
    EXPECT_EQ(cached->messages.size(), 1u);

    ctx->add_message(Message::incoming_text("an answer"));
    auto saved = service.save_conversation(*ctx, *t);
    ASSERT_TRUE(saved.has_value());
    EXPECT_EQ(saved->version, "2");  // an update, based on the loaded version
    cached = session.get("alice", id);
    ASSERT_TRUE(cached.has_value());
    EXPECT_EQ(cached->messages.size(), 2u);
}

TEST(DualStores, AdoptingAnIdNoStoreHoldsFails) {
    ConversationService service(memory_options());
    auto t = thinker("Resumer");
    t->set_conversation_id("Chat-conv-dead-beefdeadbeef");
    std::string message;
    EXPECT_EQ(
        error_kind([&] { service.obtain_conversation(t->conversation_id(), t, {}, true).get(); },
                   &message),
        ErrorKind::kNotFound);
    EXPECT_NE(message.find("Chat-conv-dead-beefdeadbeef"), std::string::npos);
    // The intent-following form: an adopted id must exist.
    EXPECT_EQ(error_kind([&] { service.obtain_conversation(t).get(); }), ErrorKind::kNotFound);
    // A minted one need not.
    auto minter = thinker("Minter");
    const std::string minted = minter->mint_conversation_id();
    EXPECT_EQ(service.obtain_conversation(minter).get()->conversation_id(), minted);
    // The failed obtain left no owner behind.
    EXPECT_EQ(service.owning_thinker(t->conversation_id(), "alice"), nullptr);
}

TEST(DualStores, SqliteConversationSurvivesTheService) {
    const std::string path = store_test::temp_sqlite_path();
    std::string id;
    {
        ConversationServiceOptions options;
        options.persistent.emplace(make_store("sqlite", path));
        options.cleanup_thread = false;
        ConversationService service(std::move(options));
        auto t = thinker("Chat");
        id = t->mint_conversation_id();
        auto ctx = service.obtain_conversation(id, t).get();
        ctx->add_message(user_says("remember me"));
        service.save_conversation(*ctx, *t);
        ctx->add_message(Message::incoming_text("I will"));
        service.save_conversation(*ctx, *t);
        service.release(*t);
    }
    ConversationServiceOptions options;
    options.persistent.emplace(make_store("sqlite", path));
    options.cleanup_thread = false;
    ConversationService service(std::move(options));
    auto t = thinker("Chat");
    t->set_conversation_id(id);
    auto ctx = service.obtain_conversation(id, t, {}, true).get();
    ASSERT_EQ(ctx->messages().size(), 2u);
    ctx->add_message(user_says("again"));
    auto saved = service.save_conversation(*ctx, *t);
    ASSERT_TRUE(saved.has_value());
    EXPECT_EQ(saved->version, "3");
    std::filesystem::remove(path);
}

// ownership.32: "cancels the owning turn's whole WORKFLOW and lets that turn's own finally release
// the holder".
TEST(ReleasePatterns, ForceReleaseCancelsTheOwnerWhoseCleanupReleases) {
    ConversationService service(memory_options());
    auto owner = thinker("Owner");
    const std::string id = owner->mint_conversation_id();
    std::promise<void> cancelled;
    owner->cancel_workflow = [&] { cancelled.set_value(); };
    service.obtain_conversation(id, owner).get();

    std::thread turn([&] {
        cancelled.get_future().wait();  // the turn notices its cancellation...
        service.release(*owner);        // ...and its own cleanup releases
    });
    auto next = thinker("Next");
    next->set_conversation_id(id);
    auto waiting = service.obtain_conversation(id, next);
    EXPECT_TRUE(service.force_release(id, "alice"));
    EXPECT_NE(waiting.get(), nullptr);
    EXPECT_EQ(service.owning_thinker(id, "alice"), next);
    turn.join();
}

// ownership.31: "releaseAllForJob(jobId) evicts only conversations the job failed to release
// itself".
TEST(ReleasePatterns, ReleaseAllForJobEvictsOnlyWhatTheJobStillOwns) {
    ConversationService service(memory_options());
    auto t = thinker("T");
    const std::string kept = t->mint_conversation_id();
    service.obtain_conversation(kept, t).get();
    service.release(*t);  // the thinker's own finally-release with retention
    const std::string leaked = t->mint_conversation_id();
    service.obtain_conversation(leaked, t).get();
    EXPECT_EQ(service.holders(), 2u);
    EXPECT_EQ(service.release_all_for_job(t->job_id), 1u);
    EXPECT_EQ(service.holders(), 1u);  // the warm holder survives
    EXPECT_EQ(service.owning_thinker(leaked, "alice"), nullptr);
}

// ownership.33: "Expired, unowned holders are evicted from memory".
TEST(Cleanup, EvictsExpiredUnownedHoldersByEachThinkersRetention) {
    ConversationService service(memory_options());
    auto brief = thinker("Brief");
    brief->retain = 1min;
    auto longer = thinker("Longer");
    longer->retain = 1h;
    auto busy = thinker("Busy");
    busy->retain = 0ms;
    service.obtain_conversation(brief->mint_conversation_id(), brief).get();
    service.obtain_conversation(longer->mint_conversation_id(), longer).get();
    service.obtain_conversation(busy->mint_conversation_id(), busy).get();
    service.release(*brief);
    service.release(*longer);
    const auto now = std::chrono::steady_clock::now();
    EXPECT_EQ(service.run_cleanup(now), 0u);
    EXPECT_EQ(service.run_cleanup(now + 2min), 1u);  // Brief expired; Busy is owned
    EXPECT_EQ(service.holders(), 2u);
    EXPECT_EQ(service.owning_thinker(busy->conversation_id(), "alice"), busy);
    EXPECT_EQ(service.run_cleanup(now + 2h), 1u);  // Longer now too
    EXPECT_EQ(service.holders(), 1u);
}

TEST(Cleanup, BackgroundThreadStopsCleanly) {
    auto options = memory_options();
    options.cleanup_thread = true;
    options.cleanup_interval = 1h;
    ConversationService service(std::move(options));
    service.shutdown();  // joins a thread parked for an hour without waiting it out
    EXPECT_TRUE(service.stopping());
}

// ownership.34: "A request that arrives while it is stopping is refused at the door".
TEST(Shutdown, RefusesNewObtainsAndFailsWaitingOnes) {
    auto options = memory_options();
    options.acquire_timeout = 1h;
    ConversationService service(std::move(options));
    auto a = thinker("A");
    const std::string id = a->mint_conversation_id();
    service.obtain_conversation(id, a).get();
    auto b = thinker("B");
    auto waiting = service.obtain_conversation(id, b);
    service.shutdown();
    std::string message;
    EXPECT_EQ(error_kind([&] { waiting.get(); }, &message), ErrorKind::kInternal);
    EXPECT_EQ(message, "ConversationService is shutting down");
    auto c = thinker("C");
    EXPECT_EQ(
        error_kind([&] { service.obtain_conversation(c->conversation_id(), c).get(); }, &message),
        ErrorKind::kInternal);
    EXPECT_EQ(message, "ConversationService is shutting down");
    EXPECT_EQ(service.holders(), 0u);
}

}  // namespace
