// A query: one request from one application, carrying `size` items (its request batch).
#pragma once

#include <cmath>
#include <cstdint>

#include "servelab/core/time.hpp"

namespace servelab::workload {

using QueryId = std::int64_t;  // dense: the i-th generated query has id i

struct Query {
  QueryId id = 0;
  std::int32_t app = 0;      // index into the workload's applications
  std::int32_t size = 1;     // items in the request (>= 1)
  Nanos arrival = 0;         // absolute, from t=0
  Nanos deadline = 0;        // arrival + the application's SLO
  float accuracy_floor = 0;  // the lowest model accuracy the application accepts (0: any)
};

// An application's accuracy floor as a query carries it (32 bits), rounded down, never up: a model
// whose accuracy equals the floor (as a double) must pass `accuracy >= floor`, and rounding 0.749
// to the nearest float (0.74900001...) ruled such a model out.
inline float stored_accuracy_floor(double floor) {
  float f = static_cast<float>(floor);
  if (static_cast<double>(f) > floor) f = std::nextafter(f, 0.0f);
  return f;
}

}  // namespace servelab::workload
