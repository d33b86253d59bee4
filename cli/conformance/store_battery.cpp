// The store battery of the conformance kit (abi.126): the persistent, session and lease surfaces
// a store's capabilities claim, over one instance created with Options::store_config. Each run
// uses conversation ids of its own, so a database store can be checked again and again.
#include <unistd.h>

#include <chrono>
#include <functional>

#include "conformance/state.hpp"

namespace nucleo::conformance {
namespace {

struct Call {
    int32_t status = NUCLEO_OK;
    nucleo_error err{};
    std::string out;
};

nucleo_string_view view(const std::string& s) { return {s.data(), s.size()}; }

const char* const kSnapshot =
    R"({"schema_version":1,"conversation_id":"ID","user_id":"kit-alice","objective":[{"key":"task","value":"Check the store."}],)"
    R"("messages":[{"id":"m1","direction":"outgoing","blocks":[{"type":"text","text":"Where is order 42?"}]},)"
    R"({"id":"m2","direction":"incoming","blocks":[{"type":"text","text":"It shipped on Monday."}]}]})";

std::string snapshot_for(const std::string& id, const std::string& extra_text) {
    std::string s = kSnapshot;
    s.replace(s.find("ID"), 2, id);
    if (!extra_text.empty()) s.replace(s.find("It shipped on Monday."), 21, extra_text);
    return s;
}

bool same_json(const std::string& a, const std::string& b) {
    rapidjson::Document x, y;
    std::string why;
    return parse_json(a, x, why) && parse_json(b, y, why) && x == y;
}

std::string member(const std::string& json, const char* key) {
    rapidjson::Document d;
    std::string why;
    if (!parse_json(json, d, why) || !d.IsObject() || !d.HasMember(key)) return "";
    return d[key].IsString() ? d[key].GetString() : to_json(d[key]);
}

/// The capabilities' boolean `key` of the store (false when absent or unreadable).
bool capability(Battery::State& s, nucleo_instance* inst, const char* key) {
    Call c;
    c.err = fresh_error();
    {
        Sink sink(c.out, "store.capabilities");
        c.status = s.store->capabilities(inst, sink.get(), &c.err);
    }
    rapidjson::Document d;
    std::string why;
    return c.status == NUCLEO_OK && parse_json(c.out, d, why) && d.IsObject() && d.HasMember(key) && d[key].IsTrue();
}

}  // namespace

void store_cases(Battery::State& s) {
    const auto instance = [&s] { return s.instance_of(s.store, s.store->create, s.options.store_config, "store"); };
    const std::string run_id =
        "kit-" + std::to_string(::getpid()) + "-" +
        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    const std::string alice = "kit-alice";
    const std::string bob = "kit-bob";

    s.cases.push_back({"store", "capabilities", "", [&s, instance](std::vector<Finding>&) {
        Battery::State& a = s;
        Call c;
        c.err = fresh_error();
        nucleo_instance* inst = instance();
        if (inst == nullptr) return;
        {
            Sink sink(c.out, "store.capabilities");
            c.status = s.store->capabilities(inst, sink.get(), &c.err);
        }
        if (!a.checked("capabilities", c.status, c.err)) {
            a.add("store.capabilities", "NUCLEO_OK", status_name(c.status) + ": " + error_text(c.err));
            return;
        }
        rapidjson::Document d;
        std::string why;
        if (!parse_json(c.out, d, why) || !d.IsObject()) {
            a.add("store.capabilities", "a JSON object", why.empty() ? excerpt(c.out) : why);
            return;
        }
        for (const char* k : {"persistent", "session", "version_history", "lease"})
            if (d.HasMember(k) && !d[k].IsBool()) a.add("store.capabilities", std::string("\"") + k + "\" a boolean", to_json(d[k]));
    }});

    s.cases.push_back({"store", "persistent_round_trip", "", [&s, instance, run_id, alice, bob](std::vector<Finding>&) {
        Battery::State& a = s;
        nucleo_instance* inst = instance();
        if (inst == nullptr) return;
        const nucleo_store_factory* f = s.store;
        const bool claimed = capability(s, inst, "persistent");
        const std::string id = run_id + "-p";
        const std::string snap1 = snapshot_for(id, "");
        const std::string create_req = R"({"schema_version":1,"title":"Kit check","snapshot":)" + snap1 + "}";
        Call c;
        c.err = fresh_error();
        if (f->create_conversation == nullptr) {
            if (claimed) a.add("create_conversation", "the slot, as capabilities claim \"persistent\"", "NULL");
            return;
        }
        {
            Sink sink(c.out, "create_conversation");
            c.status = f->create_conversation(inst, view(alice), view(id), view(create_req), sink.get(), &c.err);
        }
        if (!a.checked("create_conversation", c.status, c.err)) {
            if (claimed || c.status != NUCLEO_ERR_NOT_IMPLEMENTED)
                a.add("create_conversation", claimed ? "a version" : "NUCLEO_ERR_NOT_IMPLEMENTED (persistence.4)",
                      status_name(c.status) + ": " + excerpt(error_text(c.err)));
            return;
        }
        if (!claimed) a.add("store.capabilities", "\"persistent\": true, as create_conversation works", "false or absent");
        const std::string v1 = member(c.out, "version");
        if (v1.empty()) a.add("create_conversation", "{\"schema_version\":1, \"version\":\"<id>\"}", excerpt(c.out));
        const auto load = [&](const std::string& who, Call& r) {
            r = Call{};
            r.err = fresh_error();
            Sink sink(r.out, "load_conversation");
            r.status = f->load_conversation(inst, view(who), view(id), sink.get(), &r.err);
        };
        Call r;
        load(alice, r);
        if (a.checked("load_conversation", r.status, r.err)) {
            if (!same_json(r.out, snap1)) a.add("load_conversation", "the snapshot as saved", excerpt(r.out));
        } else {
            a.add("load_conversation", "the snapshot as saved", status_name(r.status) + ": " + excerpt(error_text(r.err)));
        }
        load(bob, r);
        a.checked("load_conversation", r.status, r.err);
        if (r.status != NUCLEO_ERR_NOT_FOUND)
            a.add("load_conversation", "NUCLEO_ERR_NOT_FOUND for another principal's conversation", status_name(r.status));
        Call again;
        again.err = fresh_error();
        {
            Sink sink(again.out, "create_conversation");
            again.status = f->create_conversation(inst, view(alice), view(id), view(create_req), sink.get(), &again.err);
        }
        a.checked("create_conversation", again.status, again.err);
        if (again.status != NUCLEO_ERR_INVALID_ARGUMENT)
            a.add("create_conversation", "NUCLEO_ERR_INVALID_ARGUMENT for an id that exists", status_name(again.status));
        if (f->update_conversation != nullptr && !v1.empty()) {
            const std::string snap2 = snapshot_for(id, "It shipped on Tuesday.");
            const std::string update_req = R"({"schema_version":1,"base_version":")" + v1 + R"(","snapshot":)" + snap2 + "}";
            Call u;
            u.err = fresh_error();
            {
                Sink sink(u.out, "update_conversation");
                u.status = f->update_conversation(inst, view(alice), view(id), view(update_req), sink.get(), &u.err);
            }
            if (!a.checked("update_conversation", u.status, u.err)) {
                a.add("update_conversation", "a new version", status_name(u.status) + ": " + excerpt(error_text(u.err)));
            } else {
                load(alice, r);
                if (r.status != NUCLEO_OK || !same_json(r.out, snap2))
                    a.add("load_conversation", "the snapshot of the latest update", excerpt(r.out));
                if (member(u.out, "version") == v1) a.add("update_conversation", "a version other than " + v1, v1);
                if (f->load_version != nullptr && capability(s, inst, "version_history")) {
                    Call lv;
                    lv.err = fresh_error();
                    {
                        Sink sink(lv.out, "load_version");
                        lv.status = f->load_version(inst, view(alice), view(id), view(v1), sink.get(), &lv.err);
                    }
                    if (!a.checked("load_version", lv.status, lv.err) || !same_json(lv.out, snap1))
                        a.add("load_version", "the snapshot exactly as saved at version " + v1, excerpt(lv.out));
                }
                // abi.136: latest_version (ABI 1.7, optional) answers the newest version, and
                // not found for another principal.
                if (NUCLEO_HAS_SLOT(f, nucleo_store_factory, latest_version)) {
                    const auto latest = [&](const std::string& who, Call& lv) {
                        lv = Call{};
                        lv.err = fresh_error();
                        Sink sink(lv.out, "latest_version");
                        lv.status =
                            f->latest_version(inst, view(who), view(id), sink.get(), &lv.err);
                    };
                    Call lv;
                    latest(alice, lv);
                    const std::string newest = member(u.out, "version");
                    if (!a.checked("latest_version", lv.status, lv.err) ||
                        member(lv.out, "version") != newest)
                        a.add("latest_version", "{\"version\":\"" + newest + "\"}, the update's",
                              excerpt(lv.out));
                    latest(bob, lv);
                    a.checked("latest_version", lv.status, lv.err);
                    if (lv.status != NUCLEO_ERR_NOT_FOUND)
                        a.add("latest_version",
                              "NUCLEO_ERR_NOT_FOUND for another principal's conversation",
                              status_name(lv.status));
                }
            }
        }
        if (f->delete_conversation != nullptr) {
            nucleo_error err = fresh_error();
            const int32_t st = f->delete_conversation(inst, view(alice), view(id), &err);
            if (!a.checked("delete_conversation", st, err))
                a.add("delete_conversation", "NUCLEO_OK", status_name(st) + ": " + excerpt(error_text(err)));
            load(alice, r);
            a.checked("load_conversation", r.status, r.err);
            if (r.status != NUCLEO_ERR_NOT_FOUND)
                a.add("load_conversation", "NUCLEO_ERR_NOT_FOUND after delete_conversation", status_name(r.status));
        }
    }});

    s.cases.push_back({"store", "session_round_trip", "", [&s, instance, run_id, alice, bob](std::vector<Finding>&) {
        Battery::State& a = s;
        nucleo_instance* inst = instance();
        if (inst == nullptr) return;
        const nucleo_store_factory* f = s.store;
        const bool claimed = capability(s, inst, "session");
        const std::string id = run_id + "-s";
        const std::string snap = snapshot_for(id, "");
        if (f->session_put == nullptr || f->session_get == nullptr) {
            if (claimed) a.add("session_put", "the session slots, as capabilities claim \"session\"", "NULL");
            return;
        }
        nucleo_error err = fresh_error();
        const int32_t put = f->session_put(inst, view(alice), view(id), view(snap), 60000, &err);
        if (!a.checked("session_put", put, err)) {
            if (claimed || put != NUCLEO_ERR_NOT_IMPLEMENTED)
                a.add("session_put", claimed ? "NUCLEO_OK" : "NUCLEO_ERR_NOT_IMPLEMENTED (persistence.4)",
                      status_name(put) + ": " + excerpt(error_text(err)));
            return;
        }
        const auto get = [&](const std::string& who, Call& r) {
            r = Call{};
            r.err = fresh_error();
            Sink sink(r.out, "session_get");
            r.status = f->session_get(inst, view(who), view(id), sink.get(), &r.err);
        };
        Call r;
        get(alice, r);
        if (!a.checked("session_get", r.status, r.err) || !same_json(r.out, snap))
            a.add("session_get", "the snapshot put", r.status == NUCLEO_OK ? excerpt(r.out) : status_name(r.status));
        get(bob, r);
        a.checked("session_get", r.status, r.err);
        if (r.status != NUCLEO_ERR_NOT_FOUND)
            a.add("session_get", "NUCLEO_ERR_NOT_FOUND for another principal", status_name(r.status));
        if (f->session_invalidate != nullptr) {
            err = fresh_error();
            const int32_t inv = f->session_invalidate(inst, view(alice), view(id), &err);
            if (!a.checked("session_invalidate", inv, err)) a.add("session_invalidate", "NUCLEO_OK", status_name(inv));
            get(alice, r);
            a.checked("session_get", r.status, r.err);
            if (r.status != NUCLEO_ERR_NOT_FOUND)
                a.add("session_get", "NUCLEO_ERR_NOT_FOUND after session_invalidate", status_name(r.status));
        }
    }});

    // abi.129: the delta refresh of a session entry (ABI 1.5, optional): applied on the entry's
    // base version, a miss that drops the entry on any other.
    s.cases.push_back({"store", "session_apply", "", [&s, instance, run_id, alice](std::vector<Finding>&) {
        Battery::State& a = s;
        nucleo_instance* inst = instance();
        if (inst == nullptr) return;
        const nucleo_store_factory* f = s.store;
        if (!NUCLEO_HAS_SLOT(f, nucleo_store_factory, session_apply) || f->session_put == nullptr ||
            f->session_get == nullptr || !capability(s, inst, "session"))
            return;
        const std::string id = run_id + "-d";
        const auto envelope = [&](const std::string& version, const std::string& snap) {
            return R"({"schema_version":1,"durable_version":")" + version + R"(","snapshot":)" + snap + "}";
        };
        const std::string reply = R"({"id":"m3","direction":"outgoing","blocks":[{"type":"text","text":"Thanks."}]})";
        const std::string changes = R"({"messages":[{"at":2,"remove":0,"insert":[)" + reply + "]}]}";
        const auto apply = [&](const std::string& base, const std::string& version, nucleo_error& err) {
            err = fresh_error();
            const std::string req = R"({"schema_version":1,"base_version":")" + base + R"(","version":")" + version +
                                    R"(","changes":)" + changes + "}";
            return f->session_apply(inst, view(alice), view(id), view(req), 60000, &err);
        };
        const auto get = [&](Call& r) {
            r = Call{};
            r.err = fresh_error();
            Sink sink(r.out, "session_get");
            r.status = f->session_get(inst, view(alice), view(id), sink.get(), &r.err);
        };
        const std::string snap = snapshot_for(id, "");
        nucleo_error err = fresh_error();
        const int32_t put = f->session_put(inst, view(alice), view(id), view(envelope("kit-v1", snap)), 60000, &err);
        if (!a.checked("session_put", put, err)) {
            a.add("session_put", "NUCLEO_OK", status_name(put) + ": " + excerpt(error_text(err)));
            return;
        }
        const int32_t applied = apply("kit-v1", "kit-v2", err);
        if (!a.checked("session_apply", applied, err)) {
            a.add("session_apply", "NUCLEO_OK on the entry's base version", status_name(applied) + ": " + excerpt(error_text(err)));
            return;
        }
        std::string grown = snap;
        grown.insert(grown.rfind("]}"), "," + reply);
        Call r;
        get(r);
        if (!a.checked("session_get", r.status, r.err) || !same_json(r.out, envelope("kit-v2", grown)))
            a.add("session_get", "the entry with the change applied, mirroring \"kit-v2\"",
                  r.status == NUCLEO_OK ? excerpt(r.out) : status_name(r.status));
        const int32_t stale = apply("kit-v1", "kit-v3", err);
        a.checked("session_apply", stale, err);
        if (stale != NUCLEO_ERR_NOT_FOUND)
            a.add("session_apply", "NUCLEO_ERR_NOT_FOUND for a base the entry does not mirror", status_name(stale));
        get(r);
        a.checked("session_get", r.status, r.err);
        if (r.status != NUCLEO_ERR_NOT_FOUND)
            a.add("session_get", "NUCLEO_ERR_NOT_FOUND: a stale session_apply drops the entry", status_name(r.status));
    }});

    s.cases.push_back({"store", "lease", "", [&s, instance, run_id, alice](std::vector<Finding>&) {
        Battery::State& a = s;
        nucleo_instance* inst = instance();
        if (inst == nullptr) return;
        const nucleo_store_factory* f = s.store;
        const bool claimed = capability(s, inst, "lease");
        if (f->lease == nullptr) {
            if (claimed) a.add("lease", "the slot, as capabilities claim \"lease\"", "NULL");
            return;
        }
        const std::string id = run_id + "-l";
        const auto lease = [&](const std::string& op, const std::string& holder, Call& r) {
            r = Call{};
            r.err = fresh_error();
            const std::string req = R"({"schema_version":1,"op":")" + op + R"(","holder":")" + holder + R"(","ttl_ms":60000})";
            Sink sink(r.out, "lease");
            r.status = f->lease(inst, view(alice), view(id), view(req), sink.get(), &r.err);
        };
        Call r;
        lease("acquire", "kit-host-1", r);
        if (!a.checked("lease", r.status, r.err)) {
            if (claimed || r.status != NUCLEO_ERR_NOT_IMPLEMENTED)
                a.add("lease", claimed ? "a lease" : "NUCLEO_ERR_NOT_IMPLEMENTED (persistence.4)",
                      status_name(r.status) + ": " + excerpt(error_text(r.err)));
            return;
        }
        if (member(r.out, "fencing_token").empty()) a.add("lease", "a \"fencing_token\"", excerpt(r.out));
        lease("acquire", "kit-host-2", r);
        a.checked("lease", r.status, r.err);
        if (r.status != NUCLEO_ERR_OWNERSHIP)
            a.add("lease", "NUCLEO_ERR_OWNERSHIP for a lease held by another holder (ownership.40)", status_name(r.status));
        lease("release", "kit-host-1", r);
        if (!a.checked("lease", r.status, r.err)) a.add("lease", "release: NUCLEO_OK", status_name(r.status));
    }});
}

}  // namespace nucleo::conformance
