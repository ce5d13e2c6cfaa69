// Small decisions most policies share.
#pragma once

#include <cmath>
#include <limits>

#include "servelab/sched/scheduler.hpp"

namespace servelab::sched {

// The first model loaded on `worker` whose accuracy meets the query's floor and whose profile
// covers the query's size; -1 if none. (A model without a known accuracy meets only a 0 floor.)
inline ModelId pick_model(const ClusterView& view, WorkerId worker, const Query& query) {
  for (const ModelId m : view.models(worker)) {
    if (query.accuracy_floor > 0) {
      const double acc = view.profile().accuracy(m);
      if (std::isnan(acc) || acc < query.accuracy_floor) continue;
    }
    if (query.size <= view.max_batch(worker, m)) return m;
  }
  return -1;
}

// Whether the worker accepts work at all (not stopped or being removed).
inline bool is_live(const ClusterView& view, WorkerId worker) {
  const auto s = view.status(worker);
  return s != WorkerStatus::Stopped;
}

inline constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

}  // namespace servelab::sched
