/*
 * nucleo/plugin.h -- the Nucleo plugin ABI, the only header a plugin needs.
 *
 * Changelog (append-only; a minor version only appends slots at the end of structs):
 *   1.0  First release. Entry nucleo_plugin_entry_v1; host with get_extension
 *        ("nucleo.host.log/1"); factories "nucleo.provider/1", "nucleo.store/1",
 *        "nucleo.summarizer/1"; string views, output sinks, caller-owned error structs.
 *   1.1  Host extension "nucleo.host.model_call/1" (nucleo_host_model_call): a plugin (the llm
 *        summarizer) asks the host to call a model; the host picks, limits, records and costs it.
 *   1.2  nucleo_provider_factory.decode_event (appended): one event of a streamed answer, framed
 *        by the host, decoded into incremental deltas (text, thinking, tool-call start and input,
 *        usage) so a host sees an answer as it arrives. The answer itself is still decode()'s.
 *   1.3  nucleo_provider_factory.encode_parts (appended): encode writing the HTTP request's head
 *        (method, path, headers) and its body bytes to two sinks, so the body a plugin writes is
 *        the body sent, never parsed and written again by the host.
 *   1.4  nucleo_provider_factory.encode_split (appended): encode_parts with the body cut around
 *        the wire messages of the turns, so a host that keeps each turn's encoded messages
 *        re-encodes only the turns that changed (capabilities "turn_fragments": true).
 *        nucleo_plugin_entry.options_schema (appended): the JSON Schema of the options each
 *        factory's create() accepts, so the host refuses a misspelled, mistyped, missing or
 *        out-of-range option with the config's file:line before create is called (abi.109).
 *   1.5  nucleo_store_factory.session_apply (appended): refreshes a session-store entry by the
 *        changes of a save when the entry mirrors the save's base version (abi.128), so a
 *        committed save costs the session store its delta, not the whole conversation.
 *   1.6  Host extension "nucleo.host.tokens/1" (nucleo_host_tokens): a plugin counts a text with
 *        the token counter the host measures the conversation with. No struct changed.
 *   1.7  nucleo_store_factory.latest_version (appended): a conversation's latest version and its
 *        fencing token at a cost that does not grow with its versions, so a host taking over a
 *        conversation does not read its whole version history (abi.135).
 *
 * The rules (docs/spec/plugin-abi.md; modelled on CLAP and SQLite, not on exact-match ABIs):
 *  - A plugin is a shared object named nucleo-<name>.so that exports exactly one symbol, the
 *    function nucleo_plugin_entry_v1. The major version is part of that symbol's name.
 *  - Every struct that crosses the boundary (except the two-word nucleo_string_view, passed by
 *    value) begins with `uint32_t struct_size`, set by the side that owns the struct to
 *    sizeof() of the struct as it knew it. Structs are append-only: a minor version adds slots at
 *    the end and never moves, removes or retypes one. A side reads a slot only if the slot lies
 *    inside the other side's struct_size and is non-NULL: see NUCLEO_HAS_SLOT. So an old plugin
 *    keeps loading in a new host, and a new plugin degrades gracefully in an old host.
 *  - Capabilities are reached by string id with a revision: factories through
 *    entry->get_factory("nucleo.summarizer/1"), host services through
 *    host->get_extension(host, "nucleo.host.log/1"). An unknown id answers NULL, never aborts.
 *  - Strings are borrowed UTF-8 views {data, size}, valid for the duration of the call only
 *    (copy what you keep). They are not NUL-terminated unless stated.
 *  - Variable-size output goes to a host-owned sink; nobody frees memory allocated by the other
 *    side. Objects die only through their own factory's destroy.
 *  - Every call that can fail returns an int32_t status (NUCLEO_OK or a NUCLEO_ERR_* code) and
 *    fills a caller-owned nucleo_error. No exceptions, no C++ standard library types, no
 *    third-party types cross; a C++ plugin catches everything at its trampolines (plugin.hpp).
 *  - Structured data crosses as JSON text. Every document carries "schema_version" (1 for now);
 *    a reader ignores fields it does not know.
 *  - Every slot states its thread rule. The host loader serialises init and deinit, and never
 *    unloads a library while an instance created by it lives.
 *
 * This header is C11 (-std=c11 -pedantic clean) and C++20 clean. A frozen copy of each released
 * version lives in the project's tests (tests/abi/frozen/); a plugin built against it must keep
 * loading.
 */
#ifndef NUCLEO_PLUGIN_H
#define NUCLEO_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NUCLEO_PLUGIN_ABI_MAJOR 1
#define NUCLEO_PLUGIN_ABI_MINOR 7

/* The name of the one exported function, for hosts that look it up by string. */
#define NUCLEO_PLUGIN_ENTRY_SYMBOL "nucleo_plugin_entry_v1"

/* Export macro for the entry function; plugins are built with hidden visibility otherwise. */
#if defined(_WIN32) || defined(__CYGWIN__)
#define NUCLEO_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define NUCLEO_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define NUCLEO_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
#define NUCLEO_PLUGIN_EXTERN_C extern "C"
extern "C" {
#else
#define NUCLEO_PLUGIN_EXTERN_C
#endif

/*
 * NUCLEO_HAS_FIELD(ptr, type, field): the struct behind ptr (non-NULL) is large enough, by its own
 * struct_size, to hold `field`. NUCLEO_HAS_SLOT additionally requires the slot to be non-NULL:
 * use it before every call through a function pointer the other side owns.
 */
#define NUCLEO_HAS_FIELD(ptr, type, field) \
    ((ptr) != NULL &&                      \
     (size_t)(ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))
#define NUCLEO_HAS_SLOT(ptr, type, field) \
    (NUCLEO_HAS_FIELD(ptr, type, field) && (ptr)->field != NULL)

/* ---------------------------------------------------------------------------------------------
 * Status codes. 0 is success; every other code is code == (int)nucleo::ErrorKind + 1, so the
 * host maps a status straight onto its error kinds (core/include/nucleo/errors.hpp):
 *   NUCLEO_ERR_INVALID_ARGUMENT   ErrorKind::kInvalidArgument  bad input: name what and where
 *   NUCLEO_ERR_NOT_FOUND          ErrorKind::kNotFound         no such conversation, version, key
 *   NUCLEO_ERR_NOT_IMPLEMENTED    ErrorKind::kNotImplemented   a surface not built (never an
 *                                                              empty result; persistence.4)
 *   NUCLEO_ERR_CONFIG             ErrorKind::kConfig           the create() config was refused
 *   NUCLEO_ERR_PLUGIN             ErrorKind::kPlugin           the plugin failed (any other error)
 *   NUCLEO_ERR_RATE_LIMITED       ErrorKind::kRateLimited      provider said 429
 *   NUCLEO_ERR_OVERLOADED         ErrorKind::kOverloaded       provider 529 / 5xx
 *   NUCLEO_ERR_TRANSPORT          ErrorKind::kTransport        a store's network failure
 *   NUCLEO_ERR_PROTOCOL           ErrorKind::kProtocol         an answer off its wire format
 *   NUCLEO_ERR_UNCORRECTABLE      ErrorKind::kUncorrectable    a retry cannot fix it
 *   NUCLEO_ERR_CONTEXT_OVERFLOW   ErrorKind::kContextOverflow  the input exceeds the context
 *   NUCLEO_ERR_OWNERSHIP          ErrorKind::kOwnership        another owner / stale fencing token
 *   NUCLEO_ERR_INTERNAL           ErrorKind::kInternal         a bug, or out of memory
 * A code the host does not know is treated as NUCLEO_ERR_PLUGIN.
 * ------------------------------------------------------------------------------------------- */
#define NUCLEO_OK 0
#define NUCLEO_ERR_INVALID_ARGUMENT 1
#define NUCLEO_ERR_NOT_FOUND 2
#define NUCLEO_ERR_NOT_IMPLEMENTED 3
#define NUCLEO_ERR_CONFIG 4
#define NUCLEO_ERR_PLUGIN 5
#define NUCLEO_ERR_RATE_LIMITED 6
#define NUCLEO_ERR_OVERLOADED 7
#define NUCLEO_ERR_TRANSPORT 8
#define NUCLEO_ERR_PROTOCOL 9
#define NUCLEO_ERR_UNCORRECTABLE 10
#define NUCLEO_ERR_CONTEXT_OVERFLOW 11
#define NUCLEO_ERR_OWNERSHIP 12
#define NUCLEO_ERR_INTERNAL 13

/* Log levels of the host log extension; the same order as nucleo::log::Level. */
#define NUCLEO_LOG_LEVEL_TRACE 0
#define NUCLEO_LOG_LEVEL_DEBUG 1
#define NUCLEO_LOG_LEVEL_INFO 2
#define NUCLEO_LOG_LEVEL_WARN 3
#define NUCLEO_LOG_LEVEL_ERROR 4

/* Ids. Factories and extensions carry a revision after the slash; a new revision is a new id. */
#define NUCLEO_FACTORY_PROVIDER "nucleo.provider/1"
#define NUCLEO_FACTORY_STORE "nucleo.store/1"
#define NUCLEO_FACTORY_SUMMARIZER "nucleo.summarizer/1"
#define NUCLEO_EXT_HOST_LOG "nucleo.host.log/1"
#define NUCLEO_EXT_HOST_MODEL_CALL "nucleo.host.model_call/1" /* since 1.1 */
#define NUCLEO_EXT_HOST_TOKENS "nucleo.host.tokens/1"         /* since 1.6 */

/* A borrowed UTF-8 string, valid for the call only; not NUL-terminated unless stated.
 * The one struct without struct_size: it is two words passed by value and will never grow. */
typedef struct nucleo_string_view {
    const char* data;
    size_t size;
} nucleo_string_view;

/* A host-owned output sink. The plugin calls write() zero or more times during the call it was
 * passed to; the bytes are appended in order. write returns NUCLEO_OK, or a non-zero status
 * (e.g. NUCLEO_ERR_INTERNAL when the host ran out of memory): the plugin then stops and returns
 * that status. The sink is valid for that call only: a copy written to after the call returned
 * gets NUCLEO_ERR_PLUGIN and nothing of the host is touched (abi.102).
 * Thread rule: a sink is used by the thread of the call it was passed to. */
typedef struct nucleo_sink {
    uint32_t struct_size;
    void* ctx;
    int32_t (*write)(void* ctx, const char* data, size_t size);
} nucleo_sink;

/* A caller-owned error. The caller sets struct_size, code = NUCLEO_OK, http_status = 0 and
 * message[0] = '\0'; a failing callee sets code (equal to the status it returns), http_status
 * when an HTTP answer is the cause (else 0) and a NUL-terminated one-line message naming what was
 * wrong and where (truncated to fit). A callee writes only what lies inside struct_size.
 * Thread rule: owned by the calling thread for the call's duration. */
#define NUCLEO_ERROR_MESSAGE_SIZE 512
typedef struct nucleo_error {
    uint32_t struct_size;
    int32_t code;
    int32_t http_status;
    char message[NUCLEO_ERROR_MESSAGE_SIZE];
} nucleo_error;

/* An instance created by a factory; opaque to the host, destroyed only by the same factory. */
typedef struct nucleo_instance nucleo_instance;

/* ---------------------------------------------------------------------------------------------
 * The host, handed to entry->init. It and every extension it returns stay valid until after
 * entry->deinit returns.
 * ------------------------------------------------------------------------------------------- */
typedef struct nucleo_host {
    uint32_t struct_size;
    uint32_t abi_major; /* the host's NUCLEO_PLUGIN_ABI_MAJOR */
    uint32_t abi_minor; /* the host's NUCLEO_PLUGIN_ABI_MINOR */
    void* host_ctx;     /* opaque; passed back to extension slots */
    /* The extension struct for `id` (NUL-terminated), or NULL when the host does not offer it.
     * Thread rule: any thread, any time between init and deinit; the result may be cached. */
    const void* (*get_extension)(const struct nucleo_host* host, const char* id);
} nucleo_host;

/* "nucleo.host.log/1": the plugin's only way to say something. A plugin never writes to stdout
 * (it belongs to the host application) and should not write to stderr. The host files the
 * record under the logger "plugin:<name>".
 * Thread rule: log is callable from any thread, concurrently. */
typedef struct nucleo_host_log {
    uint32_t struct_size;
    void (*log)(void* host_ctx, int32_t level, nucleo_string_view message);
} nucleo_host_log;

/* "nucleo.host.model_call/1" (since 1.1): one model call made by the host on the plugin's behalf
 * (compaction.40: every summary is a call run as a job of its own, at the SMALL grade
 * unless configured otherwise, admitted against rate limits, recorded and costed). The host
 * chooses the model, its provider and credentials; the plugin only says what to ask.
 * request_json: {"schema_version":1, "prompt":"...", "system":"..." (optional),
 *                "grade":"SMALL"|"MEDIUM"|"LARGE" (optional, default SMALL),
 *                "model":"<catalog id>" (optional, wins over grade),
 *                "max_output_tokens":N (optional), "purpose":"compaction" (optional, recorded)}
 * out receives: {"schema_version":1, "text":"<the answer's text>", "model":"<catalog id>",
 *                "usage":{"input_tokens":N, "output_tokens":N, "cache_read_tokens":N,
 *                "cache_write_tokens":N}, "cost":<US dollars>}
 * Errors: NUCLEO_ERR_NOT_IMPLEMENTED when the host has no model-call service installed,
 * NUCLEO_ERR_NOT_FOUND when no catalog model has the grade or id, else the call's own status
 * (NUCLEO_ERR_RATE_LIMITED, NUCLEO_ERR_OVERLOADED, ...).
 * Thread rule: call is callable from any thread, concurrently; it blocks until the answer. */
typedef struct nucleo_host_model_call {
    uint32_t struct_size;
    int32_t (*call)(void* host_ctx, nucleo_string_view request_json, const nucleo_sink* out,
                    nucleo_error* err);
} nucleo_host_model_call;

/* "nucleo.host.tokens/1" (since 1.6): counts a text with the token counter the host measures a
 * conversation with, so a plugin asked for N tokens can deliver N of the model's tokens rather than
 * a bytes-per-token guess (compaction.111). `counter` is the opaque "token_counter" string of the
 * request being served (every summarizer request carries one); it is valid while that request
 * runs. An unknown or expired counter is NUCLEO_ERR_NOT_FOUND, and the plugin falls back to an
 * estimate of its own. No struct changed in 1.6: a plugin built against 1.5 simply never asks.
 * Thread rule: count is callable from any thread, concurrently. */
typedef struct nucleo_host_tokens {
    uint32_t struct_size;
    int32_t (*count)(void* host_ctx, nucleo_string_view counter, nucleo_string_view text,
                     int64_t* tokens, nucleo_error* err);
} nucleo_host_tokens;

/* ---------------------------------------------------------------------------------------------
 * The entry, returned by nucleo_plugin_entry_v1(). It points to static storage and stays valid
 * while the library is loaded. name (the <name> of nucleo-<name>.so), version and description are
 * NUL-terminated static strings.
 * ------------------------------------------------------------------------------------------- */
typedef struct nucleo_plugin_entry {
    uint32_t struct_size;
    uint32_t abi_major; /* must be NUCLEO_PLUGIN_ABI_MAJOR: the host refuses another major */
    uint32_t abi_minor; /* the minor the plugin was built against; newer or older both load */
    const char* name;
    const char* version;
    const char* description;
    /* Called once after loading, before any other slot but get_factory's id strings.
     * Returns NUCLEO_OK, or a status and a message in err (the host then refuses the plugin and
     * does not call deinit). May be NULL when the plugin needs no set-up.
     * Thread rule: the loader serialises init and deinit across all plugins. */
    int32_t (*init)(const nucleo_host* host, nucleo_error* err);
    /* Called once before unloading, after every instance was destroyed. May be NULL.
     * Thread rule: serialised by the loader, like init. */
    void (*deinit)(void);
    /* The factory struct for `id` (NUL-terminated, e.g. NUCLEO_FACTORY_SUMMARIZER), or NULL when
     * the plugin does not serve it. The host casts the result to the kind's factory struct
     * (nucleo_provider_factory, ...), which begins with struct_size like every other struct.
     * Thread rule: any thread after init; returns pointers to static storage. */
    const void* (*get_factory)(const char* id);
    /* Since 1.4; optional. The JSON Schema document (NUL-terminated, static storage) of the
     * configuration create() of the factory `id` accepts (the operator's `options:` section), or
     * NULL when the plugin publishes none for that id. The host validates the options against it
     * before calling create and refuses a mismatch itself, naming the config's file:line and
     * what was expected (abi.109); a plugin without the slot (built before 1.4) or answering
     * NULL gets its options unchecked and the host warns once, naming it. The host reads the
     * subset of JSON Schema listed in docs/plugin-authoring.md (type, properties, required,
     * additionalProperties, enum, minimum, maximum, minLength, items, description) and ignores
     * other keywords.
     * Thread rule: any thread after init; returns pointers to static storage. */
    const char* (*options_schema)(const char* id);
} nucleo_plugin_entry;

/* The one exported function. Thread rule: any thread; returns the same pointer every time. */
typedef const nucleo_plugin_entry* (*nucleo_plugin_entry_fn)(void);

/* ---------------------------------------------------------------------------------------------
 * Factories. Each begins with struct_size, create and destroy, then the kind's slots.
 *
 * create(config_json, out, err): config_json is the instance's configuration as a JSON object
 *   (the operator's YAML section, secrets already expanded; "{}" when there is none). On success
 *   *out is the new instance and the status is NUCLEO_OK; on failure *out is left NULL.
 *   Thread rule: any thread, concurrently with any other call of the factory.
 * destroy(instance): frees it. NULL is a no-op.
 *   Thread rule: any thread, once, after every other call on that instance has returned.
 * ------------------------------------------------------------------------------------------- */

/* "nucleo.summarizer/1": shrinks text for compaction (compaction.40). */
typedef struct nucleo_summarizer_factory {
    uint32_t struct_size;
    int32_t (*create)(nucleo_string_view config_json, nucleo_instance** out, nucleo_error* err);
    void (*destroy)(nucleo_instance* instance);
    /* request_json: {"schema_version":1, "text":"..." | "segments":["...", ...],
     *                "target_tokens":N, "instructions":"..." (optional),
     *                "token_counter":"..." (since 1.6: for "nucleo.host.tokens/1")}
     * out receives: {"schema_version":1, "summary":"...", "summary_tokens":N, ...}
     * (a plugin may add fields). Deterministic summarizers should say so in capabilities.
     * Thread rule: callable concurrently on one instance. */
    int32_t (*summarize)(nucleo_instance* instance, nucleo_string_view request_json,
                         const nucleo_sink* out, nucleo_error* err);
} nucleo_summarizer_factory;

/* "nucleo.provider/1": one provider dialect (abi.24: the data flow of one call). The core
 * decides everything (breakpoints, roles, budgets); the provider only renders and parses.
 * encode and decode are pure functions: no I/O, no clock, no hidden state between calls. */
typedef struct nucleo_provider_factory {
    uint32_t struct_size;
    int32_t (*create)(nucleo_string_view config_json, nucleo_instance** out, nucleo_error* err);
    void (*destroy)(nucleo_instance* instance);
    /* out receives {"schema_version":1, "native_tools":bool, "caching":bool, "streaming":bool,
     *               "max_cache_breakpoints":N, "inputs":["images","documents"],
     *               "cache_anchor_tool_use":bool, "cache_anchor_assistant":bool,
     *               "wire_family":"anthropic-messages|openai-chat|bedrock-converse", ...}.
     * "wire_family" names the rule book the core audits every encoded request against before
     * sending it (the plan's breakpoints, the system channel, roles, max_tokens, the provider's
     * documented request rules); a plugin of another wire omits it and gets the generic checks
     * only (a relative path, no CR/LF/NUL in headers, a JSON body under the size cap).
     * "cache_anchor_tool_use" / "cache_anchor_assistant" false: the dialect can mark no tool call
     * / no block of an assistant turn, so the core's plan puts none there (absent: it can;
     * docs/provider-abi-documents.md).
     * Thread rule: callable concurrently on one instance. */
    int32_t (*capabilities)(nucleo_instance* instance, const nucleo_sink* out, nucleo_error* err);
    /* prepared_json: the PreparedConversation document (schema_version 1: model, system text,
     * tool definitions, USER/ASSISTANT turns, cache marks, output budget, thinking budget).
     * out receives the HTTP request: {"schema_version":1, "method":"POST", "path":"/v1/messages",
     * "headers":{"name":"value", ...}, "body":<JSON value or string>}. The core adds the base URL,
     * credentials and signing. NUCLEO_ERR_INVALID_ARGUMENT when the prepared request cannot be
     * expressed in this dialect (names what and where).
     * Thread rule: callable concurrently on one instance. */
    int32_t (*encode)(nucleo_instance* instance, nucleo_string_view prepared_json,
                      const nucleo_sink* out, nucleo_error* err);
    /* http_status, headers_json ({"name":"value",...}, lower-case names) and body of the answer.
     * out receives the normalized response: {"schema_version":1, "blocks":[...content blocks as
     * in the conversation document...], "stop_reason":"end_turn|max_tokens|tool_use|...",
     * "usage":{"input_tokens":N, "output_tokens":N, "cache_read_tokens":N,
     * "cache_write_tokens":N}, "model":"..."}. A non-2xx answer returns the mapped status
     * (NUCLEO_ERR_RATE_LIMITED, NUCLEO_ERR_OVERLOADED, ...) with err->http_status set and the
     * provider's own error text in the message.
     * Thread rule: callable concurrently on one instance. */
    int32_t (*decode)(nucleo_instance* instance, int32_t http_status,
                      nucleo_string_view headers_json, nucleo_string_view body,
                      const nucleo_sink* out, nucleo_error* err);
    /* Since 1.2; optional (a host streams without deltas when the slot is absent or NULL). One
     * event of a streamed 2xx answer, framed by the host as the capabilities' "stream_framing"
     * says: "sse" (a server-sent event: event_name is its `event:` field, empty when none, data
     * its `data:` lines joined by "\n") or "aws-eventstream" (an AWS event-stream message:
     * event_name is its ":event-type" header, data its payload). out receives
     * {"schema_version":1, "deltas":[DELTA, ...]} (or nothing: no deltas), DELTA one of
     *   {"type":"text", "index":N, "text":"..."}
     *   {"type":"thinking", "index":N, "thinking":"..."}
     *   {"type":"tool_use", "index":N, "id":"...", "name":"..."}      a tool call opened
     *   {"type":"tool_input", "index":N, "partial_json":"..."}        a piece of its input
     *   {"type":"usage", "usage":{...as in decode's normalized response...}}
     * where N identifies the block within the answer (every delta of one block carries the same N;
 * blocks in the order decode() returns them). Stateless like decode:
     * the host still passes the whole body to decode() at the end, and that is the answer. An
     * event that is not JSON, or an error event, gives no deltas (decode reports it).
     * Thread rule: callable concurrently on one instance. */
    int32_t (*decode_event)(nucleo_instance* instance, nucleo_string_view event_name,
                            nucleo_string_view data, const nucleo_sink* out, nucleo_error* err);
    /* Since 1.3; optional (a host calls encode when the slot is absent or NULL). encode with the
     * HTTP request in two parts (abi.106): head receives encode's document without "body",
     * {"schema_version":1, "method":"POST", "path":"/v1/messages", "headers":{...}}, and body
     * receives the body bytes exactly as they are to be sent (a JSON body as compact JSON text).
     * The host sends those bytes as they are. Same input and errors as encode; a failed call may
     * have written part of either output, which the host discards.
     * Thread rule: callable concurrently on one instance. */
    int32_t (*encode_parts)(nucleo_instance* instance, nucleo_string_view prepared_json,
                            const nucleo_sink* head, const nucleo_sink* body, nucleo_error* err);
    /* Since 1.4; optional (abi.108, caching.110). encode_parts with the body in three parts: open
     * receives the body bytes before the wire messages of the prepared turns, turns the wire
     * messages themselves (the messages array's elements, comma-separated, without a leading or
     * trailing comma), close the bytes after them; open + turns + close is exactly encode_parts'
     * body, and head is encode_parts' head. A separator the body needs before the first turn's
     * message (OpenAI's system message leads the array) belongs to open.
     * A plugin that offers this slot and answers "turn_fragments": true in its capabilities
     * promises that its encoding is local to runs of turns: for every request R whose turns fall
     * into the maximal runs of consecutive same-role turns T1..Tn, encode_parts(R)'s body equals
     *   open(R1) + turns(R1) + "," + turns(R2) + "," + ... + turns(Rn) + close(R1)
     * where Rk is R with prepared.turns cut to the run Tk, prepared.cache_plan.turn_anchors cut
     * to the anchors inside Tk (turn numbers relative to the run) and the member "turn_offset"
     * set to R's own "turn_offset" (0 when absent) plus the index of Tk's first turn in R: a
     * request's turn_offset says which turn of the conversation its first turn is, so a request
     * of several runs (Rk..Rm cut together) gives turns(Rk) + "," + ... + turns(Rm) as its turns.
     * R2..Rn also carry no system blocks
     * and no system or automatic cache mark, and "stream": false. A host may then keep turns(Rk)
     * and reuse it while the run, its place and the rest of its document are unchanged. Same
     * input and errors as encode; a host falls back to encode_parts on any failure.
     * Thread rule: callable concurrently on one instance. */
    int32_t (*encode_split)(nucleo_instance* instance, nucleo_string_view prepared_json,
                            const nucleo_sink* head, const nucleo_sink* open,
                            const nucleo_sink* turns, const nucleo_sink* close, nucleo_error* err);
} nucleo_provider_factory;

/* "nucleo.store/1": persistent and session stores of conversations (docs/spec/persistence.md).
 * Every conversation-addressed slot takes the ACTING principal (the user
 * id); the store enforces that a conversation belongs to that user: another user's conversation
 * reads as NUCLEO_ERR_NOT_FOUND. Snapshots are conversation documents (schema_version 1).
 * A surface the store has not built is a NULL slot or answers NUCLEO_ERR_NOT_IMPLEMENTED --
 * never an empty result. Every slot: callable concurrently on one instance (the store does its
 * own locking and connection pooling). */
typedef struct nucleo_store_factory {
    uint32_t struct_size;
    int32_t (*create)(nucleo_string_view config_json, nucleo_instance** out, nucleo_error* err);
    void (*destroy)(nucleo_instance* instance);
    /* out: {"schema_version":1, "persistent":bool, "session":bool, "version_history":bool,
     *       "lease":bool}. Thread rule: concurrent. */
    int32_t (*capabilities)(nucleo_instance* instance, const nucleo_sink* out, nucleo_error* err);

    /* --- persistent surface --- */
    /* The first save of a conversation: creates the record (title, embedding in the request).
     * request_json: {"schema_version":1, "snapshot":{...}, "title":"...", "fencing_token":N?}.
     * out: {"schema_version":1, "version":"<id>"}. NUCLEO_ERR_INVALID_ARGUMENT when the id
     * exists already. Thread rule: concurrent. */
    int32_t (*create_conversation)(nucleo_instance* instance, nucleo_string_view principal,
                                   nucleo_string_view conversation_id,
                                   nucleo_string_view request_json, const nucleo_sink* out,
                                   nucleo_error* err);
    /* Every later save, incremental and without reads: request_json: {"schema_version":1,
     * "base_version":"<id>", "changes":{...} | "snapshot":{...}, "fencing_token":N?}.
     * out: {"schema_version":1, "version":"<id>"}. A missing row is NUCLEO_ERR_NOT_FOUND (never
     * resurrected); a stale fencing token is NUCLEO_ERR_OWNERSHIP. Thread rule: concurrent. */
    int32_t (*update_conversation)(nucleo_instance* instance, nucleo_string_view principal,
                                   nucleo_string_view conversation_id,
                                   nucleo_string_view request_json, const nucleo_sink* out,
                                   nucleo_error* err);
    /* out: the latest snapshot. Thread rule: concurrent. */
    int32_t (*load_conversation)(nucleo_instance* instance, nucleo_string_view principal,
                                 nucleo_string_view conversation_id, const nucleo_sink* out,
                                 nucleo_error* err);
    /* Thread rule: concurrent. */
    int32_t (*delete_conversation)(nucleo_instance* instance, nucleo_string_view principal,
                                   nucleo_string_view conversation_id, nucleo_error* err);
    /* query_json: {"schema_version":1, "limit":N?, "cursor":"..."?}; out: {"schema_version":1,
     * "conversations":[{"conversation_id", "title", "created_at", "updated_at"}],
     * "next_cursor":"..."|null}. Thread rule: concurrent. */
    int32_t (*list_conversations)(nucleo_instance* instance, nucleo_string_view principal,
                                  nucleo_string_view query_json, const nucleo_sink* out,
                                  nucleo_error* err);
    /* out: {"schema_version":1, "versions":[{"version":"<id>", "saved_at":"RFC 3339"}],
     * "fencing_token":N?}, oldest first; fencing_token: the highest token a save presented.
     * Thread rule: concurrent. */
    int32_t (*version_history)(nucleo_instance* instance, nucleo_string_view principal,
                               nucleo_string_view conversation_id, const nucleo_sink* out,
                               nucleo_error* err);
    /* out: the snapshot exactly as saved at `version`. Thread rule: concurrent. */
    int32_t (*load_version)(nucleo_instance* instance, nucleo_string_view principal,
                            nucleo_string_view conversation_id, nucleo_string_view version,
                            const nucleo_sink* out, nucleo_error* err);

    /* --- session surface --- */
    /* out: the cached snapshot; NUCLEO_ERR_NOT_FOUND on a miss. Thread rule: concurrent. */
    int32_t (*session_get)(nucleo_instance* instance, nucleo_string_view principal,
                           nucleo_string_view conversation_id, const nucleo_sink* out,
                           nucleo_error* err);
    /* Stores snapshot_json for ttl_ms milliseconds (0: the store's default). Thread rule:
     * concurrent. */
    int32_t (*session_put)(nucleo_instance* instance, nucleo_string_view principal,
                           nucleo_string_view conversation_id, nucleo_string_view snapshot_json,
                           int64_t ttl_ms, nucleo_error* err);
    /* Removes the cached entry; absent is not an error. Thread rule: concurrent. */
    int32_t (*session_invalidate)(nucleo_instance* instance, nucleo_string_view principal,
                                  nucleo_string_view conversation_id, nucleo_error* err);

    /* --- ownership lease across hosts (ownership.40-42: many hosts, one conversation) --- */
    /* request_json: {"schema_version":1, "op":"acquire"|"renew"|"release", "holder":"...",
     * "ttl_ms":N, "fencing_token":N?, "min_fencing_token":N?} (a new grant's token is at least
     * min_fencing_token). out: {"schema_version":1, "fencing_token":N,
     * "holder":"...", "expires_at":"RFC 3339"}. Held by another holder: NUCLEO_ERR_OWNERSHIP
     * naming it. Thread rule: concurrent. */
    int32_t (*lease)(nucleo_instance* instance, nucleo_string_view principal,
                     nucleo_string_view conversation_id, nucleo_string_view request_json,
                     const nucleo_sink* out, nucleo_error* err);

    /* Since 1.5; optional (abi.128): a host calls session_put with the whole entry when the slot
     * is absent or NULL. Refreshes the cached entry by the changes of one committed save.
     * request_json: {"schema_version":1, "base_version":"<id>", "version":"<id>",
     * "changes":{...}} ("changes" exactly as update_conversation's). When the kept entry mirrors
     * base_version (its envelope's "durable_version"), the store applies the changes to the
     * entry's snapshot, makes it the mirror of "version" and restarts its TTL (ttl_ms as
     * session_put's), atomically against every other writer of the entry. Otherwise (no entry,
     * an expired one, another version, an entry mirroring no version) it drops the entry and
     * answers NUCLEO_ERR_NOT_FOUND, a miss: an entry never holds changes applied to another base.
     * Malformed changes: NUCLEO_ERR_INVALID_ARGUMENT, the entry dropped too.
     * Thread rule: concurrent. */
    int32_t (*session_apply)(nucleo_instance* instance, nucleo_string_view principal,
                             nucleo_string_view conversation_id, nucleo_string_view request_json,
                             int64_t ttl_ms, nucleo_error* err);

    /* Since 1.7; optional (abi.135): a host calls version_history and takes its last entry when
     * the slot is absent or NULL. The conversation's latest version and the highest fencing token
     * a save presented, read together (as version_history reads them), at a cost that does not
     * grow with the number of versions. out: {"schema_version":1, "version":"<id>"|null,
     * "saved_at":"RFC 3339"?, "fencing_token":N?}: "version" null for a record with no version.
     * A missing record: NUCLEO_ERR_NOT_FOUND, as version_history. Thread rule: concurrent. */
    int32_t (*latest_version)(nucleo_instance* instance, nucleo_string_view principal,
                              nucleo_string_view conversation_id, const nucleo_sink* out,
                              nucleo_error* err);
} nucleo_store_factory;

/* ---------------------------------------------------------------------------------------------
 * Small helpers for C plugins (static inline: nothing is exported).
 * ------------------------------------------------------------------------------------------- */

/* A view of a NUL-terminated string. */
static inline nucleo_string_view nucleo_sv(const char* s) {
    nucleo_string_view v;
    v.data = s;
    v.size = s != NULL ? strlen(s) : 0;
    return v;
}

/* Fills err (when non-NULL and large enough) and returns code, so a slot can
 * `return nucleo_error_set(err, NUCLEO_ERR_INVALID_ARGUMENT, 0, "missing \"text\"");`. */
static inline int32_t nucleo_error_set(nucleo_error* err, int32_t code, int32_t http_status,
                                       const char* message) {
    if (NUCLEO_HAS_FIELD(err, nucleo_error, code)) err->code = code;
    if (NUCLEO_HAS_FIELD(err, nucleo_error, http_status)) err->http_status = http_status;
    if (NUCLEO_HAS_FIELD(err, nucleo_error, message)) {
        size_t n = message != NULL ? strlen(message) : 0;
        if (n >= NUCLEO_ERROR_MESSAGE_SIZE) n = NUCLEO_ERROR_MESSAGE_SIZE - 1;
        if (n > 0) memcpy(err->message, message, n);
        err->message[n] = '\0';
    }
    return code;
}

/* Writes to a sink, checking the slot; NUCLEO_ERR_INTERNAL when there is no usable sink. */
static inline int32_t nucleo_sink_write(const nucleo_sink* sink, const char* data, size_t size) {
    if (!NUCLEO_HAS_SLOT(sink, nucleo_sink, write)) return NUCLEO_ERR_INTERNAL;
    return sink->write(sink->ctx, data, size);
}

/* Initialises a caller-owned error before a call. */
static inline void nucleo_error_init(nucleo_error* err) {
    memset(err, 0, sizeof(*err));
    err->struct_size = (uint32_t)sizeof(*err);
}

/* The entry function every plugin defines (with NUCLEO_PLUGIN_EXPORT). */
NUCLEO_PLUGIN_EXPORT const nucleo_plugin_entry* nucleo_plugin_entry_v1(void);

#ifdef __cplusplus
}
#endif

#endif /* NUCLEO_PLUGIN_H */
