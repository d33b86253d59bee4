// The nucleo::Error a call throws, for tests that look at its kind and message.
#pragma once

#include <gtest/gtest.h>

#include "nucleo/errors.hpp"

namespace test_support {

/// The error `fn` throws; fails the test when it throws none.
template <class Fn>
nucleo::Error error_of(Fn&& fn) {
    try {
        fn();
    } catch (const nucleo::Error& e) {
        return e;
    }
    ADD_FAILURE() << "no error was thrown";
    return nucleo::Error(nucleo::ErrorKind::kInternal, "none");
}

}  // namespace test_support
