// Workers grouped by (hardware, loaded models). Every worker of a class answers pick_model and
// predicted_latency alike, so an indexed policy asks once per class and keeps a WorkerHeap per
// class: a decision costs O(classes + log W) instead of a scan of every worker. For policies that
// do not load or unload models (a worker's class is fixed when it is first seen).
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "servelab/sched/scheduler.hpp"

namespace servelab::sched {

class WorkerClasses {
 public:
  // Classifies workers added since the last call; returns the first new worker id.
  WorkerId update(const ClusterView& view) {
    const auto first = static_cast<WorkerId>(class_.size());
    for (WorkerId w = first; w < view.num_workers(); ++w) {
      auto key = std::make_pair(view.hardware(w), view.models(w));
      auto [it, added] = ids_.try_emplace(std::move(key), static_cast<std::int32_t>(representative_.size()));
      if (added) representative_.push_back(w);
      class_.push_back(it->second);
    }
    return first;
  }
  std::int32_t size() const { return static_cast<std::int32_t>(representative_.size()); }
  std::int32_t of(WorkerId w) const { return class_[w]; }
  // The first worker seen in the class (its models and hardware speak for the class).
  WorkerId representative(std::int32_t c) const { return representative_[c]; }

 private:
  std::map<std::pair<HardwareId, std::vector<ModelId>>, std::int32_t> ids_;
  std::vector<std::int32_t> class_;       // by worker
  std::vector<WorkerId> representative_;  // by class
};

}  // namespace servelab::sched
