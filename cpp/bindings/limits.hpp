// Run limits from Python: count=None / horizon_s=None mean "no limit", but not both at once.
#pragma once

#include <cstdint>
#include <optional>

#include "converters.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/time.hpp"
#include "servelab/workload/arrivals.hpp"

namespace servelab::bindings {

struct Limits {
  std::int64_t count;
  Nanos horizon;
};

// Horizons from here on do not fit int64 nanoseconds (about 292 years).
inline constexpr double kLongestHorizonS = kNanosRange / kNanosPerSecond;

inline Limits to_limits(const std::optional<IntArg>& count_arg, std::optional<double> horizon_s) {
  Limits limits{workload::kUnlimitedCount, workload::kUnlimitedHorizon};
  const auto count = to_optional_int<std::int64_t>(count_arg, "count");
  if (count) {
    if (*count < 0) throw ValueError(str("count=", *count, " must be >= 0 (or None for no limit)"));
    limits.count = *count;
  }
  if (horizon_s) {
    const double h = *horizon_s;
    if (!(h >= 0)) throw ValueError(str("horizon_s=", h, " must be a non-negative number of seconds (or None)"));
    if (h < kLongestHorizonS) {
      limits.horizon = seconds_to_nanos(h, "horizon_s");
    } else if (!count) {
      // With a count, a horizon this long is simply no limit; alone it would never end the run.
      throw ValueError(str("horizon_s=", h, " is beyond the longest run int64 nanoseconds can time (", kLongestHorizonS,
                           " s, about 292 years) and count=None: give a shorter horizon_s or a count"));
    }
  }
  if (limits.count == workload::kUnlimitedCount && limits.horizon == workload::kUnlimitedHorizon) {
    throw ValueError("count=None and horizon_s=None: give count, horizon_s or both");
  }
  return limits;
}

}  // namespace servelab::bindings
