// Small decisions most policies share.
#pragma once

#include <cmath>
#include <limits>

#include "servelab/sched/scheduler.hpp"

namespace servelab::sched {

// The first model loaded on `worker` whose accuracy meets the query's floor and whose profile
// covers the query's size; -1 if none. (A model without a known accuracy meets only a 0 floor.)
inline ModelId pick_model(const ClusterView& view, WorkerId worker, const Query& query) {
  return view.model_for(worker, query);
}

// Whether the worker accepts work at all (not stopped or being removed).
inline bool is_live(const ClusterView& view, WorkerId worker) {
  const auto s = view.status(worker);
  return s != WorkerStatus::Stopped;
}

inline constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

}  // namespace servelab::sched
