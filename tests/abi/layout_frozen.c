/* The frozen ABI 1.0 header (tests/abi/frozen/plugin_v1.h) equals the layout table exactly. */
#include "frozen/plugin_v1.h"

#define NUCLEO_ABI_ASSERT(expr, msg) _Static_assert(expr, msg)
#define NUCLEO_ABI_SIZE(type, v1_size) \
    _Static_assert(sizeof(type) == (v1_size), #type " size differs from ABI 1.0")
#include "abi_layout.h"

int nucleo_abi_frozen_entry_size(void) { return (int)sizeof(nucleo_plugin_entry); }
