// Buckets of one width over a range of times (as unsigned numbers in time order), fitted to the
// times at hand: the event queue keeps its later events unsorted in such buckets behind a small
// heap of the earliest ones (cluster/world_event.hpp).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace servelab::core {

struct TimeBuckets {
  __extension__ using Wide = unsigned __int128;  // a range's end may be 2^64

  std::uint64_t start = 0;
  int shift = 0;  // widths are 2^shift: a bucket's index is a shift
  std::size_t count = 0;

  // Where bucket b begins; end_of(count) is one past the last time of them all.
  Wide end_of(std::size_t b) const { return Wide{start} + (Wide{b} << shift); }
  // The bucket of a time in [start, end_of(count)).
  std::size_t index(std::uint64_t t) const { return static_cast<std::size_t>((t - start) >> shift); }

  // Buckets for the times of [first, last) (time_of(entry) gives one; the range is not empty),
  // about `per_bucket` of them each. They begin at the earliest and span up to twice the mean
  // distance from it: all of an even spread, without letting a few distant times (a timer an
  // hour ahead) widen every bucket; those are left beyond end_of(count).
  template <typename It, typename TimeOf>
  static TimeBuckets fit(It first, It last, TimeOf time_of, std::size_t per_bucket) {
    std::uint64_t lo = std::numeric_limits<std::uint64_t>::max(), hi = 0;
    std::size_t n = 0;
    for (It it = first; it != last; ++it, ++n) {
      lo = std::min(lo, time_of(*it));
      hi = std::max(hi, time_of(*it));
    }
    double sum = 0;
    for (It it = first; it != last; ++it) sum += static_cast<double>(time_of(*it) - lo);
    std::uint64_t span = hi - lo;
    const double cap = 2.0 * sum / static_cast<double>(n);
    if (cap < static_cast<double>(span)) span = static_cast<std::uint64_t>(cap);
    // With q = span / target < 2^shift, span < target * 2^shift: at most `target` buckets.
    const std::size_t target = std::max<std::size_t>(1, n / per_bucket);
    TimeBuckets b;
    b.start = lo;
    b.shift = std::min(static_cast<int>(std::bit_width(span / target)), 63);
    b.count = static_cast<std::size_t>(span >> b.shift) + 1;
    return b;
  }
};

}  // namespace servelab::core
