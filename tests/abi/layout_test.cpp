// The ABI layout table as C++20 static_asserts, plus runtime checks of what the C translation
// units computed (abi.2-4: a static_assert table of sizes and offsets of every ABI struct;
// the header compiles as C11 and as C++20).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "nucleo/errors.hpp"
#include "nucleo/plugin.h"

#define NUCLEO_ABI_ASSERT(expr, msg) static_assert(expr, msg)
#define NUCLEO_ABI_SIZE(type, v1_size) \
    static_assert(sizeof(type) >= (v1_size), #type " shrank below its v1.0 size")
#include "abi_layout.h"

extern "C" int nucleo_abi_c11_error_roundtrip(void);
extern "C" int nucleo_abi_frozen_entry_size(void);

namespace {

TEST(AbiLayout, CTranslationUnitsAgreeWithCxx) {
    // The C11 TU ran plugin.h's static inline helpers and measured the entry as C sees it.
    EXPECT_EQ(nucleo_abi_c11_error_roundtrip(), static_cast<int>(sizeof(nucleo_plugin_entry)));
    // "A frozen copy of each released header lives in tests": the 1.0 entry is a prefix of ours.
    EXPECT_LE(nucleo_abi_frozen_entry_size(), static_cast<int>(sizeof(nucleo_plugin_entry)));
}

TEST(AbiLayout, StatusCodesMapOntoErrorKinds) {
    // plugin.h: "every other code is code == (int)nucleo::ErrorKind + 1".
    EXPECT_EQ(NUCLEO_ERR_INVALID_ARGUMENT,
              static_cast<int>(nucleo::ErrorKind::kInvalidArgument) + 1);
    EXPECT_EQ(NUCLEO_ERR_NOT_FOUND, static_cast<int>(nucleo::ErrorKind::kNotFound) + 1);
    EXPECT_EQ(NUCLEO_ERR_NOT_IMPLEMENTED, static_cast<int>(nucleo::ErrorKind::kNotImplemented) + 1);
    EXPECT_EQ(NUCLEO_ERR_CONFIG, static_cast<int>(nucleo::ErrorKind::kConfig) + 1);
    EXPECT_EQ(NUCLEO_ERR_PLUGIN, static_cast<int>(nucleo::ErrorKind::kPlugin) + 1);
    EXPECT_EQ(NUCLEO_ERR_RATE_LIMITED, static_cast<int>(nucleo::ErrorKind::kRateLimited) + 1);
    EXPECT_EQ(NUCLEO_ERR_OVERLOADED, static_cast<int>(nucleo::ErrorKind::kOverloaded) + 1);
    EXPECT_EQ(NUCLEO_ERR_TRANSPORT, static_cast<int>(nucleo::ErrorKind::kTransport) + 1);
    EXPECT_EQ(NUCLEO_ERR_PROTOCOL, static_cast<int>(nucleo::ErrorKind::kProtocol) + 1);
    EXPECT_EQ(NUCLEO_ERR_UNCORRECTABLE, static_cast<int>(nucleo::ErrorKind::kUncorrectable) + 1);
    EXPECT_EQ(NUCLEO_ERR_CONTEXT_OVERFLOW,
              static_cast<int>(nucleo::ErrorKind::kContextOverflow) + 1);
    EXPECT_EQ(NUCLEO_ERR_OWNERSHIP, static_cast<int>(nucleo::ErrorKind::kOwnership) + 1);
    EXPECT_EQ(NUCLEO_ERR_INTERNAL, static_cast<int>(nucleo::ErrorKind::kInternal) + 1);
}

TEST(AbiLayout, IdsAreStable) {
    EXPECT_STREQ(NUCLEO_FACTORY_PROVIDER, "nucleo.provider/1");
    EXPECT_STREQ(NUCLEO_FACTORY_STORE, "nucleo.store/1");
    EXPECT_STREQ(NUCLEO_FACTORY_SUMMARIZER, "nucleo.summarizer/1");
    EXPECT_STREQ(NUCLEO_EXT_HOST_LOG, "nucleo.host.log/1");
    EXPECT_STREQ(NUCLEO_PLUGIN_ENTRY_SYMBOL, "nucleo_plugin_entry_v1");
}

TEST(AbiLayout, HasSlotReadsOnlyInsideTheOtherSidesStructSize) {
    // "a side reads a slot only if it lies inside the other side's struct_size and is non-NULL"
    nucleo_sink sink{};
    sink.write = [](void*, const char*, size_t) -> int32_t { return NUCLEO_OK; };
    sink.struct_size =
        static_cast<uint32_t>(offsetof(nucleo_sink, write));  // an older, shorter one
    const nucleo_sink* p = &sink;
    EXPECT_FALSE(NUCLEO_HAS_SLOT(p, nucleo_sink, write));
    sink.struct_size = sizeof(nucleo_sink);
    EXPECT_TRUE(NUCLEO_HAS_SLOT(p, nucleo_sink, write));
    sink.write = nullptr;
    EXPECT_FALSE(NUCLEO_HAS_SLOT(p, nucleo_sink, write));
    p = nullptr;
    EXPECT_FALSE(NUCLEO_HAS_SLOT(p, nucleo_sink, write));
}

TEST(AbiLayout, ErrorSetTruncatesAndRespectsASmallerErrorStruct) {
    nucleo_error err;
    nucleo_error_init(&err);
    const std::string longer(2000, 'y');
    EXPECT_EQ(nucleo_error_set(&err, NUCLEO_ERR_PLUGIN, 0, longer.c_str()), NUCLEO_ERR_PLUGIN);
    EXPECT_EQ(std::strlen(err.message), sizeof err.message - 1);

    // A caller from an imagined older ABI whose error ends before `message`: nothing written there.
    nucleo_error small;
    nucleo_error_init(&small);
    small.struct_size = static_cast<uint32_t>(offsetof(nucleo_error, message));
    small.message[0] = 'Q';
    nucleo_error_set(&small, NUCLEO_ERR_NOT_FOUND, 404, "must not land");
    EXPECT_EQ(small.code, NUCLEO_ERR_NOT_FOUND);
    EXPECT_EQ(small.http_status, 404);
    EXPECT_EQ(small.message[0], 'Q');
}

}  // namespace
