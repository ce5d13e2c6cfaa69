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

// Nanos hold about +-292 years: 9.2e18 ns, 9.2e9 s.
inline constexpr double kNanosRange = 9.2e18;

namespace detail {

// `seconds` as whole nanoseconds, rounded to nearest. ValueError naming `field` for NaN and
// infinities, and for finite values beyond what int64 ns can hold; errors show `given`, the value
// as the caller passed it, in `unit` (units_per_second of them make a second).
inline Nanos to_nanos(double seconds, double given, const char* field, const char* unit, double units_per_second) {
  const double ns = std::round(seconds * static_cast<double>(kNanosPerSecond));
  if (std::isfinite(ns) && std::abs(ns) < kNanosRange) return static_cast<Nanos>(ns);
  if (!std::isfinite(given)) throw ValueError(str(field, "=", given, " is not a finite time in ", unit));
  const double limit = kNanosRange / static_cast<double>(kNanosPerSecond) * units_per_second;
  throw ValueError(str(field, "=", given, " is finite but beyond the range of int64 nanoseconds: |", field,
                       "| must be below ", limit, " ", unit, " (about 292 years)"));
}

}  // namespace detail

// Seconds to nanoseconds, rounded to nearest. Throws ValueError naming `field` for NaN, infinite
// or out-of-range values (about +-292 years fit).
inline Nanos seconds_to_nanos(double seconds, const char* field = "seconds") {
  return detail::to_nanos(seconds, seconds, field, "seconds", 1.0);
}

// Milliseconds to nanoseconds (through seconds, as always, so that rounding is unchanged); errors
// show the value in ms, as `field` (e.g. slo_ms) was given.
inline Nanos millis_to_nanos(double millis, const char* field = "ms") {
  return detail::to_nanos(millis / 1e3, millis, field, "ms", 1e3);
}

inline constexpr double nanos_to_seconds(Nanos ns) { return static_cast<double>(ns) / kNanosPerSecond; }
inline constexpr double nanos_to_millis(Nanos ns) { return static_cast<double>(ns) / kNanosPerMilli; }

}  // namespace servelab
