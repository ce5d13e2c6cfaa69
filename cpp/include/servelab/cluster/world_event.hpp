// The events a world schedules for itself, in the one tie order both worlds share: at equal times,
// batch completions, then finished startups and model loads, then timers (arrivals, pulled from
// the workload stream, come after all three); within a kind, the order they were scheduled.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "servelab/cluster/cluster_state.hpp"
#include "servelab/core/time.hpp"
#include "servelab/core/time_buckets.hpp"
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
// already in it, and, for the rest, a small 4-ary heap of the earliest ones in front of buckets
// of later ones. Most simulations schedule in order (with a fixed service time every completion
// comes after the ones already pending), so most events never leave the lane: O(1) instead of
// O(log n). With sampled service times they do, and a heap of every pending event (one per busy
// worker) grows to thousands, whose sifts then cost a dozen cache lines outside the first-level
// cache per event. So events beyond the heap's range wait unsorted: in a bucket of a fixed time
// width (each covering about kPerBucket of them when made) while it is near, in one far list
// otherwise; the heap takes the next bucket when it runs dry, and the buckets are made from the
// far list when they have all been taken (a calendar queue's idea, like a ladder queue's). Each
// event is appended once or twice and sifted in a heap of tens: amortised O(1) for the spread of
// times a simulation schedules, degrading to the plain heap's O(log n) when times bunch up.
//
// The heap holds 128-bit keys (time, kind, seq) compared without branches, and its pop() is
// deferred so the common pop-then-push of a simulation step costs one sift instead of two. The
// order is total and the heap holds every non-lane event earlier than the buckets' start, so it
// pops exactly what std::priority_queue<WorldEvent> would, whatever order events come in.
class WorldEventQueue {
 public:
  bool empty() const { return size() == 0; }
  std::size_t size() const {
    return near_.size() - (pending_pop_ ? 1 : 0) + lane_count_ + (later_ ? later_->bucketed + later_->far.size() : 0);
  }
  WorldEvent top() const {
    settle();
    return decode(front());
  }
  // The earliest event when every pending one is in the lane (nothing in the heap to settle),
  // written field by field to `out`; false when other events are pending or nothing is.
  // Right after a pop it tells the next event without the work of top().
  bool lane_top(WorldEvent& out) const {
    // (An empty heap means no bucketed or far events either: see settle.)
    if (!near_.empty() || lane_count_ == 0) return false;
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
  // popped root's children (the leaf moved up is no less than one of them) or the lane's head;
  // when the popped root was the heap's last event, the heap takes the next bucket now.
  std::int64_t batch_done_after_pop() const {
    if (pending_pop_ && near_.size() == 1) [[unlikely]]
      settle_out_of_line();
    const Entry* next = nullptr;
    if (pending_pop_) {
      const std::size_t last = std::min<std::size_t>(near_.size() - 1, 4);
      for (std::size_t c = 1; c <= last; ++c) {
        if (!next || near_[c].key < next->key) next = &near_[c];
      }
    } else if (!near_.empty()) {
      next = &near_.front();
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
  // Events per bucket when the buckets are made: the heap's size, about (it also takes those
  // pushed into the bucket's time range later). Measured with fcfs at 10,000 workers, sampled
  // times: 16 and 32 alike, 64 slower.
  static constexpr std::size_t kPerBucket = 16;
  // The heap alone holds every non-lane event until it reaches kBucketsFrom of them (a heap of
  // a hundred events stays in the first-level cache and was measured 7% faster than buckets),
  // and again when fewer than kHeapBelow are left beyond the buckets.
  static constexpr std::size_t kBucketsFrom = 512, kHeapBelow = 128;
  static constexpr Key kUnbounded = Key{1} << 64;  // past every time
  struct Entry {
    Key key;
    std::int64_t payload;
  };

  static Key key_of(const WorldEvent& event) {
    return (Key{static_cast<std::uint64_t>(event.time) ^ kSignBit} << 64) | event.order();
  }
  // The time part of a key, as an unsigned number in the same order.
  static std::uint64_t time_of(Key key) { return static_cast<std::uint64_t>(key >> 64); }

  // Entries travel as (key, payload) in registers and are stored field by field (see push).
  [[gnu::noinline]] void push_slow(Key key, std::int64_t payload) {
    const std::uint64_t t = time_of(key);
    if (lane_count_ == 0 || lane_back().key < key) {
      lane_push(key, payload);
    } else if (!later_ || Key{t} < later_->near_end) {
      if (pending_pop_) {
        pending_pop_ = false;
        sift_down(0, key, payload);
      } else {
        near_.emplace_back();
        sift_up(near_.size() - 1, key, payload);
        if (near_.size() >= kBucketsFrom && (!later_ || later_->near_end == kUnbounded)) [[unlikely]]
          start_buckets();
      }
    } else {
      Later& later = *later_;
      if (Key{t} < later.far_start) {
        later.buckets[later.grid.index(t)].push_back({key, payload});
        ++later.bucketed;
      } else {
        later.far.push_back({key, payload});
      }
      if (near_.empty()) take_next_bucket();  // (a pending pop leaves its root in the heap)
    }
  }

  static WorldEvent decode(const Entry& e) {
    const auto hi = static_cast<std::uint64_t>(e.key >> 64), lo = static_cast<std::uint64_t>(e.key);
    return {static_cast<Nanos>(hi ^ kSignBit), static_cast<WorldEventKind>(lo >> 56),
            static_cast<std::int64_t>(lo & ((std::uint64_t{1} << 56) - 1)), e.payload};
  }

  // Whether the earliest event is the lane's (call after settle()).
  bool lane_first() const { return lane_count_ > 0 && (near_.empty() || lane_[lane_head_].key < near_.front().key); }
  const Entry& front() const { return lane_first() ? lane_[lane_head_] : near_.front(); }
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

  // Completes a deferred pop; a heap it empties takes the next bucket (made from the far list
  // when none is left), so that the heap's root is the earliest event outside the lane. (The
  // heap is never left empty otherwise while other events wait: see push_slow.)
  void settle() const {
    if (!pending_pop_) return;
    pending_pop_ = false;
    const Entry last = near_.back();
    near_.pop_back();
    if (!near_.empty()) {
      sift_down(0, last.key, last.payload);
    } else if (later_ && (later_->bucketed > 0 || !later_->far.empty())) {
      take_next_bucket();
    }
  }
  // settle() where it is rare: not another copy of its sift inline.
  [[gnu::noinline]] void settle_out_of_line() const { settle(); }
  void take_next_bucket() const;
  void make_buckets() const;
  void start_buckets();
  void make_heap() const;

  void sift_up(std::size_t i, Key key, std::int64_t payload) const {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(key < near_[parent].key)) break;
      near_[i] = near_[parent];
      i = parent;
    }
    near_[i].key = key;
    near_[i].payload = payload;
  }
  // Places (key, payload) in the hole at i, moving it towards the leaves until it fits.
  void sift_down(std::size_t i, Key key, std::int64_t payload) const {
    const std::size_t n = near_.size();
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      if (first + 4 <= n) {  // the common full node: selects, no branches
        best = near_[first + 1].key < near_[best].key ? first + 1 : best;
        best = near_[first + 2].key < near_[best].key ? first + 2 : best;
        best = near_[first + 3].key < near_[best].key ? first + 3 : best;
      } else {
        for (std::size_t c = first + 1; c < n; ++c) best = near_[c].key < near_[best].key ? c : best;
      }
      if (!(near_[best].key < key)) break;
      near_[i] = near_[best];
      i = best;
    }
    near_[i].key = key;
    near_[i].payload = payload;
  }

  // The lane and the heap first: every event reads them, the buckets only past 512 events.
  std::vector<Entry> lane_;  // a ring, its size a power of two; sorted from lane_head_ on
  std::size_t lane_head_ = 0, lane_count_ = 0;
  // The heap: every non-lane event earlier than later_->near_end (a time as time_of gives it);
  // all of them while there is no later_ or its near_end is kUnbounded.
  mutable std::vector<Entry> near_;
  mutable bool pending_pop_ = false;
  // The events beyond the heap's range, once it has held kBucketsFrom (made then: a queue of a
  // few events stays small, its hot fields in one cache line).
  struct Later {
    Key near_end = kUnbounded;  // one past the heap's last time (it may be 2^64)
    // Bucket b (from next_bucket on) holds the events of the grid's bucket b, unsorted;
    // near_end is where next_bucket begins, far_start where the last one ends. The far list
    // holds every event from far_start on, unsorted.
    std::vector<std::vector<Entry>> buckets;
    core::TimeBuckets grid;
    std::size_t next_bucket = 0, bucketed = 0;
    Key far_start = kUnbounded;
    std::vector<Entry> far;
  };
  mutable std::unique_ptr<Later> later_;
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
