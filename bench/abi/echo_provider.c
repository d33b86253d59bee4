/* Bench fixture: a "nucleo.provider/1" whose encode writes its input to the sink unchanged --
 * the cheapest possible provider, so the bench measures the ABI crossing, not the work. */
#include <stdlib.h>
#include <string.h>

#include "nucleo/plugin.h"

static int32_t create(nucleo_string_view config, nucleo_instance** out, nucleo_error* err) {
    (void)config;
    *out = (nucleo_instance*)malloc(1);
    return *out != NULL ? NUCLEO_OK : nucleo_error_set(err, NUCLEO_ERR_INTERNAL, 0, "no memory");
}

static void destroy(nucleo_instance* instance) { free(instance); }

static int32_t capabilities(nucleo_instance* instance, const nucleo_sink* out, nucleo_error* err) {
    (void)instance;
    (void)err;
    return nucleo_sink_write(out, "{\"schema_version\":1}", 20);
}

static int32_t encode(nucleo_instance* instance, nucleo_string_view prepared,
                      const nucleo_sink* out, nucleo_error* err) {
    (void)instance;
    (void)err;
    return nucleo_sink_write(out, prepared.data, prepared.size);
}

static int32_t decode(nucleo_instance* instance, int32_t http_status, nucleo_string_view headers,
                      nucleo_string_view body, const nucleo_sink* out, nucleo_error* err) {
    (void)instance;
    (void)http_status;
    (void)headers;
    (void)err;
    return nucleo_sink_write(out, body.data, body.size);
}

static const nucleo_provider_factory factory = {sizeof(nucleo_provider_factory), create, destroy,
                                                capabilities, encode, decode, NULL, NULL, NULL};

static const void* get_factory(const char* id) {
    return strcmp(id, NUCLEO_FACTORY_PROVIDER) == 0 ? &factory : NULL;
}

static const nucleo_plugin_entry entry = {sizeof(nucleo_plugin_entry), NUCLEO_PLUGIN_ABI_MAJOR,
                                          NUCLEO_PLUGIN_ABI_MINOR, "bench-echo", "1.0",
                                          "bench fixture", NULL, NULL, get_factory, NULL};

NUCLEO_PLUGIN_EXPORT const nucleo_plugin_entry* nucleo_plugin_entry_v1(void) { return &entry; }
