// The events a world schedules for itself, in the one tie order both worlds share: at equal times,
// batch completions, then finished startups and model loads, then timers (arrivals, pulled from
// the workload stream, come after all three); within a kind, the order they were scheduled.
#pragma once

#include <cstdint>
#include <vector>

#include "servelab/cluster/cluster_state.hpp"
#include "servelab/core/time.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::cluster {

enum class WorldEventKind : std::uint8_t { BatchDone = 0, TransitionDone = 1, Timer = 2 };

struct WorldEvent {
  Nanos time;
  WorldEventKind kind;
  std::int64_t seq;      // scheduling order, breaks ties within a kind
  std::int64_t payload;  // worker id or timer tag
  bool operator>(const WorldEvent& o) const { return o.before(*this); }
  bool before(const WorldEvent& o) const {
    if (time != o.time) return time < o.time;
    return order() < o.order();
  }
  // Kind, then scheduling order, in one comparable number (seq < 2^56).
  std::uint64_t order() const {
    return (std::uint64_t{static_cast<std::uint8_t>(kind)} << 56) | static_cast<std::uint64_t>(seq);
  }
};

// Earliest first: a 4-ary heap (half the levels of a binary one) of 128-bit keys (time, kind,
// seq) compared without branches, whose pop() is deferred so the common pop-then-push of a
// simulation step (a completion that starts the next batch) costs one sift instead of two. The
// order is total, so it pops exactly what std::priority_queue<WorldEvent> would.
class WorldEventQueue {
 public:
  bool empty() const { return heap_.size() == (pending_pop_ ? 1u : 0u); }
  std::size_t size() const { return heap_.size() - (pending_pop_ ? 1 : 0); }
  WorldEvent top() const {
    settle();
    const Entry& e = heap_.front();
    const auto hi = static_cast<std::uint64_t>(e.key >> 64), lo = static_cast<std::uint64_t>(e.key);
    return {static_cast<Nanos>(hi ^ kSignBit), static_cast<WorldEventKind>(lo >> 56),
            static_cast<std::int64_t>(lo & ((std::uint64_t{1} << 56) - 1)), e.payload};
  }
  void pop() {
    settle();
    pending_pop_ = true;
  }
  void push(const WorldEvent& event) {
    const Entry e{(Key{static_cast<std::uint64_t>(event.time) ^ kSignBit} << 64) | event.order(), event.payload};
    if (pending_pop_) {
      pending_pop_ = false;
      sift_down(e);
    } else {
      heap_.push_back(e);
      sift_up(heap_.size() - 1, e);
    }
  }

 private:
  __extension__ using Key = unsigned __int128;
  static constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;  // signed time -> unsigned order
  struct Entry {
    Key key;
    std::int64_t payload;
  };

  void settle() const {
    if (!pending_pop_) return;
    pending_pop_ = false;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
  }
  void sift_up(std::size_t i, const Entry& e) const {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(e.key < heap_[parent].key)) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  // Places `e` in the root's hole.
  void sift_down(const Entry& e) const {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      if (first + 4 <= n) {  // the common full node: selects, no branches
        best = heap_[first + 1].key < heap_[best].key ? first + 1 : best;
        best = heap_[first + 2].key < heap_[best].key ? first + 2 : best;
        best = heap_[first + 3].key < heap_[best].key ? first + 3 : best;
      } else {
        for (std::size_t c = first + 1; c < n; ++c) best = heap_[c].key < heap_[best].key ? c : best;
      }
      if (!(heap_[best].key < e.key)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }
  mutable std::vector<Entry> heap_;
  mutable bool pending_pop_ = false;
};

// Applies a due event to the state and calls the scheduler's hook, identically in both worlds.
// `batch_start` is when the finished batch started (BatchDone only); the event's time is its end.
void deliver(const WorldEvent& event, Nanos batch_start, ClusterState& state, sched::Scheduler& scheduler);

}  // namespace servelab::cluster
