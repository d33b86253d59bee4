#include "threads.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace nucleo::emulator {
namespace {

using json::quote;

/// The members a cache mark is looked for under, as the SDK's thread helper strips them from a
/// message it sends again (src/lib/internal/threads/ThreadState.ts, withoutCacheControl).
constexpr std::array<std::string_view, 5> kNested = {"content", "source", "tool", "definition",
                                                     "tool_references"};

bool nested(std::string_view name) {
    return std::find(kNested.begin(), kNested.end(), name) != kNested.end();
}

/// Writes `v` compact, in one of two canonical forms. `sorted`: the members of every object in
/// name order, so two requests that send the same `thinking` or `output_config` in another member
/// order have the same fingerprint. Else as sent but without the `cache_control` members of `v`
/// and of the blocks, tools and definitions under it: the marks belong to the request that sent
/// them, not to the thread.
void write_canonical(const json::Value& v, json::Writer& w, bool sorted) {
    if (v.IsArray()) {
        w.StartArray();
        for (const auto& item : v.GetArray()) write_canonical(item, w, sorted);
        w.EndArray();
        return;
    }
    if (!v.IsObject()) {
        v.Accept(w);
        return;
    }
    std::vector<const json::Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    const auto name = [](const json::Value::Member* m) {
        return std::string_view(m->name.GetString(), m->name.GetStringLength());
    };
    if (sorted) {
        std::sort(members.begin(), members.end(),
                  [&](const auto* a, const auto* b) { return name(a) < name(b); });
    }
    w.StartObject();
    for (const auto* m : members) {
        if (!sorted && name(m) == "cache_control") continue;
        w.Key(m->name.GetString(), m->name.GetStringLength());
        if (sorted || nested(name(m))) {
            write_canonical(m->value, w, sorted);
        } else {
            m->value.Accept(w);
        }
    }
    w.EndObject();
}

std::string canonical(const json::Value& v, bool sorted) {
    rapidjson::StringBuffer buf;
    json::Writer w(buf);
    write_canonical(v, w, sorted);
    return std::string(buf.GetString(), buf.GetSize());
}

std::string unmarked(const json::Value& v) {
    return canonical(v, false);
}

/// The member's canonical JSON, sorted; "null" when absent.
std::string sorted_member(const json::Value& doc, const char* name) {
    const json::Value* v = json::member(doc, name);
    return v == nullptr ? "null" : canonical(*v, true);
}

/// Parses a stored JSON text into a value of `doc`'s allocator.
json::Value parsed(const std::string& text, rapidjson::Document::AllocatorType& alloc) {
    rapidjson::Document part(&alloc);
    part.Parse(text.data(), text.size());
    json::Value out;
    out.CopyFrom(part, alloc);
    return out;
}

/// Sets (or replaces) the member `name` of the object `doc`.
void set_member(rapidjson::Document& doc, const char* name, json::Value value) {
    auto& alloc = doc.GetAllocator();
    if (auto it = doc.FindMember(name); it != doc.MemberEnd()) {
        it->value = std::move(value);
        return;
    }
    doc.AddMember(json::Value(name, alloc), std::move(value), alloc);
}

/// A system as its blocks: a string system is its one text block, as the cache and the binding
/// read it, so the same text sent either way is the same system.
std::optional<std::string> system_blocks(const std::optional<std::string>& system) {
    if (!system || system->empty() || (*system)[0] != '"') return system;
    return R"([{"type":"text","text":)" + *system + "}]";
}

/// The fields of `asked` that differ from the thread's `held`, in a fixed order. `system` and
/// `tools` are compared only when the request sends them (a continue leaves them out).
std::vector<std::string> differing(const ThreadRecord& held, const ThreadRecord& asked) {
    std::vector<std::string> out;
    if (asked.model != held.model) out.emplace_back("model");
    if (asked.thinking != held.thinking) out.emplace_back("thinking");
    if (asked.output_config != held.output_config) out.emplace_back("output_config");
    if (asked.system && system_blocks(asked.system) != system_blocks(held.system))
        out.emplace_back("system");
    if (asked.tools && asked.tools != held.tools) out.emplace_back("tools");
    return out;
}

/// A 400 `invalid_request_error` with the error code `code`.
ThreadError invalid(std::string message, std::string code) {
    return {400, "invalid_request_error", std::move(message), std::move(code)};
}

ThreadError fingerprint_mismatch(const std::vector<std::string>& fields) {
    std::string names;
    for (const std::string& f : fields) names += (names.empty() ? "" : ", ") + f;
    return invalid(
        "thread: the request differs from the thread it continues in differing field(s): " + names +
            ". A thread keeps the values it was created with: send those, or replay the full "
            "conversation with thread: {\"type\": \"create\"} to change them.",
        "thread_fingerprint_mismatch");
}

ThreadError already_continued(std::string_view id) {
    return invalid(
        "thread: the response '" + std::string(id) +
            "' has already been continued, and each response can be continued only once. "
            "Continue from the thread's most recent response id.",
        "thread_already_continued");
}

}  // namespace

std::optional<Refusal> check_thread_param(const json::Value& doc, const Betas& betas) {
    const json::Value* thread = json::member(doc, "thread");
    if (thread == nullptr) return std::nullopt;
    // A beta member: without its beta the API does not know it.
    if (!betas.has(kThreadsBeta)) return Refusal{"thread: Extra inputs are not permitted", ""};
    if (thread->IsNull()) return std::nullopt;
    if (!thread->IsObject()) return Refusal{"thread: Input should be a valid dictionary", ""};
    const json::Value* type = json::member(*thread, "type");
    if (type == nullptr) return Refusal{"thread.type: Field required", ""};
    const std::string kind = type->IsString() ? type->GetString() : "";
    if (kind != "create" && kind != "continue")
        return Refusal{"thread.type: Input should be 'create' or 'continue'", ""};
    for (const auto& m : thread->GetObject()) {
        const std::string name = m.name.GetString();
        if (name == "type" || (kind == "continue" && name == "previous_message_id")) continue;
        return Refusal{"thread." + name + ": Extra inputs are not permitted", ""};
    }
    if (kind == "continue") {
        const json::Value* previous = json::member(*thread, "previous_message_id");
        if (previous == nullptr) return Refusal{"thread.previous_message_id: Field required", ""};
        if (!previous->IsString())
            return Refusal{"thread.previous_message_id: Input should be a valid string", ""};
    }
    return std::nullopt;
}

ThreadAsk thread_ask(const json::Value& doc) {
    ThreadAsk ask;
    const json::Value* thread = json::member(doc, "thread");
    if (thread == nullptr || !thread->IsObject()) return ask;
    if (json::string_member(*thread, "type") == "create") {
        ask.kind = ThreadAsk::Kind::kCreate;
    } else {
        ask.kind = ThreadAsk::Kind::kContinue;
        ask.previous = json::string_member(*thread, "previous_message_id");
    }
    return ask;
}

std::string thread_error_body(const ThreadError& e) {
    return R"({"type":"error","error":{"type":)" + quote(e.type) + R"(,"message":)" +
           quote(e.message) + R"(,"details":{"error_code":)" + quote(e.code) +
           R"(}},"request_id":"req_emu"})";
}

ThreadError thread_unsupported(std::string_view model) {
    return invalid("thread: message threads are not supported on model '" + std::string(model) +
                       "'. Send the full conversation without thread.",
                   "thread_unsupported_request");
}

ThreadError thread_not_found(std::string_view id) {
    return {404, "not_found_error",
            "thread: no thread is held for previous_message_id '" + std::string(id) +
                "'. Replay the full conversation with thread: {\"type\": \"create\"} to start a "
                "new thread.",
            "thread_not_found"};
}

ThreadError thread_in_flight(std::string_view id) {
    return invalid(
        "thread: another request is still continuing from '" + std::string(id) +
            "'. Wait for it to complete and continue from its response id, or replay the "
            "full conversation with thread: {\"type\": \"create\"}.",
        "thread_continue_in_flight");
}

ThreadRecord thread_record(const json::Value& doc) {
    ThreadRecord r;
    const json::Value* model = json::member(doc, "model");
    r.model = model != nullptr ? json::write(*model) : "null";
    r.thinking = sorted_member(doc, "thinking");
    r.output_config = sorted_member(doc, "output_config");
    if (const json::Value* system = json::member(doc, "system")) r.system = unmarked(*system);
    if (const json::Value* tools = json::member(doc, "tools")) r.tools = unmarked(*tools);
    if (const json::Value* messages = json::member(doc, "messages");
        messages != nullptr && messages->IsArray()) {
        for (const auto& m : messages->GetArray()) r.messages.push_back(unmarked(m));
    }
    return r;
}

void add_answer(ThreadRecord& record, const std::string& content_json) {
    record.messages.push_back(R"({"role":"assistant","content":)" + content_json + "}");
}

void apply_thread(rapidjson::Document& doc, const ThreadRecord& record) {
    auto& alloc = doc.GetAllocator();
    if (record.system && json::member(doc, "system") == nullptr)
        set_member(doc, "system", parsed(*record.system, alloc));
    if (record.tools && json::member(doc, "tools") == nullptr)
        set_member(doc, "tools", parsed(*record.tools, alloc));
    json::Value messages(rapidjson::kArrayType);
    for (const std::string& m : record.messages) messages.PushBack(parsed(m, alloc), alloc);
    if (auto it = doc.FindMember("messages"); it != doc.MemberEnd() && it->value.IsArray()) {
        for (auto& m : it->value.GetArray()) messages.PushBack(json::Value(m, alloc), alloc);
    }
    set_member(doc, "messages", std::move(messages));
    doc.RemoveMember("thread");
}

void ThreadStore::configure(std::chrono::seconds ttl, std::size_t capacity) {
    std::lock_guard lock(mu_);
    ttl_ = ttl;
    capacity_ = capacity;
}

void ThreadStore::erase(std::unordered_map<std::string, Entry>::iterator it) {
    oldest_first_.erase(it->second.age);
    entries_.erase(it);
}

std::variant<ThreadRecord, ThreadError> ThreadStore::begin_continue(const std::string& id,
                                                                    const ThreadRecord& asked,
                                                                    Clock::time_point now) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(id);
    if (it != entries_.end() && now >= it->second.expires) {
        erase(it);
        it = entries_.end();
    }
    if (it == entries_.end()) return thread_not_found(id);
    Entry& e = it->second;
    if (!e.record) return already_continued(id);
    if (e.in_flight) return thread_in_flight(id);
    if (const auto fields = differing(*e.record, asked); !fields.empty())
        return fingerprint_mismatch(fields);
    e.in_flight = true;
    return *e.record;
}

void ThreadStore::abandon(const std::string& id) {
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(id); it != entries_.end()) it->second.in_flight = false;
}

void ThreadStore::finish(const std::optional<std::string>& previous, const std::string& id,
                         ThreadRecord record, Clock::time_point now) {
    std::lock_guard lock(mu_);
    if (previous) {
        ++continued_;
        // Only its mark stays: the conversation now lives on under the new answer.
        if (auto it = entries_.find(*previous); it != entries_.end()) {
            it->second.record.reset();
            it->second.in_flight = false;
        }
    } else {
        ++created_;
    }
    // The ids are digests of the prompt: the same conversation created again is the same
    // thread, stored anew.
    if (auto it = entries_.find(id); it != entries_.end()) erase(it);
    oldest_first_.push_back(id);
    entries_[id] = Entry{std::move(record), false, now + ttl_, std::prev(oldest_first_.end())};
    while (entries_.size() > capacity_ && !oldest_first_.empty())
        erase(entries_.find(oldest_first_.front()));
}

void ThreadStore::forget(const std::string& id) {
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(id); it != entries_.end()) erase(it);
}

void ThreadStore::clear() {
    std::lock_guard lock(mu_);
    entries_.clear();
    oldest_first_.clear();
    created_ = 0;
    continued_ = 0;
}

ThreadStore::Counts ThreadStore::counts(Clock::time_point now) {
    std::lock_guard lock(mu_);
    Counts c{0, created_, continued_};
    for (const auto& [id, e] : entries_) c.live += e.record && now < e.expires ? 1 : 0;
    return c;
}

ThreadTurn::ThreadTurn(ThreadStore& store, std::optional<std::string> previous, ThreadRecord record)
    : store_(&store), previous_(std::move(previous)), record_(std::move(record)) {}

ThreadTurn::ThreadTurn(ThreadTurn&& other) noexcept
    : store_(std::exchange(other.store_, nullptr)),
      previous_(std::move(other.previous_)),
      record_(std::move(other.record_)) {}

ThreadTurn::~ThreadTurn() {
    if (store_ != nullptr && previous_) store_->abandon(*previous_);
}

void ThreadTurn::finish(const std::string& id, const std::string& content_json,
                        ThreadStore::Clock::time_point now) {
    if (store_ == nullptr) return;
    add_answer(record_, content_json);
    store_->finish(previous_, id, std::move(record_), now);
    store_ = nullptr;
}

std::variant<std::monostate, ThreadTurn, ThreadError> begin_thread_turn(
    ThreadStore& store, rapidjson::Document& doc, const ModelCatalog::Threads& model,
    const ThreadFaults& faults, ThreadStore::Clock::time_point now) {
    const ThreadAsk ask = thread_ask(doc);
    const json::Value* name = json::member(doc, "model");
    const json::Value* messages = json::member(doc, "messages");
    if (ask.kind == ThreadAsk::Kind::kNone || name == nullptr || !name->IsString() ||
        messages == nullptr || !messages->IsArray()) {
        return std::monostate{};
    }
    // wire.199: only a model whose record says `threads: true` (or that no record names).
    if (model.named && !model.threads) return thread_unsupported(name->GetString());
    if (ask.kind == ThreadAsk::Kind::kCreate) {
        doc.RemoveMember("thread");
        return ThreadTurn(store, std::nullopt, thread_record(doc));
    }
    // wire.204: the faults answer a continue as if its thread were busy or gone.
    if (faults.busy) return thread_in_flight(ask.previous);
    if (faults.lost) {
        store.forget(ask.previous);
        return thread_not_found(ask.previous);
    }
    auto begun = store.begin_continue(ask.previous, thread_record(doc), now);
    if (auto* e = std::get_if<ThreadError>(&begun)) return std::move(*e);
    apply_thread(doc, std::get<ThreadRecord>(begun));
    return ThreadTurn(store, ask.previous, thread_record(doc));
}

}  // namespace nucleo::emulator
