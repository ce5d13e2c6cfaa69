// A relative-error quantile sketch for non-negative int64 values (DDSketch's log-bucketed
// mapping: Masson, Rim and Lee, "DDSketch: a fast and fully-mergeable quantile sketch with
// relative-error guarantees", VLDB 2019). A positive value x falls in bucket
// i = ceil(log_gamma(x)) with gamma = (1 + alpha) / (1 - alpha), whose representative
// 2 gamma^i / (gamma + 1) is within alpha * x of x; zeros are counted exactly.
//
// quantile(q) follows numpy's default (linear interpolation between the order statistics at
// ranks floor and ceil of q (n - 1)), with each order statistic replaced by its bucket's
// representative: both are within alpha relative error, so the interpolated value is too
// (|estimate - numpy| <= alpha * numpy). The estimate is then clamped to the exact minimum and
// maximum seen, which only brings it closer. Sketches with the same alpha merge exactly.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace servelab::cluster {

class QuantileSketch {
 public:
  static constexpr double kAlpha = 0.005;

  // The bucket of a positive value (shared by sketches: callers index once, add many times).
  static std::int32_t index(std::int64_t value);

  void add(std::int64_t value) { value <= 0 ? add_zero() : add(value, index(value)); }
  // Adds a positive value whose index() the caller computed.
  void add(std::int64_t value, std::int32_t i) {
    add_index(i);
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  void merge(const QuantileSketch& other);

  std::uint64_t count() const { return count_ + zeros_; }
  // q in [0, 1]; NaN when empty.
  double quantile(double q) const;
  std::size_t bytes() const { return counts_.capacity() * sizeof(std::uint64_t); }

 private:
  double value_at_rank(std::uint64_t rank) const;  // rank in [0, count())
  void add_index(std::int32_t i);
  void add_zero() {
    ++zeros_;
    min_ = std::min<std::int64_t>(min_, 0);
    max_ = std::max<std::int64_t>(max_, 0);
  }

  std::vector<std::uint64_t> counts_;  // counts_[k] is bucket offset_ + k
  std::int32_t offset_ = 0;
  std::uint64_t count_ = 0, zeros_ = 0;  // count_: positive values
  std::int64_t min_ = std::numeric_limits<std::int64_t>::max(), max_ = std::numeric_limits<std::int64_t>::min();
};

}  // namespace servelab::cluster
