// Run limits from Python: count=None / horizon_s=None mean "no limit", but not both at once.
#pragma once

#include <cstdint>
#include <optional>

#include "servelab/core/errors.hpp"
#include "servelab/core/time.hpp"
#include "servelab/workload/arrivals.hpp"

namespace servelab::bindings {

struct Limits {
  std::int64_t count;
  Nanos horizon;
};

inline Limits to_limits(std::optional<std::int64_t> count, std::optional<double> horizon_s) {
  Limits limits{workload::kUnlimitedCount, workload::kUnlimitedHorizon};
  if (count) {
    if (*count < 0) throw ValueError(str("count=", *count, " must be >= 0 (or None for no limit)"));
    limits.count = *count;
  }
  if (horizon_s) {
    const double h = *horizon_s;
    if (!(h >= 0)) throw ValueError(str("horizon_s=", h, " must be a non-negative number of seconds (or None)"));
    if (h < 9.2e9) limits.horizon = seconds_to_nanos(h, "horizon_s");  // else: beyond Nanos, no limit
  }
  if (limits.count == workload::kUnlimitedCount && limits.horizon == workload::kUnlimitedHorizon) {
    throw ValueError("count=None and horizon_s=None: give count, horizon_s or both");
  }
  return limits;
}

}  // namespace servelab::bindings
