// A WorkerHeap for non-negative keys that are mostly zero: the backlogs of idle workers (an idle
// worker starts what is queued for it at once, so its backlog is nearly always nothing). Workers
// keyed zero sit in a bitset, the rest in a heap; the top is the lowest id among the zeros when
// there is one, else the heap's: the same (key, worker) order as one WorkerHeap, but a change to
// a zero key is a bit set or cleared instead of a sift through log4(W) levels of a heap that, at
// thousands of workers, outgrows the second-level cache.
#pragma once

#include <cstdint>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/hierarchical_bitset.hpp"
#include "servelab/sched/worker_heap.hpp"

namespace servelab::sched {

class ZeroFirstWorkerHeap {
 public:
  bool empty() const { return zeros_ == 0 && rest_.empty(); }
  std::size_t size() const { return zeros_ + rest_.size(); }
  bool contains(WorkerId w) const { return is_zero(w) || rest_.contains(w); }
  // The smallest (key, worker); must not be empty.
  std::pair<std::int64_t, WorkerId> top() const {
    if (zeros_ > 0) return {0, static_cast<WorkerId>(zero_.find_next(0))};
    return rest_.top();
  }

  // Inserts the worker or changes its key (>= 0).
  void set(WorkerId w, std::int64_t key) {
    if (key < 0) [[unlikely]]
      throw ValueError(str("zero-first worker heap: key=", key, " for worker=", w, " is negative"));
    if (key == 0) {
      rest_.erase(w);
      add_zero(w);
    } else {
      remove_zero(w);
      rest_.set(w, key);
    }
  }
  void erase(WorkerId w) {
    remove_zero(w);
    rest_.erase(w);
  }

 private:
  bool is_zero(WorkerId w) const { return w >= 0 && zero_.contains(static_cast<std::size_t>(w)); }
  void add_zero(WorkerId w) {
    const auto i = static_cast<std::size_t>(w);
    if (i >= zero_.capacity()) zero_.resize(2 * i + 64);  // doubling: workers come one at a time
    if (zero_.contains(i)) return;
    zero_.insert(i);
    ++zeros_;
  }
  void remove_zero(WorkerId w) {
    if (!is_zero(w)) return;
    zero_.erase(static_cast<std::size_t>(w));
    --zeros_;
  }

  core::HierarchicalBitset zero_;  // workers keyed zero
  std::size_t zeros_ = 0;
  WorkerHeap rest_;  // workers keyed above zero
};

}  // namespace servelab::sched
