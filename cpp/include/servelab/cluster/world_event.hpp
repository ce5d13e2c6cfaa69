// The events a world schedules for itself, in the one tie order both worlds share: at equal times,
// batch completions, then finished startups and model loads, then timers (arrivals, pulled from
// the workload stream, come after all three); within a kind, the order they were scheduled.
#pragma once

#include <algorithm>
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

// Earliest first, in two parts: a lane (a ring buffer) for events scheduled after every event
// already in it, and a 4-ary heap for the rest. Most simulations schedule in order (with a fixed
// service time every completion comes after the ones already pending), so most events never enter
// the heap: O(1) instead of O(log n). The heap (half the levels of a binary one) holds 128-bit
// keys (time, kind, seq) compared without branches, and its pop() is deferred so the common
// pop-then-push of a simulation step costs one sift instead of two. The order is total and each
// part is sorted, so it pops exactly what std::priority_queue<WorldEvent> would.
class WorldEventQueue {
 public:
  bool empty() const { return size() == 0; }
  std::size_t size() const { return heap_.size() - (pending_pop_ ? 1 : 0) + lane_count_; }
  WorldEvent top() const {
    settle();
    return decode(front());
  }
  // The earliest event when every pending one is in the lane (nothing in the heap to settle),
  // written field by field to `out`; false when the heap holds events or nothing is pending.
  // Right after a pop it tells the next event without the work of top().
  bool lane_top(WorldEvent& out) const {
    if (!heap_.empty() || lane_count_ == 0) return false;
    const Entry& e = lane_[lane_head_];
    const auto hi = static_cast<std::uint64_t>(e.key >> 64), lo = static_cast<std::uint64_t>(e.key);
    out.time = static_cast<Nanos>(hi ^ kSignBit);
    out.kind = static_cast<WorldEventKind>(lo >> 56);
    out.seq = static_cast<std::int64_t>(lo & ((std::uint64_t{1} << 56) - 1));
    out.payload = e.payload;
    return true;
  }
  // Right after pop(): the payload of the event that will be earliest once the pop settles, when
  // it is a batch's end (and no earlier event is pushed first), else -1: a hint, for fetching
  // that worker's data while the popped event is handled. The settled root is the least of the
  // popped root's children (the leaf moved up is no less than one of them) or the lane's head.
  std::int64_t batch_done_after_pop() const {
    const Entry* next = nullptr;
    if (pending_pop_) {
      const std::size_t last = std::min<std::size_t>(heap_.size() - 1, 4);
      for (std::size_t c = 1; c <= last; ++c) {
        if (!next || heap_[c].key < next->key) next = &heap_[c];
      }
    } else if (!heap_.empty()) {
      next = &heap_.front();
    }
    if (lane_count_ > 0 && (!next || lane_[lane_head_].key < next->key)) next = &lane_[lane_head_];
    const bool batch_done =
        next && static_cast<std::uint64_t>(next->key) >> 56 == static_cast<std::uint64_t>(WorldEventKind::BatchDone);
    return batch_done ? next->payload : -1;
  }
  void pop() {
    settle();
    if (lane_first()) {
      lane_head_ = (lane_head_ + 1) & (lane_.size() - 1);
      --lane_count_;
    } else {
      pending_pop_ = true;
    }
  }
  void push(const WorldEvent& event) {
    if (!try_push_lane(event)) [[unlikely]]
      push_slow(key_of(event), event.payload);
  }
  // push() of an event that joins the back of a non-empty lane with room to spare (the common
  // case: a store and a count, inline, no call); false, with nothing changed, for any other.
  // The fields are stored one by one: an Entry built on the stack and copied whole is read back
  // in 16-byte halves that its 8-byte writes cannot forward (a stall per event).
  bool try_push_lane(const WorldEvent& event) {
    const Key key = key_of(event);
    if (lane_count_ > 0 && lane_count_ < lane_.size() && lane_back().key < key) [[likely]] {
      Entry& slot = lane_[(lane_head_ + lane_count_) & (lane_.size() - 1)];
      slot.key = key;
      slot.payload = event.payload;
      ++lane_count_;
      return true;
    }
    return false;
  }

 private:
  __extension__ using Key = unsigned __int128;
  static constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;  // signed time -> unsigned order
  struct Entry {
    Key key;
    std::int64_t payload;
  };

  static Key key_of(const WorldEvent& event) {
    return (Key{static_cast<std::uint64_t>(event.time) ^ kSignBit} << 64) | event.order();
  }

  // Entries travel as (key, payload) in registers and are stored field by field (see push).
  [[gnu::noinline]] void push_slow(Key key, std::int64_t payload) {
    if (lane_count_ == 0 || lane_back().key < key) {
      lane_push(key, payload);
    } else if (pending_pop_) {
      pending_pop_ = false;
      sift_down(key, payload);
    } else {
      heap_.emplace_back();
      sift_up(heap_.size() - 1, key, payload);
    }
  }

  static WorldEvent decode(const Entry& e) {
    const auto hi = static_cast<std::uint64_t>(e.key >> 64), lo = static_cast<std::uint64_t>(e.key);
    return {static_cast<Nanos>(hi ^ kSignBit), static_cast<WorldEventKind>(lo >> 56),
            static_cast<std::int64_t>(lo & ((std::uint64_t{1} << 56) - 1)), e.payload};
  }

  // Whether the earliest event is the lane's (call after settle()).
  bool lane_first() const { return lane_count_ > 0 && (heap_.empty() || lane_[lane_head_].key < heap_.front().key); }
  const Entry& front() const { return lane_first() ? lane_[lane_head_] : heap_.front(); }
  const Entry& lane_back() const { return lane_[(lane_head_ + lane_count_ - 1) & (lane_.size() - 1)]; }
  void lane_push(Key key, std::int64_t payload) {
    if (lane_count_ == lane_.size()) {  // full (or never used): double it, oldest first
      std::vector<Entry> grown(lane_.empty() ? 64 : 2 * lane_.size());
      for (std::size_t i = 0; i < lane_count_; ++i) grown[i] = lane_[(lane_head_ + i) & (lane_.size() - 1)];
      lane_.swap(grown);
      lane_head_ = 0;
    }
    Entry& slot = lane_[(lane_head_ + lane_count_) & (lane_.size() - 1)];
    slot.key = key;
    slot.payload = payload;
    ++lane_count_;
  }

  void settle() const {
    if (!pending_pop_) return;
    pending_pop_ = false;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last.key, last.payload);
  }
  void sift_up(std::size_t i, Key key, std::int64_t payload) const {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(key < heap_[parent].key)) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i].key = key;
    heap_[i].payload = payload;
  }
  // Places (key, payload) in the root's hole.
  void sift_down(Key key, std::int64_t payload) const {
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
      if (!(heap_[best].key < key)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i].key = key;
    heap_[i].payload = payload;
  }
  mutable std::vector<Entry> heap_;
  mutable bool pending_pop_ = false;
  std::vector<Entry> lane_;  // a ring, its size a power of two; sorted from lane_head_ on
  std::size_t lane_head_ = 0, lane_count_ = 0;
};

// Applies a due event to the state and calls the scheduler's hook, identically in both worlds.
// `batch_start` is when the finished batch started (BatchDone only); the event's time is its end.
// Inline: the simulator delivers an event per query.
inline void deliver(const WorldEvent& event, Nanos batch_start, ClusterState& state, sched::Scheduler& scheduler) {
  switch (event.kind) {
    case WorldEventKind::BatchDone: {
      const auto worker = static_cast<sched::WorkerId>(event.payload);
      const auto done = state.finish_batch(worker, batch_start, event.time);
      scheduler.on_batch_done(done, state, state);
      break;
    }
    case WorldEventKind::TransitionDone: {
      const auto worker = static_cast<sched::WorkerId>(event.payload);
      if (state.finish_transition(worker)) scheduler.on_worker_ready(worker, state, state);
      break;
    }
    case WorldEventKind::Timer:
      scheduler.on_timer(event.payload, state, state);
      break;
  }
}

}  // namespace servelab::cluster
