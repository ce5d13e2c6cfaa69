// Which worker group's executor (and pinning) a worker added during the run takes: the serving
// loop chooses a group for it and tells the ExecutorFactory while it calls it, so that an
// instance added with add_instance gets the executor of a group on its machine that holds its
// model (and not merely the first group of its hardware).
#pragma once

#include <cstddef>
#include <optional>

#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::serve {

// The worker group whose executor (and pinning) a worker added during the run takes. The serving
// loop chooses it (choose_added_worker_group) and sets it while it calls the ExecutorFactory for
// that worker, on the controller thread; a factory reads it there. nullopt outside such a call.
std::optional<std::size_t> added_worker_group();

// The group of the run's worker groups with the added worker's hardware that best matches it: one
// placed on the same machine group and holding its first model, else any holding that model, else
// one on the same machine group, else the first with its hardware; nullopt when none has it.
std::optional<std::size_t> choose_added_worker_group(const cluster::RunSpec& spec, const sched::ClusterView& view,
                                                     sched::WorkerId worker);

// Sets added_worker_group() for the scope's lifetime (the serving loop, around a factory call).
class AddedWorkerGroupScope {
 public:
  explicit AddedWorkerGroupScope(std::optional<std::size_t> group);
  ~AddedWorkerGroupScope();
  AddedWorkerGroupScope(const AddedWorkerGroupScope&) = delete;
  AddedWorkerGroupScope& operator=(const AddedWorkerGroupScope&) = delete;

 private:
  std::optional<std::size_t> previous_;
};

}  // namespace servelab::serve
