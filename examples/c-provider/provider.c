/*
 * nucleo-c-provider: a "nucleo.provider/1" plugin in plain C11 (abi.24: a provider plugin
 * written in plain C against plugin-api/ only, a dialect for an OpenAI-compatible vendor that
 * differs in one field). It needs nothing but plugin.h and the C library.
 *
 * The vendor is imagined: "Acme Chat" serves OpenAI's Chat Completions (POST
 * <base>/chat/completions with a bearer key, the same answer shape) but takes the output limit as
 * the older `max_tokens` field and refuses `max_completion_tokens`, the field OpenAI's own dialect
 * sends. That is the one difference; this plugin is the whole dialect for it (dialect "acme-chat").
 *
 * What the core hands over and expects back is docs/provider-abi-documents.md. This dialect:
 *  - capabilities: native_tools false (the core renders tool definitions as text and reads the
 *    model's calls back from a {"tool_calls":[...]} envelope in the answer's text), caching false
 *    (the core plans no breakpoints; a plan that arrives anyway changes no byte), streaming false,
 *    auth bearer (the core adds "Authorization: Bearer <key>"; a plugin never sees a key).
 *  - encode: body {"model", "messages", "max_tokens"}.
 *      system_blocks -> one leading {"role":"system"} message, the blocks joined by a blank line;
 *      turns -> {"role":"user"|"assistant"} messages, one per turn, the blocks joined by a blank
 *      line, every content a plain string (the most widely accepted OpenAI-compatible form);
 *      text -> its text; json -> its JSON, compact, as text; skill -> its content;
 *      tool_use -> the envelope the model writes, one per run of adjacent calls:
 *        {"tool_calls":[{"name":N,"input":I},...]} -- unless the turn's own text already holds
 *        such an envelope (the core keeps the model's text and appends the calls it parsed from
 *        it), so that calls are not written twice;
 *      tool_result -> "Result of <id>:\n<content>" ("Result of <id> (error):" when is_error),
 *        its text and json parts joined by newlines, "(empty)" when there are none.
 *      Anything else (image, file, thinking, redacted_thinking, an unknown type, an attachment
 *      inside a tool result) cannot be said to this vendor: NUCLEO_ERR_INVALID_ARGUMENT naming
 *      the block type and where it is ("prepared.turns[2].blocks[0]"). So is a stream request
 *      and a non-empty tool_definitions (this dialect has no tools parameter). thinking is not
 *      sent: the vendor has no reasoning parameter.
 *  - decode: a chat completion -> {"model", "blocks":[text], "stop_reason", "usage"};
 *      finish_reason stop -> end_turn, length -> max_tokens, content_filter -> content_filter,
 *      tool_calls -> tool_use, anything else -> other; usage prompt_tokens minus
 *      prompt_tokens_details.cached_tokens -> input_tokens (the normalized split counts cache
 *      reads apart), cached_tokens -> cache_read_tokens, completion_tokens -> output_tokens.
 *      A non-2xx answer: 429 NUCLEO_ERR_RATE_LIMITED, 529 and 5xx NUCLEO_ERR_OVERLOADED,
 *      401/403 NUCLEO_ERR_CONFIG, 404 NUCLEO_ERR_NOT_FOUND, other 4xx NUCLEO_ERR_INVALID_ARGUMENT,
 *      with err->http_status and the vendor's own error message. A 2xx body that is not a chat
 *      completion: NUCLEO_ERR_PROTOCOL naming what is missing and quoting the first bytes.
 *
 * To stay dependency-free it carries a small JSON scanner (it validates the whole document
 * first, then reads values in place through borrowed spans) and writer (JSON-string escaping of
 * raw bytes, and JSON text rendered into a string). Nothing is allocated per call: output goes
 * through a fixed buffer into the host's sink. encode runs twice, first as a dry run that writes
 * nothing, so a refusal never leaves half a document in the sink.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nucleo/plugin.h"

#define DIALECT "acme-chat"

/* ---- the host ---------------------------------------------------------------------------- */

static const nucleo_host* g_host = NULL;
static const nucleo_host_log* g_log = NULL;

static void say(int32_t level, const char* text) {
    if (g_host != NULL && NUCLEO_HAS_SLOT(g_log, nucleo_host_log, log)) {
        g_log->log(g_host->host_ctx, level, nucleo_sv(text));
    }
}

/* Thread rule: the loader serialises init and deinit, so the two globals need no lock; every
 * other slot only reads them. */
static int32_t plugin_init(const nucleo_host* host, nucleo_error* err) {
    (void)err;
    g_host = host;
    if (NUCLEO_HAS_SLOT(host, nucleo_host, get_extension)) {
        g_log = (const nucleo_host_log*)host->get_extension(host, NUCLEO_EXT_HOST_LOG);
    }
    say(NUCLEO_LOG_LEVEL_DEBUG, "c-provider (" DIALECT ") ready");
    return NUCLEO_OK;
}

static void plugin_deinit(void) {
    g_host = NULL;
    g_log = NULL;
}

/* ---- errors -------------------------------------------------------------------------------- */

/* printf-style nucleo_error_set. The message is one line: the plugin's name, then what and where.
 */
#if defined(__GNUC__) || defined(__clang__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif
PRINTF_LIKE(4, 5)
static int32_t fail(nucleo_error* err, int32_t code, int32_t http_status, const char* fmt, ...) {
    char message[NUCLEO_ERROR_MESSAGE_SIZE];
    size_t n = strlen("c-provider: ");
    va_list args;
    memcpy(message, "c-provider: ", n);
    va_start(args, fmt);
    vsnprintf(message + n, sizeof message - n, fmt, args);
    va_end(args);
    return nucleo_error_set(err, code, http_status, message);
}

/* ---- a JSON scanner ----------------------------------------------------------------------- */

/* The bytes [p, end) of one JSON value inside a borrowed document. */
typedef struct span {
    const char* p;
    const char* end;
} span;

/* Nesting deeper than this is refused rather than recursed into (never a stack overflow). */
#define MAX_DEPTH 96

static const char* skip_ws(const char* p, const char* end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
    return p;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* JSON's two-character escapes: the letter after the backslash, then the byte it stands for. */
static const char kShortEscapes[][2] = {{'"', '"'},  {'\\', '\\'}, {'/', '/'},  {'b', '\b'},
                                        {'f', '\f'}, {'n', '\n'},  {'r', '\r'}, {'t', '\t'}};

/* The entry whose letter (by_letter) or byte is c, or NULL. */
static const char* short_escape(char c, int by_letter) {
    size_t i;
    for (i = 0; i < sizeof kShortEscapes / sizeof kShortEscapes[0]; ++i) {
        if (kShortEscapes[i][by_letter ? 0 : 1] == c) return kShortEscapes[i];
    }
    return NULL;
}

/* p at an opening quote: the position after the closing quote, or NULL when the string is not
 * valid JSON (a raw control byte, a bad escape, no end). */
static const char* scan_string(const char* p, const char* end) {
    if (p >= end || *p != '"') return NULL;
    for (++p; p < end; ++p) {
        const unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c < 0x20) return NULL;
        if (c != '\\') continue;
        if (++p >= end) return NULL;
        if (*p == 'u') {
            if (end - p < 5 || hex_value(p[1]) < 0 || hex_value(p[2]) < 0 || hex_value(p[3]) < 0 ||
                hex_value(p[4]) < 0) {
                return NULL;
            }
            p += 4;
        } else if (short_escape(*p, 1) == NULL) {
            return NULL;
        }
    }
    return NULL;
}

static const char* scan_digits(const char* p, const char* end) {
    const char* start = p;
    while (p < end && *p >= '0' && *p <= '9') ++p;
    return p > start ? p : NULL;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static const char* scan_number(const char* p, const char* end) {
    if (p < end && *p == '-') ++p;
    if (p < end && *p == '0') {
        ++p;
    } else if ((p = scan_digits(p, end)) == NULL) {
        return NULL;
    }
    if (p < end && *p == '.' && (p = scan_digits(p + 1, end)) == NULL) return NULL;
    if (p < end && (*p == 'e' || *p == 'E')) {
        ++p;
        if (p < end && (*p == '+' || *p == '-')) ++p;
        if ((p = scan_digits(p, end)) == NULL) return NULL;
    }
    return p;
}

static const char* scan_literal(const char* p, const char* end, const char* word) {
    const size_t n = strlen(word);
    return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

/* Validates one value starting at p (after blanks); returns the position right after it. */
static const char* scan_value(const char* p, const char* end, int depth) {
    p = skip_ws(p, end);
    if (p >= end) return NULL;
    switch (*p) {
        case '"':
            return scan_string(p, end);
        case '{':
        case '[': {
            const char close = *p == '{' ? '}' : ']';
            const int object = *p == '{';
            if (depth >= MAX_DEPTH) return NULL;
            p = skip_ws(p + 1, end);
            if (p < end && *p == close) return p + 1;
            for (;;) {
                if (object) {
                    if ((p = scan_string(p, end)) == NULL) return NULL;
                    p = skip_ws(p, end);
                    if (p >= end || *p != ':') return NULL;
                    ++p;
                }
                if ((p = scan_value(p, end, depth + 1)) == NULL) return NULL;
                p = skip_ws(p, end);
                if (p < end && *p == ',') {
                    p = skip_ws(p + 1, end);
                    continue;
                }
                return p < end && *p == close ? p + 1 : NULL;
            }
        }
        case 't':
            return scan_literal(p, end, "true");
        case 'f':
            return scan_literal(p, end, "false");
        case 'n':
            return scan_literal(p, end, "null");
        default:
            return scan_number(p, end);
    }
}

/* The whole text is one JSON value (blanks around it allowed). Every later lookup trusts this. */
static int parse_document(nucleo_string_view text, span* root) {
    const char* end = text.data + text.size;
    if (text.data == NULL) return 0;
    root->p = skip_ws(text.data, end);
    root->end = scan_value(root->p, end, 0);
    return root->end != NULL && skip_ws(root->end, end) == end;
}

static int is_object(span v) {
    return v.p < v.end && *v.p == '{';
}
static int is_array(span v) {
    return v.p < v.end && *v.p == '[';
}
static int is_string(span v) {
    return v.p < v.end && *v.p == '"';
}
static int is_null(span v) {
    return v.end - v.p == 4 && memcmp(v.p, "null", 4) == 0;
}
static int is_true(span v) {
    return v.end - v.p == 4 && memcmp(v.p, "true", 4) == 0;
}

/* Iterates the elements of an array or the members of an object (validated). */
typedef struct cursor {
    const char* p;
    const char* end;
} cursor;

static cursor open_container(span v) {
    cursor c;
    c.p = v.p + 1;
    c.end = v.end;
    return c;
}

/* The next element (key->p NULL for arrays) or member; 0 at the end. */
static int next_item(cursor* c, span* key, span* value) {
    const char* p = skip_ws(c->p, c->end);
    if (p >= c->end || *p == ']' || *p == '}') return 0;
    if (*p == '"' && key != NULL) {
        key->p = p;
        key->end = scan_string(p, c->end);
        p = skip_ws(key->end, c->end) + 1; /* the ':' */
    }
    value->p = skip_ws(p, c->end);
    value->end = scan_value(value->p, c->end, 0);
    p = skip_ws(value->end, c->end);
    if (p < c->end && *p == ',') ++p;
    c->p = p;
    return 1;
}

static int next_element(cursor* c, span* value) {
    return next_item(c, NULL, value);
}

/* Decodes a string token into UTF-8 bytes in out[cap] (always NUL-terminated; cut on a UTF-8
 * boundary when it does not fit). Returns the decoded length. */
static size_t unescape(span s, char* out, size_t cap) {
    const char* p = s.p + 1;
    const char* stop = s.end - 1;
    size_t n = 0;
    while (p < stop) {
        unsigned long cp;
        char utf8[4];
        size_t len = 1;
        if (*p != '\\') {
            utf8[0] = *p++;
        } else {
            const char e = p[1];
            p += 2;
            if (e != 'u') {
                utf8[0] = short_escape(e, 1)[1]; /* validated: always an entry */
            } else {
                cp = (unsigned long)(hex_value(p[0]) << 12 | hex_value(p[1]) << 8 |
                                     hex_value(p[2]) << 4 | hex_value(p[3]));
                p += 4;
                if (cp >= 0xD800 && cp <= 0xDBFF && stop - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                    const unsigned long lo =
                        (unsigned long)(hex_value(p[2]) << 12 | hex_value(p[3]) << 8 |
                                        hex_value(p[4]) << 4 | hex_value(p[5]));
                    if (lo >= 0xDC00 && lo <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        p += 6;
                    }
                }
                if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD; /* a lone surrogate */
                if (cp < 0x80) {
                    utf8[0] = (char)cp;
                } else if (cp < 0x800) {
                    utf8[0] = (char)(0xC0 | (cp >> 6));
                    utf8[1] = (char)(0x80 | (cp & 0x3F));
                    len = 2;
                } else if (cp < 0x10000) {
                    utf8[0] = (char)(0xE0 | (cp >> 12));
                    utf8[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    utf8[2] = (char)(0x80 | (cp & 0x3F));
                    len = 3;
                } else {
                    utf8[0] = (char)(0xF0 | (cp >> 18));
                    utf8[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
                    utf8[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    utf8[3] = (char)(0x80 | (cp & 0x3F));
                    len = 4;
                }
            }
        }
        if (n + len >= cap) break;
        memcpy(out + n, utf8, len);
        n += len;
    }
    /* A raw multi-byte character cut by the end of the buffer is dropped whole. */
    if (p < stop && n > 0) {
        size_t k = n;
        while (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0x80) --k;
        if (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0xC0) {
            const unsigned char lead = (unsigned char)out[k - 1];
            const size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
            if (n - (k - 1) < need) n = k - 1;
        }
    }
    out[n] = '\0';
    return n;
}

/* Whether a string token says exactly `word` (escapes decoded: "te\u0078t" is "text"). */
static int string_is(span s, const char* word) {
    char buf[64];
    const size_t n = strlen(word);
    if (!is_string(s) || n >= sizeof buf - 1) return 0;
    return unescape(s, buf, sizeof buf) == n && memcmp(buf, word, n) == 0;
}

/* The member `key` of an object; 0 when it is absent (or v is not an object). */
static int member(span obj, const char* key, span* out) {
    cursor c;
    span k, v;
    if (!is_object(obj)) return 0;
    c = open_container(obj);
    while (next_item(&c, &k, &v)) {
        if (string_is(k, key)) {
            *out = v;
            return 1;
        }
    }
    return 0;
}

/* A non-negative integer without fraction or exponent that fits int64; 0 when it is not one. */
static int read_count(span v, int64_t* out) {
    const char* p = v.p;
    int64_t n = 0;
    if (p >= v.end || *p < '0' || *p > '9') return 0;
    for (; p < v.end; ++p) {
        if (*p < '0' || *p > '9') return 0;
        if (n > (INT64_MAX - (*p - '0')) / 10) return 0;
        n = n * 10 + (*p - '0');
    }
    *out = n;
    return 1;
}

/* ---- a JSON writer over the host's sink ---------------------------------------------------- */

typedef struct writer {
    const nucleo_sink* sink; /* NULL: a dry run, nothing is written */
    int32_t status;          /* the first failure of the sink; sticky */
    size_t len;
    char buf[4096];
} writer;

static void w_init(writer* w, const nucleo_sink* sink) {
    w->sink = sink;
    w->status = NUCLEO_OK;
    w->len = 0;
}

static void w_flush(writer* w) {
    if (w->sink != NULL && w->status == NUCLEO_OK && w->len > 0) {
        w->status = nucleo_sink_write(w->sink, w->buf, w->len);
    }
    w->len = 0;
}

static void w_put(writer* w, const char* data, size_t n) {
    if (w->sink == NULL || w->status != NUCLEO_OK) return;
    while (n > 0) {
        size_t room = sizeof w->buf - w->len;
        if (room == 0) {
            w_flush(w);
            if (w->status != NUCLEO_OK) return;
            room = sizeof w->buf;
        }
        if (room > n) room = n;
        memcpy(w->buf + w->len, data, room);
        w->len += room;
        data += room;
        n -= room;
    }
}

static void w_lit(writer* w, const char* s) {
    w_put(w, s, strlen(s));
}

static void w_int(writer* w, int64_t v) {
    char digits[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        digits[sizeof digits - 1 - n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u > 0);
    if (v < 0) digits[sizeof digits - 1 - n++] = '-';
    w_put(w, digits + sizeof digits - n, (size_t)n);
}

/* Raw bytes as the content of a JSON string: '"' and '\' escaped, control bytes as \n, \t, ...
 * or \u00XX. Everything else (UTF-8 included) is written as it is, which JSON allows. */
static void w_escaped(writer* w, const char* raw, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const char* run = raw;
    size_t i;
    for (i = 0; i < n; ++i) {
        const unsigned char c = (unsigned char)raw[i];
        const char* entry;
        char esc[6];
        size_t len = 2;
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        w_put(w, run, (size_t)(raw + i - run));
        run = raw + i + 1;
        esc[0] = '\\';
        if ((entry = short_escape((char)c, 0)) != NULL) {
            esc[1] = entry[0];
        } else {
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 0xF];
            len = 6;
        }
        w_put(w, esc, len);
    }
    w_put(w, run, (size_t)(raw + n - run));
}

static void w_escaped_lit(writer* w, const char* s) {
    w_escaped(w, s, strlen(s));
}

/* The contents of a validated string token, as they stand: its escapes are valid inside any
 * other JSON string, so the text is carried without decoding. */
static void w_inner(writer* w, span s) {
    w_put(w, s.p + 1, (size_t)(s.end - s.p - 2));
}

/* A JSON value rendered, compact, as the content of a JSON string: blanks outside strings
 * dropped, every byte of the JSON text escaped (so {"a":"x\"y"} becomes {\"a\":\"x\\\"y\"}). */
static void w_json_as_text(writer* w, span v) {
    const char* p = v.p;
    const char* run = p;
    int in_string = 0;
    for (; p < v.end; ++p) {
        if (in_string) {
            if (*p == '\\') {
                ++p; /* the escaped byte never ends the string */
            } else if (*p == '"') {
                in_string = 0;
            }
        } else if (*p == '"') {
            in_string = 1;
        } else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
            w_escaped(w, run, (size_t)(p - run));
            run = p + 1;
        }
    }
    w_escaped(w, run, (size_t)(v.end - run));
}

/* ---- encode --------------------------------------------------------------------------------- */

/* Where a block is, for messages: "prepared.turns[2].blocks[0]" or "prepared.system_blocks[1]". */
typedef struct where {
    const char* list; /* "turns" or "system_blocks" */
    size_t turn;
    size_t block;
} where;

static const char* where_text(const where* at, char* buf, size_t cap) {
    if (strcmp(at->list, "turns") == 0) {
        snprintf(buf, cap, "prepared.turns[%zu].blocks[%zu]", at->turn, at->block);
    } else {
        snprintf(buf, cap, "prepared.system_blocks[%zu]", at->block);
    }
    return buf;
}

/* A block's type for a message: its decoded name, or "(no type)". */
static void type_name(span type, char* buf, size_t cap) {
    if (is_string(type)) {
        unescape(type, buf, cap);
    } else {
        strncpy(buf, "(no type)", cap - 1);
        buf[cap - 1] = '\0';
    }
}

static int32_t refuse_block(const where* at, span type, nucleo_error* err) {
    char place[96];
    char name[64];
    type_name(type, name, sizeof name);
    where_text(at, place, sizeof place);
    if (strcmp(at->list, "turns") == 0) {
        return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                    "%s: block type \"%s\" in turn %zu cannot be sent to " DIALECT
                    " (it takes text, json, skill, tool_use and tool_result)",
                    place, name, at->turn);
    }
    return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                "%s: block type \"%s\" cannot be system content for " DIALECT
                " (text, json, skill)",
                place, name);
}

static int32_t missing_field(const where* at, const char* field, const char* what,
                             nucleo_error* err) {
    char place[96];
    return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0, "%s.%s: %s",
                where_text(at, place, sizeof place), field, what);
}

/* A string field of a block, or a refusal naming it. */
static int32_t string_field(span block, const char* field, const where* at, span* out,
                            nucleo_error* err) {
    if (!member(block, field, out) || !is_string(*out)) {
        return missing_field(at, field, "missing or not a string", err);
    }
    return NUCLEO_OK;
}

/* Text, json and skill: the kinds every dialect can say as text. Returns 1 when handled. */
static int32_t write_text_like(writer* w, span block, span type, const where* at, int* handled,
                               nucleo_error* err) {
    span v;
    int32_t status;
    *handled = 1;
    if (string_is(type, "text")) {
        if ((status = string_field(block, "text", at, &v, err)) != NUCLEO_OK) return status;
        w_inner(w, v);
    } else if (string_is(type, "skill")) {
        if ((status = string_field(block, "content", at, &v, err)) != NUCLEO_OK) return status;
        w_inner(w, v);
    } else if (string_is(type, "json")) {
        if (!member(block, "json", &v)) return missing_field(at, "json", "missing", err);
        w_json_as_text(w, v);
    } else {
        *handled = 0;
    }
    return NUCLEO_OK;
}

/* "Result of <id>:\n<text and json parts, one per line>". */
static int32_t write_result_as_text(writer* w, span block, const where* at, nucleo_error* err) {
    span id, content, part, is_error, v;
    int32_t status;
    int written = 0;
    size_t k = 0;
    if ((status = string_field(block, "tool_use_id", at, &id, err)) != NUCLEO_OK) return status;
    w_lit(w, "Result of ");
    w_inner(w, id);
    if (member(block, "is_error", &is_error) && is_true(is_error)) w_lit(w, " (error)");
    w_lit(w, ":\\n");
    if (member(block, "content", &content)) {
        cursor c;
        if (!is_array(content)) return missing_field(at, "content", "not an array", err);
        c = open_container(content);
        for (; next_element(&c, &part); ++k) {
            span type = {NULL, NULL};
            const int text = member(part, "type", &type) && string_is(type, "text");
            if (text && member(part, "text", &v) && is_string(v)) {
                if (v.end - v.p == 2) continue; /* empty text adds nothing */
                if (written++) w_lit(w, "\\n");
                w_inner(w, v);
            } else if (!text && string_is(type, "json") && member(part, "json", &v)) {
                if (written++) w_lit(w, "\\n");
                w_json_as_text(w, v);
            } else {
                char place[96];
                char name[64];
                type_name(type, name, sizeof name);
                return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                            "%s.content[%zu]: block type \"%s\" in a tool result of turn %zu "
                            "cannot be sent to " DIALECT " (text and json parts only)",
                            where_text(at, place, sizeof place), k, name, at->turn);
            }
        }
    }
    if (!written) w_lit(w, "(empty)");
    return NUCLEO_OK;
}

/* Whether a turn's own text already holds a "tool_calls" envelope (the model wrote it). */
static int turn_has_envelope(span blocks) {
    static const char needle[] = "\\\"tool_calls\\\""; /* "tool_calls" inside a JSON string */
    const size_t n = sizeof needle - 1;
    cursor c = open_container(blocks);
    span block, type, text;
    while (next_element(&c, &block)) {
        const char* p;
        if (!member(block, "type", &type) || !string_is(type, "text")) continue;
        if (!member(block, "text", &text) || !is_string(text)) continue;
        for (p = text.p; p + n <= text.end; ++p) {
            if (memcmp(p, needle, n) == 0) return 1;
        }
    }
    return 0;
}

/* One turn's blocks as the content string of its message (without the quotes). */
static int32_t write_turn_content(writer* w, span blocks, size_t turn, nucleo_error* err) {
    const int skip_calls = turn_has_envelope(blocks);
    cursor c = open_container(blocks);
    span block, v;
    int pieces = 0;
    int in_calls = 0; /* inside a run of tool_use blocks rendered as one envelope */
    int32_t status;
    where at;
    at.list = "turns";
    at.turn = turn;
    for (at.block = 0; next_element(&c, &block); ++at.block) {
        int handled;
        span type = {NULL, NULL};
        const int is_call = member(block, "type", &type) && string_is(type, "tool_use");
        if (!is_object(block) || !is_string(type)) {
            return missing_field(&at, "type", "missing or not a string", err);
        }
        if (in_calls && !is_call) {
            w_lit(w, "]}");
            in_calls = 0;
        }
        if (is_call) {
            if ((status = string_field(block, "name", &at, &v, err)) != NUCLEO_OK) return status;
            if (skip_calls) continue;
            if (!in_calls) {
                if (pieces++) w_lit(w, "\\n\\n");
                w_escaped_lit(w, "{\"tool_calls\":[");
                in_calls = 1;
            } else {
                w_lit(w, ",");
            }
            w_escaped_lit(w, "{\"name\":");
            w_json_as_text(w, v);
            w_escaped_lit(w, ",\"input\":");
            if (member(block, "input", &v) && !is_null(v)) {
                w_json_as_text(w, v);
            } else {
                w_escaped_lit(w, "{}");
            }
            w_escaped_lit(w, "}");
            continue;
        }
        if (pieces++) w_lit(w, "\\n\\n");
        if ((status = write_text_like(w, block, type, &at, &handled, err)) != NUCLEO_OK) {
            return status;
        }
        if (handled) continue;
        if (string_is(type, "tool_result")) {
            if ((status = write_result_as_text(w, block, &at, err)) != NUCLEO_OK) return status;
            continue;
        }
        return refuse_block(&at, type, err);
    }
    if (in_calls) w_escaped_lit(w, "]}");
    return NUCLEO_OK;
}

/* The fields of the provider request this dialect reads, checked. */
typedef struct request {
    span wire_model;
    int64_t max_tokens;
    span system_blocks; /* an array, or p == NULL */
    span turns;
} request;

static int32_t read_request(nucleo_string_view json, request* req, nucleo_error* err) {
    span root, v, prepared, model;
    if (!parse_document(json, &root) || !is_object(root)) {
        return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                    "the provider request is not a JSON object");
    }
    if (member(root, "schema_version", &v) && !(v.end - v.p == 1 && *v.p == '1')) {
        return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                    "provider request: schema_version: unsupported (this plugin reads version 1)");
    }
    if (!member(root, "model", &model) || !member(model, "wire_model", &req->wire_model) ||
        !is_string(req->wire_model) || req->wire_model.end - req->wire_model.p == 2) {
        return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                    "provider request: model.wire_model: a non-empty string is required");
    }
    if (!member(root, "max_tokens", &v) || !read_count(v, &req->max_tokens) ||
        req->max_tokens == 0) {
        return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                    "provider request: max_tokens: a positive integer is required (the resolved "
                    "output reserve)");
    }
    if (member(root, "stream", &v) && is_true(v)) {
        return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                    "provider request: stream: " DIALECT
                    " is not offered streamed (capabilities "
                    "say streaming false)");
    }
    if (!member(root, "prepared", &prepared) || !is_object(prepared)) {
        return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                    "provider request: prepared: a JSON object is required");
    }
    if (!member(prepared, "turns", &req->turns) || !is_array(req->turns)) {
        return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0, "prepared.turns: an array is required");
    }
    if (member(prepared, "tool_definitions", &v)) {
        cursor c;
        span first;
        if (!is_array(v)) {
            return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                        "prepared.tool_definitions: not an array");
        }
        c = open_container(v);
        if (next_element(&c, &first)) {
            return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                        "prepared.tool_definitions: " DIALECT
                        " has no tools parameter (native_tools "
                        "false): the definitions must arrive rendered as text");
        }
    }
    req->system_blocks.p = NULL;
    req->system_blocks.end = NULL;
    if (member(prepared, "system_blocks", &v) && !is_null(v)) {
        if (!is_array(v)) {
            return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                        "prepared.system_blocks: not an array");
        }
        req->system_blocks = v;
    }
    return NUCLEO_OK;
}

/* The HTTP request document: {"schema_version":1,"method","path","headers","body"}. */
static int32_t write_http_request(writer* w, const request* req, nucleo_error* err) {
    cursor c;
    span item, v;
    size_t turn = 0;
    int messages = 0;
    int32_t status;
    w_lit(w,
          "{\"schema_version\":1,\"method\":\"POST\",\"path\":\"/chat/completions\","
          "\"headers\":{\"content-type\":\"application/json\"},\"body\":{\"model\":");
    w_put(w, req->wire_model.p, (size_t)(req->wire_model.end - req->wire_model.p));
    w_lit(w, ",\"messages\":[");
    if (req->system_blocks.p != NULL) {
        where at;
        int pieces = 0;
        at.list = "system_blocks";
        at.turn = 0;
        c = open_container(req->system_blocks);
        for (at.block = 0; next_element(&c, &item); ++at.block) {
            int handled;
            if (!member(item, "type", &v) || !is_string(v)) {
                return missing_field(&at, "type", "missing or not a string", err);
            }
            w_lit(w, pieces++ ? "\\n\\n" : "{\"role\":\"system\",\"content\":\"");
            if ((status = write_text_like(w, item, v, &at, &handled, err)) != NUCLEO_OK) {
                return status;
            }
            if (!handled) return refuse_block(&at, v, err);
        }
        if (pieces) {
            w_lit(w, "\"}");
            messages = 1;
        }
    }
    c = open_container(req->turns);
    for (; next_element(&c, &item); ++turn) {
        span role, blocks;
        if (!member(item, "role", &role) ||
            !(string_is(role, "user") || string_is(role, "assistant"))) {
            return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                        "prepared.turns[%zu].role: must be \"user\" or \"assistant\"", turn);
        }
        if (!member(item, "blocks", &blocks) || !is_array(blocks)) {
            return fail(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                        "prepared.turns[%zu].blocks: an array is required", turn);
        }
        if (messages++) w_lit(w, ",");
        w_lit(w, "{\"role\":");
        w_put(w, role.p, (size_t)(role.end - role.p));
        w_lit(w, ",\"content\":\"");
        if ((status = write_turn_content(w, blocks, turn, err)) != NUCLEO_OK) return status;
        w_lit(w, "\"}");
    }
    /* The one field in which Acme differs from OpenAI. */
    w_lit(w, "],\"max_tokens\":");
    w_int(w, req->max_tokens);
    w_lit(w, "}}");
    return NUCLEO_OK;
}

/* ---- decode --------------------------------------------------------------------------------- */

/* The first bytes of a body (at most 200), quoted, control bytes shown as '.', so the one-line
 * error message stays one line. */
static void quote_body(nucleo_string_view body, char* out, size_t cap) {
    size_t n = body.size < 200 ? body.size : 200;
    size_t i, k = 0;
    if (n + 6 > cap) n = cap - 6;
    /* Never cut a UTF-8 character in two. */
    if (n < body.size) {
        while (n > 0 && ((unsigned char)body.data[n] & 0xC0) == 0x80) --n;
    }
    out[k++] = '"';
    for (i = 0; i < n; ++i) {
        const unsigned char c = (unsigned char)body.data[i];
        out[k++] = c < 0x20 ? '.' : (char)c;
    }
    out[k++] = '"';
    if (n < body.size) {
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[k] = '\0';
}

static int32_t protocol(nucleo_error* err, int32_t http_status, nucleo_string_view body,
                        const char* what) {
    char quoted[224];
    quote_body(body, quoted, sizeof quoted);
    return fail(err, NUCLEO_ERR_PROTOCOL, http_status,
                "the " DIALECT " answer (HTTP %d) %s; body starts: %s", (int)http_status, what,
                quoted);
}

/* docs/provider-abi-documents.md: the statuses a non-2xx answer maps to. */
static int32_t status_kind(int32_t http_status) {
    if (http_status == 429) return NUCLEO_ERR_RATE_LIMITED;
    if (http_status == 529 || http_status >= 500) return NUCLEO_ERR_OVERLOADED;
    if (http_status == 401 || http_status == 403) return NUCLEO_ERR_CONFIG;
    if (http_status == 404) return NUCLEO_ERR_NOT_FOUND;
    if (http_status >= 400) return NUCLEO_ERR_INVALID_ARGUMENT;
    return NUCLEO_ERR_PROTOCOL; /* 1xx, 3xx: not an answer this dialect has */
}

/* The vendor's error text: {"error":{"message",...}}, {"error":"text"} or {"message":"text"}. */
static int error_message(nucleo_string_view body, char* out, size_t cap) {
    span root, e, m;
    if (!parse_document(body, &root) || !is_object(root)) return 0;
    if (member(root, "error", &e) && is_string(e)) {
        unescape(e, out, cap);
        return 1;
    }
    if (!member(root, "error", &e)) e = root;
    if (!member(e, "message", &m) || !is_string(m)) return 0;
    unescape(m, out, cap);
    return 1;
}

static int32_t fail_with_error(int32_t http_status, nucleo_string_view body, nucleo_error* err) {
    char text[320];
    if (error_message(body, text, sizeof text)) {
        return fail(err, status_kind(http_status), http_status, DIALECT " answered HTTP %d: %s",
                    (int)http_status, text);
    }
    quote_body(body, text, sizeof text);
    return fail(err, status_kind(http_status), http_status,
                DIALECT " answered HTTP %d with a body that is not an error object: %s",
                (int)http_status, text);
}

static const char* stop_reason(span finish) {
    if (string_is(finish, "stop")) return "end_turn";
    if (string_is(finish, "length")) return "max_tokens";
    if (string_is(finish, "content_filter")) return "content_filter";
    if (string_is(finish, "tool_calls")) return "tool_use";
    return "other";
}

/* What a chat completion says, read and checked before anything is written. */
typedef struct answer {
    span model;   /* a string token, or p == NULL */
    span content; /* a string token, an array of parts, or p == NULL (null content) */
    span finish;
    int64_t prompt_tokens;
    int64_t completion_tokens;
    int64_t cached_tokens;
} answer;

static int32_t read_answer(int32_t http_status, nucleo_string_view body, answer* a,
                           nucleo_error* err) {
    span root, choices, choice, message, usage, v, details;
    cursor c;
    if (!parse_document(body, &root)) return protocol(err, http_status, body, "is not JSON");
    if (!is_object(root)) return protocol(err, http_status, body, "is not a JSON object");
    if (member(root, "error", &v) && !is_null(v)) {
        return protocol(err, http_status, body, "carries an error instead of a chat completion");
    }
    a->model.p = NULL;
    if (member(root, "model", &v) && is_string(v)) a->model = v;
    if (!member(root, "choices", &choices) || !is_array(choices)) {
        return protocol(err, http_status, body, "lacks choices");
    }
    c = open_container(choices);
    if (!next_element(&c, &choice)) return protocol(err, http_status, body, "lacks choices[0]");
    if (!member(choice, "message", &message) || !is_object(message)) {
        return protocol(err, http_status, body, "lacks choices[0].message");
    }
    a->content.p = NULL;
    if (member(message, "content", &v) && !is_null(v)) {
        if (!is_string(v) && !is_array(v)) {
            return protocol(err, http_status, body,
                            "has choices[0].message.content that is not a string");
        }
        a->content = v;
    }
    if (!member(choice, "finish_reason", &a->finish) || !is_string(a->finish)) {
        return protocol(err, http_status, body, "lacks choices[0].finish_reason");
    }
    if (!member(root, "usage", &usage) || !is_object(usage)) {
        return protocol(err, http_status, body, "lacks usage");
    }
    if (!member(usage, "prompt_tokens", &v) || !read_count(v, &a->prompt_tokens)) {
        return protocol(err, http_status, body, "lacks usage.prompt_tokens");
    }
    if (!member(usage, "completion_tokens", &v) || !read_count(v, &a->completion_tokens)) {
        return protocol(err, http_status, body, "lacks usage.completion_tokens");
    }
    a->cached_tokens = 0;
    if (member(usage, "prompt_tokens_details", &details) && member(details, "cached_tokens", &v)) {
        (void)read_count(v, &a->cached_tokens);
    }
    if (a->cached_tokens > a->prompt_tokens) a->cached_tokens = a->prompt_tokens;
    return NUCLEO_OK;
}

/* The answer's text: the content string, or the "text" of each part when the vendor answered
 * with content parts. Returns whether there is any. */
static int write_answer_text(writer* w, span content) {
    if (content.p == NULL) return 0;
    if (is_string(content)) {
        if (content.end - content.p == 2) return 0;
        if (w != NULL) w_inner(w, content);
        return 1;
    } else {
        cursor c = open_container(content);
        span part, text;
        int any = 0;
        while (next_element(&c, &part)) {
            if (member(part, "text", &text) && is_string(text) && text.end - text.p > 2) {
                if (w != NULL) w_inner(w, text);
                any = 1;
            }
        }
        return any;
    }
}

static void write_normalized(writer* w, const answer* a) {
    w_lit(w, "{\"schema_version\":1,\"model\":");
    if (a->model.p != NULL) {
        w_put(w, a->model.p, (size_t)(a->model.end - a->model.p));
    } else {
        w_lit(w, "\"\"");
    }
    w_lit(w, ",\"blocks\":[");
    if (write_answer_text(NULL, a->content)) {
        w_lit(w, "{\"type\":\"text\",\"text\":\"");
        write_answer_text(w, a->content);
        w_lit(w, "\"}");
    }
    w_lit(w, "],\"stop_reason\":\"");
    w_lit(w, stop_reason(a->finish));
    w_lit(w, "\",\"usage\":{\"input_tokens\":");
    w_int(w, a->prompt_tokens - a->cached_tokens);
    w_lit(w, ",\"output_tokens\":");
    w_int(w, a->completion_tokens);
    w_lit(w, ",\"cache_read_tokens\":");
    w_int(w, a->cached_tokens);
    /* The vendor neither reports nor bills cache writes apart. */
    w_lit(w, ",\"cache_write_tokens\":0}}");
}

/* ---- the provider ---------------------------------------------------------------------------- */

struct provider {
    int unused; /* encode and decode are pure: nothing to keep per instance */
};

static int32_t provider_create(nucleo_string_view config, nucleo_instance** out,
                               nucleo_error* err) {
    struct provider* p;
    span root;
    /* The instance's options from nucleo.yaml: none are read, but they must be an object. */
    if (config.size > 0 && (!parse_document(config, &root) || !is_object(root))) {
        return fail(err, NUCLEO_ERR_CONFIG, 0, "the instance configuration is not a JSON object");
    }
    p = (struct provider*)calloc(1, sizeof *p);
    if (p == NULL) return fail(err, NUCLEO_ERR_INTERNAL, 0, "out of memory");
    *out = (nucleo_instance*)p;
    return NUCLEO_OK;
}

static void provider_destroy(nucleo_instance* instance) {
    free(instance);
}

/* Thread rule (every slot below): callable concurrently on one instance; no state is shared. */
static int32_t provider_capabilities(nucleo_instance* instance, const nucleo_sink* out,
                                     nucleo_error* err) {
    static const char caps[] =
        "{\"schema_version\":1,\"dialect\":\"" DIALECT
        "\",\"native_tools\":false,"
        "\"caching\":false,\"streaming\":false,\"max_cache_breakpoints\":0,\"inputs\":[],"
        "\"auth\":\"bearer\"}";
    (void)instance;
    (void)err;
    return nucleo_sink_write(out, caps, sizeof caps - 1);
}

static int32_t provider_encode(nucleo_instance* instance, nucleo_string_view prepared_json,
                               const nucleo_sink* out, nucleo_error* err) {
    request req;
    writer w;
    int32_t status;
    (void)instance;
    if ((status = read_request(prepared_json, &req, err)) != NUCLEO_OK) return status;
    /* A dry run finds every refusal before a byte reaches the sink. */
    w_init(&w, NULL);
    if ((status = write_http_request(&w, &req, err)) != NUCLEO_OK) return status;
    w_init(&w, out);
    if ((status = write_http_request(&w, &req, err)) != NUCLEO_OK) return status;
    w_flush(&w);
    return w.status;
}

static int32_t provider_decode(nucleo_instance* instance, int32_t http_status,
                               nucleo_string_view headers_json, nucleo_string_view body,
                               const nucleo_sink* out, nucleo_error* err) {
    answer a;
    writer w;
    int32_t status;
    (void)instance;
    (void)headers_json; /* nothing streamed, nothing in the headers this dialect needs */
    if (http_status < 200 || http_status > 299) return fail_with_error(http_status, body, err);
    if ((status = read_answer(http_status, body, &a, err)) != NUCLEO_OK) return status;
    w_init(&w, out);
    write_normalized(&w, &a);
    w_flush(&w);
    return w.status;
}

/* Designated initializers: slots a newer plugin.h appends (1.2's decode_event) are NULL, which
 * the host reads as "not offered", and the plugin still compiles warning-free against it. */
static const nucleo_provider_factory provider_factory = {
    .struct_size = sizeof(nucleo_provider_factory),
    .create = provider_create,
    .destroy = provider_destroy,
    .capabilities = provider_capabilities,
    .encode = provider_encode,
    .decode = provider_decode};

/* Thread rule: any thread after init; static data only. */
static const void* get_factory(const char* id) {
    if (id != NULL && strcmp(id, NUCLEO_FACTORY_PROVIDER) == 0) return &provider_factory;
    return NULL;
}

/* ABI 1.4: the JSON Schema of the options create() accepts; the host checks an operator's
 * options against it before create and names the config's file:line on a mismatch. This
 * provider reads none of its own (the host adds its cache options).
 * Thread rule: any thread after init; static data only. */
static const char* options_schema(const char* id) {
    if (id != NULL && strcmp(id, NUCLEO_FACTORY_PROVIDER) == 0) {
        return "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}";
    }
    return NULL;
}

static const nucleo_plugin_entry entry = {
    sizeof(nucleo_plugin_entry),
    NUCLEO_PLUGIN_ABI_MAJOR,
    NUCLEO_PLUGIN_ABI_MINOR,
    "c-provider",
    "1.0.0",
    "Example C11 provider: the acme-chat dialect (OpenAI Chat Completions with max_tokens)",
    plugin_init,
    plugin_deinit,
    get_factory,
    options_schema};

NUCLEO_PLUGIN_EXPORT const nucleo_plugin_entry* nucleo_plugin_entry_v1(void) {
    return &entry;
}
