/*
 * nucleo-c-summarizer: a Nucleo plugin in plain C11 (a summarizer plugin in plain C11
 * that keeps the first sentence of each segment). It shows everything a C plugin author needs:
 * the one exported entry, struct_size on every struct, a factory by id, borrowed string views in,
 * a host-owned sink out, a caller-owned error, and logging through the host.
 *
 * Request  (nucleo.summarizer/1): {"schema_version":1, "segments":["...", ...]} or {"text":"..."}
 * Answer: {"schema_version":1, "summary":"<first sentences joined by a space>",
 *          "segments":["<first sentence of each segment>", ...], "summary_tokens":N}
 *
 * To stay dependency-free it scans JSON itself and copies string contents verbatim, escapes
 * included, so the answer is valid JSON whenever the request was. A sentence ends at '.', '!' or
 * '?' followed by a space, an escaped line break or tab, or the end of the segment; a segment
 * without such an end is kept whole. summary_tokens is approximate (bytes/4).
 */
#include <stdlib.h>
#include <string.h>

#include "nucleo/plugin.h"

/* ---- the host ---------------------------------------------------------------------------- */

static const nucleo_host* g_host = NULL;
static const nucleo_host_log* g_log = NULL;

static void say(int32_t level, const char* text) {
    if (g_host != NULL && NUCLEO_HAS_SLOT(g_log, nucleo_host_log, log)) {
        g_log->log(g_host->host_ctx, level, nucleo_sv(text));
    }
}

static int32_t plugin_init(const nucleo_host* host, nucleo_error* err) {
    (void)err;
    g_host = host;
    if (NUCLEO_HAS_SLOT(host, nucleo_host, get_extension)) {
        g_log = (const nucleo_host_log*)host->get_extension(host, NUCLEO_EXT_HOST_LOG);
    }
    say(NUCLEO_LOG_LEVEL_DEBUG, "c-summarizer ready");
    return NUCLEO_OK;
}

static void plugin_deinit(void) {
    g_host = NULL;
    g_log = NULL;
}

/* ---- a minimal JSON scanner over [p, end) ----------------------------------------------- */

static const char* skip_ws(const char* p, const char* end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
    return p;
}

/* p at an opening quote: returns the position after the closing quote, NULL when malformed. */
static const char* skip_string(const char* p, const char* end) {
    if (p >= end || *p != '"') return NULL;
    for (++p; p < end; ++p) {
        if (*p == '\\') {
            ++p;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Skips any JSON value; NULL when malformed. */
static const char* skip_value(const char* p, const char* end) {
    int depth = 0;
    p = skip_ws(p, end);
    do {
        if (p >= end) return NULL;
        if (*p == '"') {
            p = skip_string(p, end);
            if (p == NULL) return NULL;
        } else if (*p == '{' || *p == '[') {
            ++depth;
            ++p;
        } else if (*p == '}' || *p == ']') {
            --depth;
            ++p;
        } else if (depth == 0) {
            while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ') ++p;
        } else {
            ++p;
        }
    } while (depth > 0);
    return p;
}

/* The contents (between the quotes, escapes kept) of the first sentence of a string value. */
static nucleo_string_view first_sentence(const char* open_quote, const char* after_close) {
    const char* p = open_quote + 1;
    const char* stop = after_close - 1; /* the closing quote */
    nucleo_string_view s;
    /* Leading blanks, raw or escaped, are not part of the sentence. */
    for (;;) {
        if (p < stop && *p == ' ') {
            ++p;
        } else if (p + 1 < stop && p[0] == '\\' && (p[1] == 'n' || p[1] == 't' || p[1] == 'r')) {
            p += 2;
        } else {
            break;
        }
    }
    s.data = p;
    while (p < stop) {
        if (*p == '\\') {
            p += 2;
            continue;
        }
        if (*p == '.' || *p == '!' || *p == '?') {
            const char* q = p + 1;
            if (q >= stop || *q == ' ' ||
                (q + 1 < stop && q[0] == '\\' && (q[1] == 'n' || q[1] == 't' || q[1] == 'r'))) {
                s.size = (size_t)(q - s.data);
                return s;
            }
        }
        ++p;
    }
    s.size = (size_t)((p > stop ? stop : p) - s.data);
    return s;
}

/* Where the segments are: either the elements of "segments" or the one "text" string. */
typedef struct request {
    const char* segments; /* at '[' of "segments", or NULL */
    const char* text;     /* at the opening quote of "text", or NULL */
    const char* end;
} request;

static int32_t parse_request(nucleo_string_view json, request* req, nucleo_error* err) {
    const char* end = json.data + json.size;
    const char* p = skip_ws(json.data, end);
    req->segments = NULL;
    req->text = NULL;
    req->end = end;
    if (p >= end || *p != '{') {
        return nucleo_error_set(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                                "c-summarizer: the request is not a JSON object");
    }
    p = skip_ws(p + 1, end);
    while (p < end && *p != '}') {
        const char* key = p;
        const char* key_end = skip_string(p, end);
        const char* value;
        size_t key_len;
        if (key_end == NULL) break;
        key_len = (size_t)(key_end - key);
        p = skip_ws(key_end, end);
        if (p >= end || *p != ':') break;
        value = skip_ws(p + 1, end);
        p = skip_value(value, end);
        if (p == NULL) break;
        if (key_len == 10 && memcmp(key, "\"segments\"", 10) == 0 && *value == '[') {
            req->segments = value;
        } else if (key_len == 6 && memcmp(key, "\"text\"", 6) == 0 && *value == '"') {
            req->text = value;
        }
        p = skip_ws(p, end);
        if (p < end && *p == ',') p = skip_ws(p + 1, end);
    }
    if (p >= end || *p != '}') {
        return nucleo_error_set(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                                "c-summarizer: malformed JSON in the request");
    }
    if (req->segments == NULL && req->text == NULL) {
        return nucleo_error_set(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                                "c-summarizer: the request needs \"segments\" or \"text\"");
    }
    return NUCLEO_OK;
}

/* Calls visit(first sentence) for each segment; returns a status (non-string element: error). */
typedef int32_t (*visit_fn)(void* ctx, nucleo_string_view sentence, size_t index);

static int32_t each_segment(const request* req, visit_fn visit, void* ctx, nucleo_error* err) {
    const char* p;
    size_t index = 0;
    int32_t status;
    if (req->segments == NULL) {
        const char* close = skip_string(req->text, req->end);
        return visit(ctx, first_sentence(req->text, close), 0);
    }
    p = skip_ws(req->segments + 1, req->end);
    while (p < req->end && *p != ']') {
        const char* close;
        if (*p != '"') {
            return nucleo_error_set(err, NUCLEO_ERR_INVALID_ARGUMENT, 0,
                                    "c-summarizer: every element of \"segments\" must be a string");
        }
        close = skip_string(p, req->end);
        status = visit(ctx, first_sentence(p, close), index++);
        if (status != NUCLEO_OK) return status;
        p = skip_ws(close, req->end);
        if (p < req->end && *p == ',') p = skip_ws(p + 1, req->end);
    }
    return NUCLEO_OK;
}

/* ---- the summarizer ---------------------------------------------------------------------- */

static int32_t put(const nucleo_sink* out, const char* text) {
    return nucleo_sink_write(out, text, strlen(text));
}

typedef struct writer {
    const nucleo_sink* out;
    const char* separator; /* written before every item but the first */
    size_t bytes;
} writer;

static int32_t write_plain(void* ctx, nucleo_string_view s, size_t index) {
    writer* w = (writer*)ctx;
    int32_t status = NUCLEO_OK;
    if (index > 0) status = nucleo_sink_write(w->out, w->separator, strlen(w->separator));
    if (status == NUCLEO_OK) status = nucleo_sink_write(w->out, s.data, s.size);
    w->bytes += s.size + (index > 0 ? 1 : 0);
    return status;
}

static int32_t write_quoted(void* ctx, nucleo_string_view s, size_t index) {
    writer* w = (writer*)ctx;
    int32_t status = NUCLEO_OK;
    if (index > 0) status = nucleo_sink_write(w->out, ",", 1);
    if (status == NUCLEO_OK) status = nucleo_sink_write(w->out, "\"", 1);
    if (status == NUCLEO_OK) status = nucleo_sink_write(w->out, s.data, s.size);
    if (status == NUCLEO_OK) status = nucleo_sink_write(w->out, "\"", 1);
    return status;
}

static int32_t count_only(void* ctx, nucleo_string_view s, size_t index) {
    (void)ctx;
    (void)s;
    (void)index;
    return NUCLEO_OK;
}

struct summarizer {
    int unused;
};

static int32_t summarizer_create(nucleo_string_view config, nucleo_instance** out,
                                 nucleo_error* err) {
    struct summarizer* s;
    (void)config; /* nothing to configure */
    s = (struct summarizer*)calloc(1, sizeof *s);
    if (s == NULL) return nucleo_error_set(err, NUCLEO_ERR_INTERNAL, 0, "out of memory");
    *out = (nucleo_instance*)s;
    return NUCLEO_OK;
}

static void summarizer_destroy(nucleo_instance* instance) { free(instance); }

/* Thread rule: callable concurrently on one instance (it keeps no state). */
static int32_t summarizer_summarize(nucleo_instance* instance, nucleo_string_view request_json,
                                    const nucleo_sink* out, nucleo_error* err) {
    request req;
    writer w;
    int32_t status;
    char tail[64];
    size_t tokens;
    (void)instance;
    if ((status = parse_request(request_json, &req, err)) != NUCLEO_OK) return status;
    /* Validate every segment before writing anything. */
    if ((status = each_segment(&req, count_only, NULL, err)) != NUCLEO_OK) return status;

    w.out = out;
    w.separator = " ";
    w.bytes = 0;
    status = put(out, "{\"schema_version\":1,\"summary\":\"");
    if (status == NUCLEO_OK) status = each_segment(&req, write_plain, &w, err);
    if (status == NUCLEO_OK) status = put(out, "\",\"segments\":[");
    if (status == NUCLEO_OK) status = each_segment(&req, write_quoted, &w, err);
    if (status != NUCLEO_OK) return status;
    tokens = (w.bytes + 3) / 4;
    {
        /* No snprintf dependency on locale: write the number by hand. */
        char digits[24];
        int n = 0;
        size_t len;
        do {
            digits[n++] = (char)('0' + (int)(tokens % 10));
            tokens /= 10;
        } while (tokens > 0 && n < (int)sizeof digits);
        strcpy(tail, "],\"summary_tokens\":");
        len = strlen(tail);
        while (n > 0) tail[len++] = digits[--n];
        tail[len++] = '}';
        tail[len] = '\0';
    }
    return put(out, tail);
}

/* Designated initializers: slots a newer plugin.h appends stay NULL ("not offered") and the
 * plugin still compiles warning-free against it. */
static const nucleo_summarizer_factory summarizer_factory = {
    .struct_size = sizeof(nucleo_summarizer_factory),
    .create = summarizer_create,
    .destroy = summarizer_destroy,
    .summarize = summarizer_summarize};

/* Thread rule: any thread after init; static data only. */
static const void* get_factory(const char* id) {
    if (id != NULL && strcmp(id, NUCLEO_FACTORY_SUMMARIZER) == 0) return &summarizer_factory;
    return NULL;
}

/* ABI 1.4: the JSON Schema of the options create() accepts; the host checks an operator's
 * options against it before create and names the config's file:line on a mismatch. This
 * summarizer takes none.
 * Thread rule: any thread after init; static data only. */
static const char* options_schema(const char* id) {
    if (id != NULL && strcmp(id, NUCLEO_FACTORY_SUMMARIZER) == 0) {
        return "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {}}";
    }
    return NULL;
}

static const nucleo_plugin_entry entry = {
    sizeof(nucleo_plugin_entry),
    NUCLEO_PLUGIN_ABI_MAJOR,
    NUCLEO_PLUGIN_ABI_MINOR,
    "c-summarizer",
    "1.0.0",
    "Example C11 summarizer: keeps the first sentence of each segment",
    plugin_init,
    plugin_deinit,
    get_factory,
    options_schema};

NUCLEO_PLUGIN_EXPORT const nucleo_plugin_entry* nucleo_plugin_entry_v1(void) { return &entry; }
