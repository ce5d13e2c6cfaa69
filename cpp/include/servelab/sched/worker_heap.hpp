// A min-heap of workers keyed by an integer, with each worker's place tracked so its key can
// change or it can leave in O(log W). Ties go to the lowest worker id, the rule the scanning
// policies used, so an indexed policy decides exactly as its scan did.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "servelab/sched/scheduler.hpp"

namespace servelab::sched {

class WorkerHeap {
 public:
  bool empty() const { return heap_.empty(); }
  bool contains(WorkerId w) const { return w < static_cast<WorkerId>(pos_.size()) && pos_[w] >= 0; }
  // The smallest (key, worker); the heap must not be empty.
  std::pair<std::int64_t, WorkerId> top() const { return {key_[heap_.front()], heap_.front()}; }

  // Inserts the worker or changes its key.
  void set(WorkerId w, std::int64_t key) {
    if (w >= static_cast<WorkerId>(pos_.size())) pos_.resize(w + 1, -1), key_.resize(w + 1, 0);
    if (pos_[w] < 0) {
      key_[w] = key;
      pos_[w] = static_cast<std::int32_t>(heap_.size());
      heap_.push_back(w);
      up(pos_[w]);
      return;
    }
    const std::int64_t old = key_[w];
    key_[w] = key;
    if (key < old) {
      up(pos_[w]);
    } else if (key > old) {
      down(pos_[w]);
    }
  }
  void erase(WorkerId w) {
    if (!contains(w)) return;
    const std::int32_t i = pos_[w];
    const WorkerId last = heap_.back();
    heap_.pop_back();
    pos_[w] = -1;
    if (last == w) return;
    heap_[i] = last;
    pos_[last] = i;
    up(i);
    down(pos_[last]);
  }

 private:
  bool less(WorkerId a, WorkerId b) const { return key_[a] < key_[b] || (key_[a] == key_[b] && a < b); }
  void place(std::int32_t i, WorkerId w) {
    heap_[i] = w;
    pos_[w] = i;
  }
  void up(std::int32_t i) {
    const WorkerId w = heap_[i];
    while (i > 0) {
      const std::int32_t parent = (i - 1) / 2;
      if (!less(w, heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, w);
  }
  void down(std::int32_t i) {
    const WorkerId w = heap_[i];
    const auto n = static_cast<std::int32_t>(heap_.size());
    for (;;) {
      std::int32_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && less(heap_[child + 1], heap_[child])) ++child;
      if (!less(heap_[child], w)) break;
      place(i, heap_[child]);
      i = child;
    }
    place(i, w);
  }

  std::vector<WorkerId> heap_;
  std::vector<std::int32_t> pos_;  // by worker, -1 when absent
  std::vector<std::int64_t> key_;  // by worker
};

}  // namespace servelab::sched
