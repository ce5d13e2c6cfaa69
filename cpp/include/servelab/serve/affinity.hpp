// Pinning the serving loop's workers to cores (sched_setaffinity), group by group.
//
// A CorePlan gives each worker group a list of cores: the group's k-th worker (counted from its
// first initial worker; a worker added during the run continues the count of its hardware's first
// group) is pinned to cores[k % size]. An empty list leaves the group's workers unpinned. Each
// worker pins its own thread before its first batch, so whatever threads its executor starts
// (an intra-op pool) inherit the affinity; what the kernel then reports is kept in a PinLog.
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

// One worker's pinning, as its thread applied it.
struct PinRecord {
  sched::WorkerId worker = -1;
  int group = -1;
  int core = -1;               // the core asked for
  std::vector<int> applied;    // sched_getaffinity after pinning (empty when it failed)
  std::int64_t thread_id = 0;  // the worker thread's kernel id (gettid), e.g. for resctrl's tasks
  std::string error;           // why pinning failed ("": it did not)
};

class PinLog {
 public:
  void add(PinRecord record);
  // By worker id.
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

// Pins the calling thread to `cores` and returns the set the kernel then reports; RuntimeError
// with the system's reason when the kernel refuses.
std::vector<int> pin_this_thread(std::span<const int> cores);

// Wraps `inner`: each executor it builds pins its worker's thread per `plan` before its first
// batch and records the outcome in `log`. A worker whose pinning fails fails its batches with the
// reason (the run goes on, as for any executor failure).
ExecutorFactory pinned_executors(ExecutorFactory inner, CorePlan plan, std::shared_ptr<PinLog> log);

}  // namespace servelab::serve
