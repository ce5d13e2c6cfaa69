// A min-heap of workers keyed by an integer, with each worker's place tracked so its key can
// change or it can leave in O(log W). Ties go to the lowest worker id, the rule the scanning
// policies used, so an indexed policy decides exactly as its scan did.
//
// Laid out for thousands of workers: each entry packs (key, worker) into one unsigned word whose
// order is the heap's order, so a comparison reads the heap array only (no key lookup by worker)
// and compiles to a compare without branches; and it is 4-ary, so a change sifts through half the
// levels of a binary heap. The packing is the one parameter:
//   WorkerHeap: any int64 key (times, backlogs), 16-byte entries;
//   LoadHeap:   keys 0..2^33-1 (queue lengths, loads), 8-byte entries, twice as many per cache line.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::sched {

// Any int64 key: (key with its sign bit flipped, so it orders as unsigned) above a 32-bit id.
struct WideKeyPacking {
  __extension__ using Entry = unsigned __int128;
  static constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
  static Entry pack(std::int64_t key, WorkerId w) {
    return (Entry{static_cast<std::uint64_t>(key) ^ kSignBit} << 32) | static_cast<std::uint32_t>(w);
  }
  static std::int64_t key(Entry e) { return static_cast<std::int64_t>(static_cast<std::uint64_t>(e >> 32) ^ kSignBit); }
  static WorkerId worker(Entry e) { return static_cast<WorkerId>(static_cast<std::uint32_t>(e)); }
};

// A small non-negative key above a 31-bit id, in 64 bits.
struct SmallKeyPacking {
  using Entry = std::uint64_t;
  static constexpr int kIdBits = 31;  // worker ids are non-negative int32
  static constexpr std::int64_t kMaxKey = (std::int64_t{1} << 33) - 1;
  static Entry pack(std::int64_t key, WorkerId w) {
    if (key < 0 || key > kMaxKey) [[unlikely]]
      throw ValueError(str("worker heap: key=", key, " is outside 0..", kMaxKey));
    return (static_cast<Entry>(key) << kIdBits) | static_cast<Entry>(w);
  }
  static std::int64_t key(Entry e) { return static_cast<std::int64_t>(e >> kIdBits); }
  static WorkerId worker(Entry e) { return static_cast<WorkerId>(e & ((Entry{1} << kIdBits) - 1)); }
};

template <typename Packing>
class BasicWorkerHeap {
 public:
  using Entry = typename Packing::Entry;

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  bool contains(WorkerId w) const { return w >= 0 && w < static_cast<WorkerId>(pos_.size()) && pos_[w] >= 0; }
  // The smallest (key, worker); the heap must not be empty.
  std::pair<std::int64_t, WorkerId> top() const {
    return {Packing::key(heap_.front()), Packing::worker(heap_.front())};
  }

  // Inserts the worker or changes its key.
  void set(WorkerId w, std::int64_t key) {
    const Entry entry = Packing::pack(key, w);
    if (w >= static_cast<WorkerId>(pos_.size())) pos_.resize(static_cast<std::size_t>(w) + 1, -1);
    if (pos_[w] < 0) {
      heap_.push_back(entry);
      up(heap_.size() - 1, entry);
      return;
    }
    const auto i = static_cast<std::size_t>(pos_[w]);
    const Entry old = heap_[i];
    if (entry < old) {
      up(i, entry);
    } else if (old < entry) {
      down(i, entry);
    }
  }
  void erase(WorkerId w) {
    if (!contains(w)) return;
    const auto i = static_cast<std::size_t>(pos_[w]);
    const Entry last = heap_.back();
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
  void place(std::size_t i, Entry entry) {
    heap_[i] = entry;
    pos_[Packing::worker(entry)] = static_cast<std::int32_t>(i);
  }
  // Moves `entry` from the hole at i towards the root / the leaves until it fits.
  void up(std::size_t i, Entry entry) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(entry < heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, entry);
  }
  void down(std::size_t i, Entry entry) {
    const std::size_t n = heap_.size();
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      if (first + 4 <= n) {
        // The common full node: a tournament of index arithmetic, no branches (which side wins
        // is a coin toss when many workers share a key, so branches would mispredict).
        const std::size_t a = first + (heap_[first + 1] < heap_[first]);
        const std::size_t b = first + 2 + (heap_[first + 3] < heap_[first + 2]);
        best = a + (b - a) * (heap_[b] < heap_[a]);
      } else {
        for (std::size_t c = first + 1; c < n; ++c) best = heap_[c] < heap_[best] ? c : best;
      }
      if (!(heap_[best] < entry)) break;
      place(i, heap_[best]);
      i = best;
    }
    place(i, entry);
  }

  std::vector<Entry> heap_;
  std::vector<std::int32_t> pos_;  // by worker, -1 when absent
};

using WorkerHeap = BasicWorkerHeap<WideKeyPacking>;
using LoadHeap = BasicWorkerHeap<SmallKeyPacking>;

}  // namespace servelab::sched
