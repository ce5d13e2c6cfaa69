// Pinning the serving loop's workers to cores (sched_setaffinity), group by group.
//
// A CorePlan gives each worker group a list of cores: the group's k-th worker (counted from its
// first initial worker; a worker added during the run continues the count of its hardware's first
// group) is pinned to cores[k % size]. An empty list leaves the group's workers unpinned. Each
// worker pins its own thread before its first batch, so whatever threads its executor starts
// (an intra-op pool) inherit the affinity; what the kernel then reports is kept in a PinLog.
//
// Machines (RunSpec::machines) are pinned differently, by the serving loop itself: a
// MachineCores gives each declared machine a list of host cores (machines share none), and its
// instances divide that list by their "cores" knob (sched::kCoresKnob, set in a group's config or
// by set_config during the run). In the order the instances came (ClusterView::instances), each
// instance that is not stopped and has cores=n > 0 takes the next n cores of the list; instances
// without the knob (or 0) run on the cores no instance took, or on the whole list when every core
// is taken. The controller works out an instance's cores when it dispatches a batch, and the
// worker thread re-pins itself before that batch whenever they changed (a partition changed by
// set_config, an instance added or stopped), so threads its executor starts afterwards inherit
// them; a pool the executor started earlier keeps the affinity it had.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "servelab/serve/executor.hpp"

namespace servelab::serve {

struct CorePlan {
  std::vector<std::vector<int>> by_group;  // one list per worker group; empty: not pinned
};

// The host cores of each declared machine, by machine id (0..declared-1, group by group as
// ClusterView numbers them); an empty list (or a machine past the end) leaves its instances
// unpinned.
struct MachineCores {
  std::vector<std::vector<int>> by_machine;
  bool any() const {
    for (const auto& cores : by_machine) {
      if (!cores.empty()) return true;
    }
    return false;
  }
};

// One worker's pinning, as its thread applied it (a machine's instance: one record per change).
struct PinRecord {
  sched::WorkerId worker = -1;
  int group = -1;              // its worker group (-1: added during the run)
  int machine = -1;            // its declared machine (-1: pinned by its group's CorePlan)
  int core = -1;               // the core asked for (a machine's instance: the first of `cores`)
  std::vector<int> cores;      // the cores asked for
  Nanos at = -1;               // run time of the batch it was applied before (-1: not known)
  std::vector<int> applied;    // sched_getaffinity after pinning (empty when it failed)
  std::int64_t thread_id = 0;  // the worker thread's kernel id (gettid), e.g. for resctrl's tasks
  std::string error;           // why pinning failed ("": it did not)
};

class PinLog {
 public:
  void add(PinRecord record);
  // By worker id; one worker's records in the order they were added.
  std::vector<PinRecord> records() const;

 private:
  mutable std::mutex mutex_;
  std::vector<PinRecord> records_;
};

// The CPUs this process may run on (sched_getaffinity of the calling thread), ascending.
std::vector<int> allowed_cpus();

// ValueError naming the group, the core and the allowed set when a core is negative, not a CPU
// of this machine or not in the process's allowed set, or when there are not `groups` lists.
void check_core_plan(const CorePlan& plan, std::size_t groups);

// ValueError naming machines[i] (the machine group), the machine and the value when a list is
// given for a machine that does not exist, its length is not the machine's `cores`, a core is
// not a CPU of this process's allowed set, repeats, or is given to two machines.
void check_machine_cores(const MachineCores& cores, const cluster::RunSpec& spec);

// The cores `worker` (an instance on a declared machine) runs on now: `machine_cores` divided
// among its machine's instances as described above. Empty when `machine_cores` is.
std::vector<int> instance_cores(const sched::ClusterView& view, sched::WorkerId worker,
                                std::span<const int> machine_cores);

// The LLC partition `worker` (an instance on a declared machine) runs in, laid out per model, as
// Hera gives each co-located model a class of service: the instances of one model on a machine
// share one partition whose ways are the sum of their llc_ways knobs (stopped ones left out), the
// machine's models take consecutive ways in the order their first instance came, and the declared
// machines before it take theirs first (their llc_ways: they share the host's cache). ways = 0:
// the model holds no ways (the instance goes back to the root group).
struct LlcShare {
  std::int64_t first = 0;
  std::int64_t ways = 0;
};
LlcShare instance_llc_share(const sched::ClusterView& view, const cluster::RunSpec& spec, sched::WorkerId worker);

// Pins the calling thread to `cores` and returns the set the kernel then reports; RuntimeError
// with the system's reason when the kernel refuses.
std::vector<int> pin_this_thread(std::span<const int> cores);

// Wraps `inner`: each executor it builds pins its worker's thread per `plan` before its first
// batch and records the outcome in `log`. A worker whose pinning fails fails its batches with the
// reason (the run goes on, as for any executor failure).
ExecutorFactory pinned_executors(ExecutorFactory inner, CorePlan plan, std::shared_ptr<PinLog> log);

}  // namespace servelab::serve
