#include "servelab/cluster/world_event.hpp"

namespace servelab::cluster {

void WorldEventQueue::take_next_bucket() const {
  Later& later = *later_;
  if (later.bucketed == 0) {
    if (later.far.size() < kHeapBelow) {  // few left: the heap takes them all, and what comes
      near_.swap(later.far);
      later.near_end = later.far_start = kUnbounded;
      make_heap();
      return;
    }
    make_buckets();
  }
  while (later.buckets[later.next_bucket].empty()) ++later.next_bucket;
  near_.swap(later.buckets[later.next_bucket]);  // the heap was empty: the bucket keeps its old storage
  later.bucketed -= near_.size();
  ++later.next_bucket;
  later.near_end = later.grid.end_of(later.next_bucket);
  make_heap();
}

void WorldEventQueue::start_buckets() {
  // Every heap event to the far list (the heap is settled: this follows a push into it), and
  // buckets made of them.
  if (!later_) later_ = std::make_unique<Later>();
  later_->far.swap(near_);
  later_->near_end = later_->far_start = 0;
  take_next_bucket();
}

void WorldEventQueue::make_heap() const {
  // Floyd's construction: each parent sifted down, the last first.
  if (near_.size() < 2) return;
  for (std::size_t i = (near_.size() - 2) / 4 + 1; i-- > 0;) {
    const Entry e = near_[i];
    sift_down(i, e.key, e.payload);
  }
}

void WorldEventQueue::make_buckets() const {
  Later& later = *later_;
  later.grid = core::TimeBuckets::fit(
      later.far.begin(), later.far.end(), [](const Entry& e) { return time_of(e.key); }, kPerBucket);
  if (later.buckets.size() < later.grid.count) later.buckets.resize(later.grid.count);
  later.next_bucket = 0;
  later.near_end = later.grid.end_of(0);
  later.far_start = later.grid.end_of(later.grid.count);
  // Into the buckets, in the far list's order; the rest stays, in its order.
  std::size_t kept = 0;
  for (const Entry& e : later.far) {
    const std::uint64_t t = time_of(e.key);
    if (Key{t} < later.far_start) {
      later.buckets[later.grid.index(t)].push_back(e);
      ++later.bucketed;
    } else {
      later.far[kept++] = e;
    }
  }
  later.far.resize(kept);
}

}  // namespace servelab::cluster
