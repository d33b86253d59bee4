// The conformance suite (persistence.1-10: every store passes one shared conformance suite, the
// same tests run against every store): the persistent surface over memory, sqlite and postgres; the
// session and lease surfaces over memory and redis. Real servers, no fakes.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "nucleo/document.hpp"
#include "nucleo/store.hpp"
#include "support.hpp"

namespace {

using nucleo::ConversationParts;
using nucleo::ErrorKind;
using nucleo::LeaseStore;
using nucleo::PersistentStore;
using nucleo::SessionStore;
using nucleo::SnapshotDelta;
using store_test::conversation;
using store_test::error_kind;
using store_test::make_store;
using store_test::next_message;
using store_test::unique;

std::string compact(const ConversationParts& parts) {
    return nucleo::write_conversation_parts(parts, {.pretty = false});
}

class Persistent : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override {
        if (GetParam() == "sqlite") sqlite_path_ = store_test::temp_sqlite_path();
        store_.emplace(make_store(GetParam(), sqlite_path_));
        alice_ = unique("alice");
        bob_ = unique("bob");
    }
    void TearDown() override {
        store_.reset();
        for (const char* suffix : {"", "-wal", "-shm"}) {
            if (!sqlite_path_.empty()) std::filesystem::remove(sqlite_path_ + suffix);
        }
    }
    PersistentStore& store() { return *store_; }

    /// Saves `now` over `saved` (incrementally) and makes it the saved state.
    nucleo::SaveResult save(const std::string& who, ConversationParts& saved,
                            const ConversationParts& now, std::string& version,
                            std::optional<int64_t> token = {}) {
        auto result = store().update(who, now.conversation_id, version,
                                     SnapshotDelta::between(saved, now), token);
        saved = now;
        version = result.version;
        return result;
    }

    std::string sqlite_path_;
    std::optional<PersistentStore> store_;
    std::string alice_, bob_;
};

TEST_P(Persistent, CapabilitiesSayPersistentWithHistory) {
    const auto caps = store().capabilities();
    EXPECT_TRUE(caps.persistent);
    EXPECT_TRUE(caps.version_history);
}

// abi.135, persistence.113: latest_version is the history's newest entry and its token, for
// the owner only, and the store offers it (so an obtain reads no history).
TEST_P(Persistent, LatestVersionIsTheNewestOfTheHistoryWithItsToken) {
    ASSERT_TRUE(store().instance().has_latest_version());
    ConversationParts saved = conversation(unique("latest"), 2);
    const std::string id = saved.conversation_id;
    std::string version = store().create(alice_, saved, "t", 3).version;
    nucleo::LatestVersion latest = store().latest(alice_, id);
    ASSERT_TRUE(latest.version.has_value());
    EXPECT_EQ(latest.version->version, version);
    EXPECT_EQ(latest.fencing_token, std::optional<int64_t>(3));
    for (int i = 0; i < 5; ++i) {
        ConversationParts now = saved;
        now.messages.push_back(next_message(now));
        save(alice_, saved, now, version, 4 + i);
    }
    const nucleo::VersionHistory all = store().history(alice_, id);
    latest = store().latest(alice_, id);
    ASSERT_TRUE(latest.version.has_value());
    EXPECT_EQ(latest.version->version, all.versions.back().version);
    EXPECT_EQ(latest.version->version, version);
    EXPECT_EQ(latest.version->saved_at, all.versions.back().saved_at);
    EXPECT_EQ(latest.fencing_token, all.fencing_token);
    EXPECT_EQ(latest.fencing_token, std::optional<int64_t>(8));
    EXPECT_EQ(error_kind([&] { (void)store().latest(bob_, id); }), ErrorKind::kNotFound);
    EXPECT_EQ(error_kind([&] { (void)store().latest(alice_, unique("absent")); }),
              ErrorKind::kNotFound);
}

TEST_P(Persistent, CreateThenLoadGivesTheDocumentByteForByte) {
    // Every block kind, objective, tools, declarations: the whole document v1 survives a store.
    const std::string fixture =
        std::string(NUCLEO_SOURCE_DIR) + "/tests/document/fixtures/every_block.json";
    std::ifstream in(fixture);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ConversationParts parts = nucleo::read_conversation_parts(text);
    parts.conversation_id = unique("every");
    const auto saved = store().create(alice_, parts, "Where is order 42?");
    EXPECT_EQ(saved.version, "1");
    EXPECT_FALSE(saved.saved_at.empty());
    EXPECT_EQ(store().load_document(alice_, parts.conversation_id), compact(parts));
    EXPECT_EQ(compact(store().load(alice_, parts.conversation_id)), compact(parts));
}

TEST_P(Persistent, CreateOfAnExistingIdIsRefused) {
    const auto parts = conversation(unique("c"), 2);
    store().create(alice_, parts, "t");
    EXPECT_EQ(error_kind([&] { store().create(alice_, parts, "t"); }), ErrorKind::kInvalidArgument);
}

// persistence.3: "every conversation-addressed store operation takes the ACTING principal, and
// durable stores enforce ownership under that identity" -- another user's id reads as not found.
TEST_P(Persistent, AnotherUsersConversationReadsAsNotFoundOnEveryCall) {
    auto parts = conversation(unique("c"), 3);
    const std::string id = parts.conversation_id;
    const auto v1 = store().create(alice_, parts, "alice's");
    auto later = parts;
    later.messages.push_back(next_message(later));
    const auto delta = SnapshotDelta::between(parts, later);

    std::string message;
    EXPECT_EQ(error_kind([&] { (void)store().load(bob_, id); }, &message), ErrorKind::kNotFound);
    EXPECT_EQ(message.find("forbidden"), std::string::npos) << message;
    EXPECT_EQ(error_kind([&] { (void)store().load_document(bob_, id); }), ErrorKind::kNotFound);
    EXPECT_EQ(error_kind([&] { store().update(bob_, id, v1.version, delta); }),
              ErrorKind::kNotFound);
    EXPECT_EQ(error_kind([&] { store().replace(bob_, later); }), ErrorKind::kNotFound);
    EXPECT_EQ(error_kind([&] { (void)store().versions(bob_, id); }), ErrorKind::kNotFound);
    EXPECT_EQ(error_kind([&] { (void)store().load_version(bob_, id, v1.version); }),
              ErrorKind::kNotFound);
    EXPECT_EQ(error_kind([&] { store().remove(bob_, id); }), ErrorKind::kNotFound);
    EXPECT_TRUE(store().list(bob_).conversations.empty());
    // Bob may use the same id for a conversation of his own: it leaks nothing of Alice's.
    store().create(bob_, conversation(id, 1), "bob's");
    EXPECT_EQ(store().list(bob_).conversations.at(0).title, "bob's");
    EXPECT_EQ(compact(store().load(alice_, id)), compact(parts));
    EXPECT_EQ(store().versions(alice_, id).size(), 1u);
}

// persistence.30: every save is a version and load_version rebuilds it -- exactly.
TEST_P(Persistent, EveryVersionRebuildsExactlyAsSaved) {
    ConversationParts saved = conversation(unique("c"), 6);
    std::vector<std::string> expected{compact(saved)};
    std::string version = store().create(alice_, saved, "t").version;

    ConversationParts now = saved;  // 1. append two messages
    now.messages.push_back(next_message(now));
    now.messages.push_back(next_message(now));
    save(alice_, saved, now, version);
    expected.push_back(compact(now));

    now.messages[1].cache = true;  // 2. a flag of an old message, and the requested tokens
    now.messages[2].requested_output_tokens = 4096;
    save(alice_, saved, now, version);
    expected.push_back(compact(now));

    now.objective.push_back({"style", nucleo::TextBlock{"Be brief."}});  // 3. header fields
    now.prior_spec_id = "anthropic/claude-x";
    now.compactable = false;
    save(alice_, saved, now, version);
    expected.push_back(compact(now));

    // 4. compaction: messages m2..m5 replaced by one summary message.
    nucleo::Message summary = nucleo::Message::outgoing_text("Summary: orders 1-4 shipped.");
    summary.id = "summary-1";
    now.messages.erase(now.messages.begin() + 1, now.messages.begin() + 5);
    now.messages.insert(now.messages.begin() + 1, summary);
    save(alice_, saved, now, version);
    expected.push_back(compact(now));

    now.messages.erase(now.messages.begin());  // 5. a removal at the front, and an append
    now.messages.push_back(next_message(now));
    now.messages.back().id = "m-last";
    save(alice_, saved, now, version);
    expected.push_back(compact(now));

    save(alice_, saved, now, version);  // 6. nothing changed: still a version
    expected.push_back(compact(now));

    const auto versions = store().versions(alice_, now.conversation_id);
    ASSERT_EQ(versions.size(), expected.size());
    for (std::size_t i = 0; i < versions.size(); ++i) {
        EXPECT_EQ(versions[i].version, std::to_string(i + 1));
        EXPECT_FALSE(versions[i].saved_at.empty());
        if (i > 0) {
            EXPECT_LE(versions[i - 1].saved_at, versions[i].saved_at);
        }
        EXPECT_EQ(store().load_version_document(alice_, now.conversation_id, versions[i].version),
                  expected[i])
            << "version " << versions[i].version;
    }
    EXPECT_EQ(store().load_document(alice_, now.conversation_id), expected.back());
    EXPECT_EQ(error_kind([&] { (void)store().load_version(alice_, now.conversation_id, "99"); }),
              ErrorKind::kNotFound);
    EXPECT_EQ(error_kind([&] { (void)store().load_version(alice_, now.conversation_id, "x'"); }),
              ErrorKind::kNotFound);
}

// persistence.6: a save writes what changed since the last one (new messages, changed flags),
// not the whole conversation again.
TEST_P(Persistent, AnUpdateWritesOnlyTheChange) {
    ConversationParts saved = conversation(unique("c"), 200, 400);
    std::string version = store().create(alice_, saved, "big").version;
    const std::size_t whole = compact(saved).size();
    ConversationParts now = saved;
    now.messages.push_back(next_message(now, 400));
    const auto appended = save(alice_, saved, now, version);
    EXPECT_EQ(appended.messages_written, 1u);
    EXPECT_GT(appended.bytes_written, 400u);
    EXPECT_LT(appended.bytes_written, 2'000u) << "of a " << whole << "-byte conversation";

    now.messages[10].compactable = false;  // a flag: that one message again, nothing else
    const auto flagged = save(alice_, saved, now, version);
    EXPECT_EQ(flagged.messages_written, 1u);
    EXPECT_LT(flagged.bytes_written, 2'000u);
    EXPECT_EQ(store().load_document(alice_, now.conversation_id), compact(now));

    if (GetParam() == "sqlite") {
        // The file agrees with the store's account: one row per message, small version rows.
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open_v2(sqlite_path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
                  SQLITE_OK);
        auto scalar = [&](const char* sql) {
            sqlite3_stmt* s = nullptr;
            EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &s, nullptr), SQLITE_OK) << sql;
            int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
            sqlite3_finalize(s);
            return v;
        };
        EXPECT_EQ(scalar("SELECT count(*) FROM messages"), 201);
        EXPECT_GT(scalar("SELECT length(body) FROM versions WHERE version=1"),
                  static_cast<int64_t>(whole) - 10);
        EXPECT_LT(scalar("SELECT length(body) FROM versions WHERE version=2"), 1'000);
        EXPECT_LT(scalar("SELECT length(body) FROM versions WHERE version=3"), 1'000);
        sqlite3_close(db);
    }
}

// persistence.7: an update whose row is gone (deleted mid-turn) fails loudly and never
// resurrects it.
TEST_P(Persistent, AnUpdateOfADeletedConversationFailsAndNeverResurrects) {
    ConversationParts saved = conversation(unique("c"), 3);
    const std::string version = store().create(alice_, saved, "t").version;
    store().remove(alice_, saved.conversation_id);
    ConversationParts now = saved;
    now.messages.push_back(next_message(now));
    EXPECT_EQ(error_kind([&] {
                  store().update(alice_, now.conversation_id, version,
                                 SnapshotDelta::between(saved, now));
              }),
              ErrorKind::kNotFound);
    EXPECT_EQ(error_kind([&] { store().replace(alice_, now); }), ErrorKind::kNotFound);
    EXPECT_EQ(error_kind([&] { (void)store().load(alice_, now.conversation_id); }),
              ErrorKind::kNotFound);
    EXPECT_EQ(error_kind([&] { (void)store().versions(alice_, now.conversation_id); }),
              ErrorKind::kNotFound);
    EXPECT_TRUE(store().list(alice_).conversations.empty());
    EXPECT_EQ(error_kind([&] { store().remove(alice_, now.conversation_id); }),
              ErrorKind::kNotFound);
}

// persistence.7, a failure mode peers have: two writers on one conversation, one update silently
// lost.
TEST_P(Persistent, AWriterBehindTheHeadVersionIsRefused) {
    ConversationParts saved = conversation(unique("c"), 2);
    const std::string v1 = store().create(alice_, saved, "t").version;
    ConversationParts first = saved, second = saved;
    first.messages.push_back(next_message(first));
    second.messages.push_back(next_message(second));
    second.messages.back().id = "other";
    store().update(alice_, saved.conversation_id, v1, SnapshotDelta::between(saved, first));
    EXPECT_EQ(error_kind([&] {
                  store().update(alice_, saved.conversation_id, v1,
                                 SnapshotDelta::between(saved, second));
              }),
              ErrorKind::kOwnership);
    EXPECT_EQ(store().load_document(alice_, saved.conversation_id), compact(first));
}

// ownership.42: a writer whose lease was lost or taken over has its save refused, and no
// committed save is ever silently lost.
TEST_P(Persistent, AStaleFencingTokenIsRefusedAfterTheLeaseIsTakenOver) {
    LeaseStore leases(make_store("redis"));
    ConversationParts saved = conversation(unique("c"), 2);
    const std::string id = saved.conversation_id;
    const auto host_a = leases.acquire(alice_, id, "host-a", 1);  // expires at once
    std::string version = store().create(alice_, saved, "t", host_a.fencing_token).version;

    // Host B takes over once A's lease lapsed (bounded poll, no sleep).
    std::optional<nucleo::LeaseGrant> host_b;
    for (int i = 0; i < 200'000 && !host_b; ++i) {
        try {
            host_b = leases.acquire(alice_, id, "host-b", 60'000);
        } catch (const nucleo::Error& e) {
            ASSERT_EQ(e.kind(), ErrorKind::kOwnership) << e.what();
        }
    }
    ASSERT_TRUE(host_b) << "host-a's 1 ms lease never lapsed";
    EXPECT_GT(host_b->fencing_token, host_a.fencing_token);

    ConversationParts by_b = saved;
    by_b.messages.push_back(next_message(by_b));
    by_b.messages.back().id = "from-b";
    const std::string base = version;
    ConversationParts b_saved = saved;
    save(alice_, b_saved, by_b, version, host_b->fencing_token);

    // A, still believing it owns the conversation, saves with its old token (and even with B's
    // version as its base): refused, and B's save stands.
    ConversationParts by_a = by_b;
    by_a.messages.push_back(next_message(by_a));
    std::string message;
    EXPECT_EQ(error_kind(
                  [&] {
                      store().update(alice_, id, version, SnapshotDelta::between(by_b, by_a),
                                     host_a.fencing_token);
                  },
                  &message),
              ErrorKind::kOwnership);
    EXPECT_NE(message.find("fencing token"), std::string::npos) << message;
    // A save without any token, once tokens are in use, is refused too.
    EXPECT_EQ(error_kind(
                  [&] { store().update(alice_, id, version, SnapshotDelta::between(by_b, by_a)); }),
              ErrorKind::kOwnership);
    EXPECT_EQ(store().load_document(alice_, id), compact(by_b));
    EXPECT_NE(base, version);
    // A's renew fails: it learns it lost the lease.
    EXPECT_EQ(error_kind([&] { leases.renew(alice_, id, "host-a", 1000, host_a.fencing_token); }),
              ErrorKind::kOwnership);
    leases.release(alice_, id, "host-b");
}

TEST_P(Persistent, ListPagesThroughAUsersConversationsInCreationOrder) {
    std::vector<std::string> ids;
    for (int i = 0; i < 5; ++i) {
        ids.push_back(unique("c" + std::to_string(i)));
        store().create(alice_, conversation(ids.back(), 1), "title " + std::to_string(i));
    }
    store().create(bob_, conversation(unique("bobs"), 1), "not alice's");
    std::vector<std::string> seen;
    std::optional<std::string> cursor;
    int pages = 0;
    do {
        const auto page = store().list(alice_, 2, cursor);
        EXPECT_LE(page.conversations.size(), 2u);
        for (const auto& c : page.conversations) {
            seen.push_back(c.conversation_id);
            EXPECT_EQ(c.title, "title " + std::to_string(seen.size() - 1));
            EXPECT_FALSE(c.created_at.empty());
            EXPECT_FALSE(c.updated_at.empty());
        }
        cursor = page.next_cursor;
    } while (cursor && ++pages < 10);
    EXPECT_EQ(seen, ids);
}

// persistence.5 and persistence.104: ids with quotes and SQL are kept exactly (prepared
// statements only), up to the longest id the boundary allows (256 bytes, counted in bytes of
// multi-byte characters too); NULs and longer ids are refused alike (below).
TEST_P(Persistent, IdsWithQuotesAndTheLongestAllowedAreKeptExactly) {
    const std::string quoted = unique("it's \"quoted\"; DROP TABLE conversations; --");
    std::string longest = unique("long");
    while (longest.size() + 2 <= 256) longest += "\xC3\xA9";  // é: two bytes
    while (longest.size() < 256) longest += 'x';
    std::string long_user = unique("user");
    long_user += std::string(256 - long_user.size(), 'u');
    for (const auto& [who, id] : std::vector<std::pair<std::string, std::string>>{
             {alice_, quoted}, {alice_, longest}, {long_user, quoted}}) {
        ConversationParts saved = conversation(id, 2);
        std::string version = store().create(who, saved, "odd").version;
        ConversationParts now = saved;
        now.messages.push_back(next_message(now));
        save(who, saved, now, version);
        EXPECT_EQ(store().load_document(who, id), compact(now));
        EXPECT_EQ(store().versions(who, id).size(), 2u);
        bool listed = false;
        for (const auto& c : store().list(who, 1000).conversations)
            listed |= c.conversation_id == id;
        EXPECT_TRUE(listed);
        EXPECT_EQ(error_kind([&] { (void)store().load(who.substr(1), id); }),
                  ErrorKind::kNotFound);
    }
}

// persistence.104: the bad ids every store refuses alike, and the words the refusal says.
struct BadId {
    const char* what;
    std::string id;
    const char* says;
};

std::vector<BadId> bad_ids() {
    return {{"257 bytes", std::string(257, 'x'), "257 bytes long; at most 256"},
            {"1 MB", std::string(1 << 20, 'x'), "1048576 bytes long"},
            {"a NUL byte", std::string("a\0b", 3), "control character U+0000 at byte 1"},
            {"a newline", "a\nb", "control character U+000A at byte 1"},
            {"a C1 control", "a\xC2\x85", "control character U+0085 at byte 1"},
            {"a stray byte", "ab\xFF", "not valid UTF-8 at byte 2"},
            {"an overlong form", "\xC0\xAF", "not valid UTF-8 at byte 0"},
            {"a surrogate", "\xED\xA0\x80", "not valid UTF-8 at byte 0"}};
}

// A message whose text is not valid UTF-8.
nucleo::Message bad_text_message(const ConversationParts& parts) {
    nucleo::Message m = nucleo::Message::outgoing_text("caf\xE9 au lait");  // Latin-1 é
    m.id = next_message(parts).id;
    return m;
}

// persistence.104: the same bad input gives the same refusal on every store (the session suite
// runs it on memory and redis); each refusal names what and where, and nothing stored changes.
TEST_P(Persistent, BadIdsAndTextAreRefusedAlikeAndChangeNothing) {
    const ConversationParts good = conversation(unique("good"), 2);
    const std::string v1 = store().create(alice_, good, "good").version;
    for (const BadId& bad : bad_ids()) {
        SCOPED_TRACE(bad.what);
        std::string message;
        EXPECT_EQ(error_kind([&] { store().create(alice_, conversation(bad.id, 1), "t"); },
                             &message),
                  ErrorKind::kInvalidArgument);
        EXPECT_NE(message.find("conversation id"), std::string::npos) << message;
        EXPECT_NE(message.find(bad.says), std::string::npos) << message;
        EXPECT_LT(message.size(), 400u) << "a long id is cut short in the message";
        EXPECT_EQ(error_kind([&] { (void)store().load(alice_, bad.id); }),
                  ErrorKind::kInvalidArgument);
        EXPECT_EQ(error_kind([&] { (void)store().versions(alice_, bad.id); }),
                  ErrorKind::kInvalidArgument);
        EXPECT_EQ(error_kind([&] { store().remove(alice_, bad.id); }),
                  ErrorKind::kInvalidArgument);
        EXPECT_EQ(error_kind([&] { store().create(bad.id, conversation(unique("c"), 1), "t"); },
                             &message),
                  ErrorKind::kInvalidArgument);
        EXPECT_NE(message.find("user id"), std::string::npos) << message;
        EXPECT_EQ(error_kind([&] { (void)store().list(bad.id); }), ErrorKind::kInvalidArgument);
    }
    // Text: refused at create and at update, naming the conversation and the byte.
    ConversationParts bad_new = conversation(unique("text"), 1);
    bad_new.messages.push_back(bad_text_message(bad_new));
    std::string message;
    EXPECT_EQ(error_kind([&] { store().create(alice_, bad_new, "t"); }, &message),
              ErrorKind::kInvalidArgument);
    EXPECT_NE(message.find("not valid UTF-8 at byte"), std::string::npos) << message;
    EXPECT_NE(message.find("caf"), std::string::npos) << "the text just before: " << message;
    ConversationParts bad_next = good;
    bad_next.messages.push_back(bad_text_message(bad_next));
    EXPECT_EQ(error_kind([&] {
                  store().update(alice_, good.conversation_id, v1,
                                 SnapshotDelta::between(good, bad_next));
              }),
              ErrorKind::kInvalidArgument);
    // Nothing changed: the one good conversation, at its one version.
    const auto page = store().list(alice_, 1000);
    ASSERT_EQ(page.conversations.size(), 1u);
    EXPECT_EQ(page.conversations[0].conversation_id, good.conversation_id);
    EXPECT_EQ(store().versions(alice_, good.conversation_id).size(), 1u);
    EXPECT_EQ(store().load_document(alice_, good.conversation_id), compact(good));
}

// The stores that build only the persistent surface (memory builds every surface, so the case
// does not apply to it and it is not instantiated with it).
class PersistentOnly : public Persistent {};

TEST_P(PersistentOnly, SessionAndLeaseSurfacesAnswerNotImplementedWhenNotBuilt) {
    ASSERT_FALSE(store().capabilities().session) << GetParam() << " builds the session surface";
    const auto& raw = store().instance();
    EXPECT_THROW((void)raw.session_get(alice_, "c"), nucleo::NotImplementedException);
    EXPECT_THROW(raw.session_put(alice_, "c", "{}", 0), nucleo::NotImplementedException);
    EXPECT_THROW(raw.session_invalidate(alice_, "c"), nucleo::NotImplementedException);
    EXPECT_EQ(error_kind([&] { raw.lease(alice_, "c", R"({"op":"acquire"})"); }),
              ErrorKind::kNotImplemented);
}

INSTANTIATE_TEST_SUITE_P(Stores, Persistent, ::testing::Values("memory", "sqlite", "postgres"),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Stores, PersistentOnly, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

// ---- session surface ----

class Session : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override {
        store_.emplace(make_store(GetParam()));
        alice_ = unique("alice");
    }
    std::optional<SessionStore> store_;
    std::string alice_;
};

TEST_P(Session, PutGetInvalidateUnderThePrincipal) {
    const auto parts = conversation(unique("c"), 3);
    const std::string id = parts.conversation_id;
    EXPECT_FALSE(store_->get(alice_, id));
    store_->put(alice_, parts, 60'000);
    auto got = store_->get(alice_, id);
    ASSERT_TRUE(got);
    EXPECT_EQ(compact(*got), compact(parts));
    EXPECT_FALSE(store_->get(unique("bob"), id)) << "another user's id reads as a miss";
    // Keys are namespaced without ambiguity: ("a:b", "c") is not ("a", "b:c").
    auto colon = conversation("b:" + id, 1);
    store_->put(alice_ + ":x", conversation(id, 1), 60'000);
    EXPECT_FALSE(store_->get(alice_, "x:" + id));
    store_->put(alice_, colon, 60'000);
    EXPECT_EQ(compact(*store_->get(alice_, colon.conversation_id)), compact(colon));
    store_->invalidate(alice_, id);
    EXPECT_FALSE(store_->get(alice_, id));
    store_->invalidate(alice_, id);  // absent is not an error
    EXPECT_TRUE(store_->get(alice_ + ":x", id)) << "only that entry went";
}

// persistence.104: the persistent suite's bad input, on the session surface.
TEST_P(Session, BadIdsAndTextAreRefusedAlikeAndChangeNothing) {
    const auto good = conversation(unique("good"), 2);
    store_->put(alice_, good, 60'000);
    for (const BadId& bad : bad_ids()) {
        SCOPED_TRACE(bad.what);
        std::string message;
        EXPECT_EQ(error_kind([&] { store_->put(alice_, conversation(bad.id, 1), 60'000); },
                             &message),
                  ErrorKind::kInvalidArgument);
        EXPECT_NE(message.find("conversation id"), std::string::npos) << message;
        EXPECT_NE(message.find(bad.says), std::string::npos) << message;
        EXPECT_EQ(error_kind([&] { (void)store_->get(alice_, bad.id); }),
                  ErrorKind::kInvalidArgument);
        EXPECT_EQ(error_kind([&] { store_->invalidate(alice_, bad.id); }),
                  ErrorKind::kInvalidArgument);
        EXPECT_EQ(error_kind([&] { store_->put(bad.id, good, 60'000); }, &message),
                  ErrorKind::kInvalidArgument);
        EXPECT_NE(message.find("user id"), std::string::npos) << message;
    }
    auto bad_text = good;
    bad_text.messages.push_back(bad_text_message(bad_text));
    std::string message;
    EXPECT_EQ(error_kind([&] { store_->put(alice_, bad_text, 60'000); }, &message),
              ErrorKind::kInvalidArgument);
    EXPECT_NE(message.find("not valid UTF-8 at byte"), std::string::npos) << message;
    auto kept = store_->get(alice_, good.conversation_id);
    ASSERT_TRUE(kept.has_value());
    EXPECT_EQ(compact(*kept), compact(good)) << "the refused put changed nothing";
}

TEST_P(Session, AnEntryExpiresAfterItsTtl) {
    const auto parts = conversation(unique("c"), 1);
    store_->put(alice_, parts, 1);
    bool expired = false;
    for (int i = 0; i < 200'000 && !expired; ++i) {
        expired = !store_->get(alice_, parts.conversation_id).has_value();
    }
    EXPECT_TRUE(expired);
}

// The stores that build only the session surface (memory is persistent too; not instantiated).
class SessionOnly : public Session {};

TEST_P(SessionOnly, PersistentSurfaceAnswersNotImplementedWhenNotBuilt) {
    const auto& raw = store_->instance();
    PersistentStore persistent(raw);
    ASSERT_FALSE(persistent.capabilities().persistent) << GetParam() << " is persistent too";
    const auto parts = conversation(unique("c"), 1);
    EXPECT_THROW(persistent.create(alice_, parts, "t"), nucleo::NotImplementedException);
    EXPECT_THROW((void)persistent.load(alice_, "c"), nucleo::NotImplementedException);
    EXPECT_THROW((void)persistent.versions(alice_, "c"), nucleo::NotImplementedException);
    EXPECT_THROW((void)persistent.list(alice_), nucleo::NotImplementedException);
    EXPECT_THROW(persistent.remove(alice_, "c"), nucleo::NotImplementedException);
}

INSTANTIATE_TEST_SUITE_P(Stores, Session, ::testing::Values("memory", "redis"),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Stores, SessionOnly, ::testing::Values("redis"),
                         [](const auto& info) { return info.param; });

// ---- lease surface ----

class Lease : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override {
        store_.emplace(make_store(GetParam()));
        alice_ = unique("alice");
        id_ = unique("c");
    }
    std::optional<LeaseStore> store_;
    std::string alice_, id_;
};

TEST_P(Lease, OneHolderAtATimeAndOnlyTheHolderReleases) {
    const auto a = store_->acquire(alice_, id_, "host-a", 60'000);
    EXPECT_EQ(a.holder, "host-a");
    EXPECT_FALSE(a.expires_at.empty());
    std::string message;
    EXPECT_EQ(error_kind([&] { store_->acquire(alice_, id_, "host-b", 60'000); }, &message),
              ErrorKind::kOwnership);
    EXPECT_NE(message.find("host-a"), std::string::npos) << "names the holder: " << message;
    EXPECT_EQ(store_->acquire(alice_, id_, "host-a", 60'000).fencing_token, a.fencing_token);
    EXPECT_EQ(store_->renew(alice_, id_, "host-a", 60'000, a.fencing_token).fencing_token,
              a.fencing_token);
    EXPECT_EQ(error_kind([&] { store_->renew(alice_, id_, "host-b", 60'000); }),
              ErrorKind::kOwnership);
    EXPECT_EQ(error_kind([&] { store_->release(alice_, id_, "host-b"); }), ErrorKind::kOwnership);
    // Another user's conversation of the same id is another lease.
    const auto other = store_->acquire(unique("bob"), id_, "host-b", 60'000);
    EXPECT_EQ(other.holder, "host-b");
    store_->release(alice_, id_, "host-a");
    const auto b = store_->acquire(alice_, id_, "host-b", 60'000);
    EXPECT_GT(b.fencing_token, a.fencing_token) << "fencing tokens only grow";
    store_->release(alice_, id_, "host-b");
}

TEST_P(Lease, AnExpiredLeaseIsLostAndTheTokenGrows) {
    const auto a = store_->acquire(alice_, id_, "host-a", 1);
    std::optional<nucleo::LeaseGrant> b;
    for (int i = 0; i < 200'000 && !b; ++i) {
        try {
            b = store_->acquire(alice_, id_, "host-b", 60'000);
        } catch (const nucleo::Error& e) {
            ASSERT_EQ(e.kind(), ErrorKind::kOwnership) << e.what();
        }
    }
    ASSERT_TRUE(b);
    EXPECT_GT(b->fencing_token, a.fencing_token);
    EXPECT_EQ(error_kind([&] { store_->renew(alice_, id_, "host-a", 60'000); }),
              ErrorKind::kOwnership);
    EXPECT_EQ(error_kind([&] { store_->release(alice_, id_, "host-a"); }), ErrorKind::kOwnership);
    EXPECT_EQ(error_kind([&] { store_->renew(alice_, id_, "host-b", 60'000, a.fencing_token); }),
              ErrorKind::kOwnership)
        << "a renew naming a stale token is refused";
}

INSTANTIATE_TEST_SUITE_P(Stores, Lease, ::testing::Values("memory", "redis"),
                         [](const auto& info) { return info.param; });

}  // namespace
