// Time inside servelab is int64 nanoseconds: exact arithmetic, no float drift, and event ties
// that compare equal deterministically. The Python API speaks seconds (or says _ms in a name).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "servelab/core/errors.hpp"

namespace servelab {

using Nanos = std::int64_t;

inline constexpr Nanos kNanosPerMicro = 1'000;
inline constexpr Nanos kNanosPerMilli = 1'000'000;
inline constexpr Nanos kNanosPerSecond = 1'000'000'000;

// Seconds to nanoseconds, rounded to nearest. Throws ValueError naming `field` for NaN, infinite
// or out-of-range values (about +-292 years fit).
inline Nanos seconds_to_nanos(double seconds, const char* field = "seconds") {
  const double ns = std::round(seconds * static_cast<double>(kNanosPerSecond));
  if (!std::isfinite(ns) || std::abs(ns) >= 9.2e18) {
    throw ValueError(str(field, "=", seconds, " is not a finite time in seconds"));
  }
  return static_cast<Nanos>(ns);
}

inline Nanos millis_to_nanos(double millis, const char* field = "ms") { return seconds_to_nanos(millis / 1e3, field); }

inline constexpr double nanos_to_seconds(Nanos ns) { return static_cast<double>(ns) / kNanosPerSecond; }
inline constexpr double nanos_to_millis(Nanos ns) { return static_cast<double>(ns) / kNanosPerMilli; }

}  // namespace servelab
