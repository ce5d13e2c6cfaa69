// Helpers shared by the workload sources (not installed).
#pragma once

#include <charconv>
#include <cmath>
#include <string>

namespace servelab::workload::detail {

// The shortest text that reads back as the same double, in fixed notation where Python's repr()
// uses it (1e-4 <= |x| < 1e16) and scientific otherwise: 100, 0.5, 100000, 1e-05, 1e+16, nan, inf.
inline std::string num(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  const double magnitude = std::abs(value);
  const bool fixed = magnitude == 0 || (magnitude >= 1e-4 && magnitude < 1e16);
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value,
                                    fixed ? std::chars_format::fixed : std::chars_format::scientific);
  return std::string(buffer, result.ptr);
}

inline bool positive_finite(double x) { return std::isfinite(x) && x > 0; }
inline bool non_negative_finite(double x) { return std::isfinite(x) && x >= 0; }

}  // namespace servelab::workload::detail
