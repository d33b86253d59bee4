// A canned answer for the emulator: the header x-emulator-reply carries the body, base64, and
// the emulator returns it (HTTP 200) once it has checked the request like any call.
#pragma once

#include <string>
#include <string_view>

#include "nucleo/transport.hpp"

namespace nucleo::canned {

inline std::string base64(std::string_view in) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
        const unsigned n = (static_cast<unsigned char>(in[i]) << 16U) |
                           (static_cast<unsigned char>(in[i + 1]) << 8U) |
                           static_cast<unsigned char>(in[i + 2]);
        for (unsigned shift : {18U, 12U, 6U, 0U}) out += kAlphabet[(n >> shift) & 63U];
    }
    if (i < in.size()) {
        unsigned n = static_cast<unsigned char>(in[i]) << 16U;
        if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8U;
        out += kAlphabet[(n >> 18U) & 63U];
        out += kAlphabet[(n >> 12U) & 63U];
        out += i + 1 < in.size() ? kAlphabet[(n >> 6U) & 63U] : '=';
        out += '=';
    }
    return out;
}

/// The request headers that make the emulator answer with `body`.
inline HttpHeaders reply(std::string_view body) {
    return {{"x-emulator-reply", base64(body)}};
}

}  // namespace nucleo::canned
