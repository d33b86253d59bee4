/* The ABI v1 layout table (x86_64 / LP64): every struct's field offsets and size as of the minor
 * that introduced it (1.0 unless marked).
 * Included by a C11 translation unit against the live header (layout_c11.c), by one against the
 * frozen copy (layout_frozen.c) and by a C++20 one (layout_test.cpp): the live header must keep
 * every v1.0 offset, and the frozen one must equal this table exactly.
 *
 * The includer defines NUCLEO_ABI_ASSERT(expr, msg) and NUCLEO_ABI_SIZE(type, v1_size): the
 * frozen check demands sizeof(type) == v1_size, the live one sizeof(type) >= v1_size (a later
 * minor appends slots). A static_assert table of sizes and offsets of every ABI struct
 * (abi.2, abi.3). */
#ifndef NUCLEO_TESTS_ABI_LAYOUT_H
#define NUCLEO_TESTS_ABI_LAYOUT_H

#include <stddef.h>

#define NUCLEO_ABI_AT(type, field, off) \
    NUCLEO_ABI_ASSERT(offsetof(type, field) == (off), #type "." #field " moved")

#if defined(__x86_64__) && defined(__LP64__)

NUCLEO_ABI_ASSERT(sizeof(void*) == 8 && sizeof(size_t) == 8, "the table is for LP64");

/* Borrowed string view: two words, no struct_size (it never grows). */
NUCLEO_ABI_AT(nucleo_string_view, data, 0);
NUCLEO_ABI_AT(nucleo_string_view, size, 8);
NUCLEO_ABI_ASSERT(sizeof(nucleo_string_view) == 16, "nucleo_string_view is two words forever");

NUCLEO_ABI_AT(nucleo_sink, struct_size, 0);
NUCLEO_ABI_AT(nucleo_sink, ctx, 8);
NUCLEO_ABI_AT(nucleo_sink, write, 16);
NUCLEO_ABI_SIZE(nucleo_sink, 24);

NUCLEO_ABI_AT(nucleo_error, struct_size, 0);
NUCLEO_ABI_AT(nucleo_error, code, 4);
NUCLEO_ABI_AT(nucleo_error, http_status, 8);
NUCLEO_ABI_AT(nucleo_error, message, 12);
NUCLEO_ABI_ASSERT(sizeof(((nucleo_error*)0)->message) == 512, "nucleo_error.message size");
NUCLEO_ABI_SIZE(nucleo_error, 524);

NUCLEO_ABI_AT(nucleo_host, struct_size, 0);
NUCLEO_ABI_AT(nucleo_host, abi_major, 4);
NUCLEO_ABI_AT(nucleo_host, abi_minor, 8);
NUCLEO_ABI_AT(nucleo_host, host_ctx, 16);
NUCLEO_ABI_AT(nucleo_host, get_extension, 24);
NUCLEO_ABI_SIZE(nucleo_host, 32);

NUCLEO_ABI_AT(nucleo_host_log, struct_size, 0);
NUCLEO_ABI_AT(nucleo_host_log, log, 8);
NUCLEO_ABI_SIZE(nucleo_host_log, 16);

NUCLEO_ABI_AT(nucleo_plugin_entry, struct_size, 0);
NUCLEO_ABI_AT(nucleo_plugin_entry, abi_major, 4);
NUCLEO_ABI_AT(nucleo_plugin_entry, abi_minor, 8);
NUCLEO_ABI_AT(nucleo_plugin_entry, name, 16);
NUCLEO_ABI_AT(nucleo_plugin_entry, version, 24);
NUCLEO_ABI_AT(nucleo_plugin_entry, description, 32);
NUCLEO_ABI_AT(nucleo_plugin_entry, init, 40);
NUCLEO_ABI_AT(nucleo_plugin_entry, deinit, 48);
NUCLEO_ABI_AT(nucleo_plugin_entry, get_factory, 56);
NUCLEO_ABI_SIZE(nucleo_plugin_entry, 64);

NUCLEO_ABI_AT(nucleo_summarizer_factory, struct_size, 0);
NUCLEO_ABI_AT(nucleo_summarizer_factory, create, 8);
NUCLEO_ABI_AT(nucleo_summarizer_factory, destroy, 16);
NUCLEO_ABI_AT(nucleo_summarizer_factory, summarize, 24);
NUCLEO_ABI_SIZE(nucleo_summarizer_factory, 32);

NUCLEO_ABI_AT(nucleo_provider_factory, struct_size, 0);
NUCLEO_ABI_AT(nucleo_provider_factory, create, 8);
NUCLEO_ABI_AT(nucleo_provider_factory, destroy, 16);
NUCLEO_ABI_AT(nucleo_provider_factory, capabilities, 24);
NUCLEO_ABI_AT(nucleo_provider_factory, encode, 32);
NUCLEO_ABI_AT(nucleo_provider_factory, decode, 40);
NUCLEO_ABI_SIZE(nucleo_provider_factory, 48);

NUCLEO_ABI_AT(nucleo_store_factory, struct_size, 0);
NUCLEO_ABI_AT(nucleo_store_factory, create, 8);
NUCLEO_ABI_AT(nucleo_store_factory, destroy, 16);
NUCLEO_ABI_AT(nucleo_store_factory, capabilities, 24);
NUCLEO_ABI_AT(nucleo_store_factory, create_conversation, 32);
NUCLEO_ABI_AT(nucleo_store_factory, update_conversation, 40);
NUCLEO_ABI_AT(nucleo_store_factory, load_conversation, 48);
NUCLEO_ABI_AT(nucleo_store_factory, delete_conversation, 56);
NUCLEO_ABI_AT(nucleo_store_factory, list_conversations, 64);
NUCLEO_ABI_AT(nucleo_store_factory, version_history, 72);
NUCLEO_ABI_AT(nucleo_store_factory, load_version, 80);
NUCLEO_ABI_AT(nucleo_store_factory, session_get, 88);
NUCLEO_ABI_AT(nucleo_store_factory, session_put, 96);
NUCLEO_ABI_AT(nucleo_store_factory, session_invalidate, 104);
NUCLEO_ABI_AT(nucleo_store_factory, lease, 112);
NUCLEO_ABI_SIZE(nucleo_store_factory, 120);

/* 1.2: nucleo_provider_factory.decode_event, appended after decode. */
#if NUCLEO_PLUGIN_ABI_MINOR >= 2
NUCLEO_ABI_AT(nucleo_provider_factory, decode_event, 48);
#endif

/* 1.3: nucleo_provider_factory.encode_parts, appended after decode_event. */
#if NUCLEO_PLUGIN_ABI_MINOR >= 3
NUCLEO_ABI_AT(nucleo_provider_factory, encode_parts, 56);
#endif

/* 1.4: nucleo_provider_factory.encode_split, appended after encode_parts (abi.108). */
#if NUCLEO_PLUGIN_ABI_MINOR >= 4
NUCLEO_ABI_AT(nucleo_provider_factory, encode_split, 64);
/* 1.4: nucleo_plugin_entry.options_schema, appended after get_factory (abi.109). */
NUCLEO_ABI_AT(nucleo_plugin_entry, options_schema, 64);
#endif

/* 1.5: nucleo_store_factory.session_apply, appended after lease (abi.128). */
#if NUCLEO_PLUGIN_ABI_MINOR >= 5
NUCLEO_ABI_AT(nucleo_store_factory, session_apply, 120);
#endif

/* 1.7: nucleo_store_factory.latest_version, appended after session_apply (abi.135). */
#if NUCLEO_PLUGIN_ABI_MINOR >= 7
NUCLEO_ABI_AT(nucleo_store_factory, latest_version, 128);
#endif

/* 1.1: "nucleo.host.model_call/1" (absent from the frozen 1.0 header). */
#if NUCLEO_PLUGIN_ABI_MINOR >= 1
NUCLEO_ABI_AT(nucleo_host_model_call, struct_size, 0);
NUCLEO_ABI_AT(nucleo_host_model_call, call, 8);
NUCLEO_ABI_SIZE(nucleo_host_model_call, 16);
#endif

#endif /* x86_64 LP64 */

/* Values that cross the boundary as numbers: pinned on every platform. */
NUCLEO_ABI_ASSERT(NUCLEO_PLUGIN_ABI_MAJOR == 1, "this table describes ABI major 1");
NUCLEO_ABI_ASSERT(NUCLEO_OK == 0, "NUCLEO_OK");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_INVALID_ARGUMENT == 1, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_NOT_FOUND == 2, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_NOT_IMPLEMENTED == 3, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_CONFIG == 4, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_PLUGIN == 5, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_RATE_LIMITED == 6, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_OVERLOADED == 7, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_TRANSPORT == 8, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_PROTOCOL == 9, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_UNCORRECTABLE == 10, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_CONTEXT_OVERFLOW == 11, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_OWNERSHIP == 12, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_ERR_INTERNAL == 13, "status code");
NUCLEO_ABI_ASSERT(NUCLEO_LOG_LEVEL_TRACE == 0 && NUCLEO_LOG_LEVEL_ERROR == 4, "log levels");

#endif /* NUCLEO_TESTS_ABI_LAYOUT_H */
