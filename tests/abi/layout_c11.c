/* The live plugin.h compiled as C11 with -std=c11 -pedantic -Wall -Wextra -Werror (abi.4:
 * the header compiles as C11), holding every v1.0 offset of the layout table. */
#include "nucleo/plugin.h"

#define NUCLEO_ABI_ASSERT(expr, msg) _Static_assert(expr, msg)
#define NUCLEO_ABI_SIZE(type, v1_size) \
    _Static_assert(sizeof(type) >= (v1_size), #type " shrank below its v1.0 size")
#include "abi_layout.h"

/* Called from the C++ test so this translation unit is linked and its helpers run as C. */
int nucleo_abi_c11_error_roundtrip(void) {
    nucleo_error err;
    nucleo_error_init(&err);
    return nucleo_error_set(&err, NUCLEO_ERR_NOT_FOUND, 404, "c11 says not found") ==
                   NUCLEO_ERR_NOT_FOUND &&
               err.code == NUCLEO_ERR_NOT_FOUND && err.http_status == 404 &&
               err.message[0] == 'c'
               ? (int)sizeof(nucleo_plugin_entry)
               : -1;
}
