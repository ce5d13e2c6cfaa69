// A min-heap of workers keyed by a small non-negative integer (a load: queued plus running), the
// interface of sched::WorkerHeap with the same order (key, then lowest worker id) but laid out for
// thousands of workers: each entry packs (key, worker) in one 64-bit word, so a comparison reads
// the heap array only (no key lookup by worker), and it is 4-ary, so a change sifts through half
// the levels. With 10,000 workers WorkerHeap's sifts were a sixth of jsq's time per query.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::sched {

class LoadHeap {
 public:
  static constexpr std::int64_t kMaxKey = (std::int64_t{1} << 33) - 1;

  bool empty() const { return heap_.empty(); }
  bool contains(WorkerId w) const { return w < static_cast<WorkerId>(pos_.size()) && pos_[w] >= 0; }
  // The smallest (key, worker); the heap must not be empty.
  std::pair<std::int64_t, WorkerId> top() const {
    return {static_cast<std::int64_t>(heap_.front() >> kIdBits), worker_of(heap_.front())};
  }

  // Inserts the worker or changes its key (0 <= key <= kMaxKey).
  void set(WorkerId w, std::int64_t key) {
    if (key < 0 || key > kMaxKey) throw ValueError(str("worker heap: key=", key, " is outside 0..", kMaxKey));
    if (w >= static_cast<WorkerId>(pos_.size())) pos_.resize(static_cast<std::size_t>(w) + 1, -1);
    const std::uint64_t entry = (static_cast<std::uint64_t>(key) << kIdBits) | static_cast<std::uint64_t>(w);
    if (pos_[w] < 0) {
      heap_.push_back(entry);
      up(heap_.size() - 1, entry);
      return;
    }
    const auto i = static_cast<std::size_t>(pos_[w]);
    const std::uint64_t old = heap_[i];
    if (entry < old) {
      up(i, entry);
    } else if (entry > old) {
      down(i, entry);
    }
  }
  void erase(WorkerId w) {
    if (!contains(w)) return;
    const auto i = static_cast<std::size_t>(pos_[w]);
    const std::uint64_t last = heap_.back();
    heap_.pop_back();
    pos_[w] = -1;
    if (i == heap_.size()) return;  // it was the last entry
    if (last < heap_[i]) {
      up(i, last);
    } else {
      down(i, last);
    }
  }

 private:
  static constexpr int kIdBits = 31;  // worker ids are non-negative int32
  static WorkerId worker_of(std::uint64_t entry) {
    return static_cast<WorkerId>(entry & ((std::uint64_t{1} << kIdBits) - 1));
  }
  void place(std::size_t i, std::uint64_t entry) {
    heap_[i] = entry;
    pos_[worker_of(entry)] = static_cast<std::int32_t>(i);
  }
  // Moves `entry` from the hole at i towards the root / the leaves until it fits.
  void up(std::size_t i, std::uint64_t entry) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(entry < heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, entry);
  }
  void down(std::size_t i, std::uint64_t entry) {
    const std::size_t n = heap_.size();
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < end; ++c) best = heap_[c] < heap_[best] ? c : best;
      if (!(heap_[best] < entry)) break;
      place(i, heap_[best]);
      i = best;
    }
    place(i, entry);
  }

  std::vector<std::uint64_t> heap_;
  std::vector<std::int32_t> pos_;  // by worker, -1 when absent
};

}  // namespace servelab::sched
