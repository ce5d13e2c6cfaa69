#include "servelab/cluster/world_event.hpp"

namespace servelab::cluster {

void WorldEventQueue::take_next_bucket() const {
  if (bucketed_ == 0) {
    if (far_.size() < kHeapBelow) {  // few left: the heap takes them all, and what comes
      near_.swap(far_);
      near_end_ = far_start_ = kUnbounded;
      make_heap();
      return;
    }
    make_buckets();
  }
  while (buckets_[next_bucket_].empty()) ++next_bucket_;
  near_.swap(buckets_[next_bucket_]);  // the heap was empty: the bucket keeps its old storage
  bucketed_ -= near_.size();
  ++next_bucket_;
  near_end_ = grid_.end_of(next_bucket_);
  make_heap();
}

void WorldEventQueue::start_buckets() {
  // Every heap event to the far list (the heap is settled: this follows a push into it), and
  // buckets made of them.
  far_.swap(near_);
  near_end_ = far_start_ = 0;
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
  grid_ = core::TimeBuckets::fit(
      far_.begin(), far_.end(), [](const Entry& e) { return time_of(e.key); }, kPerBucket);
  if (buckets_.size() < grid_.count) buckets_.resize(grid_.count);
  next_bucket_ = 0;
  near_end_ = grid_.end_of(0);
  far_start_ = grid_.end_of(grid_.count);
  // Into the buckets, in the far list's order; the rest stays, in its order.
  std::size_t kept = 0;
  for (const Entry& e : far_) {
    const std::uint64_t t = time_of(e.key);
    if (Key{t} < far_start_) {
      buckets_[grid_.index(t)].push_back(e);
      ++bucketed_;
    } else {
      far_[kept++] = e;
    }
  }
  far_.resize(kept);
}

}  // namespace servelab::cluster
