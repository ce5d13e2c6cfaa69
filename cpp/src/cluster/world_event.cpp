#include "servelab/cluster/world_event.hpp"

#include <algorithm>
#include <bit>
#include <limits>

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
  near_end_ = Key{buckets_start_} + (Key{next_bucket_} << bucket_shift_);
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
  // The far list's earliest time and mean distance from it.
  std::uint64_t lo = std::numeric_limits<std::uint64_t>::max(), hi = 0;
  for (const Entry& e : far_) {
    lo = std::min(lo, time_of(e.key));
    hi = std::max(hi, time_of(e.key));
  }
  double sum = 0;
  for (const Entry& e : far_) sum += static_cast<double>(time_of(e.key) - lo);
  // The buckets span up to twice the mean distance: all of an even spread, without letting a few
  // distant events (a timer an hour ahead) widen every bucket; those stay in the far list.
  std::uint64_t span = hi - lo;
  const double cap = 2.0 * sum / static_cast<double>(far_.size());
  if (cap < static_cast<double>(span)) span = static_cast<std::uint64_t>(cap);
  // Widths a power of two (an index is a shift), about kPerBucket events each: with
  // q = span / target < 2^shift, span < target * 2^shift, so at most `target` buckets.
  const std::size_t target = std::max<std::size_t>(1, far_.size() / kPerBucket);
  bucket_shift_ = std::min(static_cast<int>(std::bit_width(span / target)), 63);
  bucket_count_ = static_cast<std::size_t>(span >> bucket_shift_) + 1;
  if (buckets_.size() < bucket_count_) buckets_.resize(bucket_count_);
  buckets_start_ = lo;
  next_bucket_ = 0;
  near_end_ = Key{lo};
  far_start_ = Key{lo} + (Key{bucket_count_} << bucket_shift_);
  // Into the buckets, in the far list's order; the rest stays, in its order.
  std::size_t kept = 0;
  for (const Entry& e : far_) {
    const std::uint64_t t = time_of(e.key);
    if (Key{t} < far_start_) {
      buckets_[(t - lo) >> bucket_shift_].push_back(e);
      ++bucketed_;
    } else {
      far_[kept++] = e;
    }
  }
  far_.resize(kept);
}

}  // namespace servelab::cluster
