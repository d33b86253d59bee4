// A cost in US dollars as the runtime writes it into JSON (obs.109): the call records, the host's
// model-call answers and `nucleo ask --json` share it, so one cost reads the same everywhere.
#pragma once

#include <cmath>

namespace nucleo::internal {

/// `usd` rounded to 10 decimal places: a ten-billionth of a dollar, far below one token at any
/// listed price, so a sum of per-token prices is written as the number it means (0.00000705),
/// never as the binary noise of the sum (0.0000070499999999999986). A value too large to round
/// that finely (above about 900,000 dollars) or not finite is returned as it is.
[[nodiscard]] inline double rounded_usd(double usd) noexcept {
    constexpr double kScale = 1e10;
    const double scaled = usd * kScale;
    if (!std::isfinite(scaled) || std::fabs(scaled) >= 9.0e15) return usd;
    return std::round(scaled) / kScale;
}

}  // namespace nucleo::internal
