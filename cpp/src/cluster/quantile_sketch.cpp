#include "servelab/cluster/quantile_sketch.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace servelab::cluster {
namespace {

constexpr double kGamma = (1 + QuantileSketch::kAlpha) / (1 - QuantileSketch::kAlpha);
const double kInvLogGamma = 1.0 / std::log(kGamma);

}  // namespace

std::int32_t QuantileSketch::index(std::int64_t value) {
  return static_cast<std::int32_t>(std::ceil(std::log(static_cast<double>(value)) * kInvLogGamma));
}

void QuantileSketch::add_index(std::int32_t i) {
  if (counts_.empty()) {
    offset_ = i;
    counts_.assign(1, 0);
  } else if (i < offset_) {
    counts_.insert(counts_.begin(), static_cast<std::size_t>(offset_ - i), 0);
    offset_ = i;
  } else if (i - offset_ >= static_cast<std::int32_t>(counts_.size())) {
    counts_.resize(static_cast<std::size_t>(i - offset_ + 1), 0);
  }
  ++counts_[static_cast<std::size_t>(i - offset_)];
  ++count_;
}

void QuantileSketch::merge(const QuantileSketch& other) {
  zeros_ += other.zeros_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  for (std::size_t k = 0; k < other.counts_.size(); ++k) {
    if (other.counts_[k] == 0) continue;
    const auto i = other.offset_ + static_cast<std::int32_t>(k);
    add_index(i);  // makes room, then the rest of the count
    counts_[static_cast<std::size_t>(i - offset_)] += other.counts_[k] - 1;
    count_ += other.counts_[k] - 1;
  }
}

double QuantileSketch::value_at_rank(std::uint64_t rank) const {
  if (rank < zeros_) return 0.0;
  rank -= zeros_;
  std::uint64_t seen = 0;
  for (std::size_t k = 0; k < counts_.size(); ++k) {
    seen += counts_[k];
    if (rank < seen) return 2.0 * std::pow(kGamma, offset_ + static_cast<std::int32_t>(k)) / (kGamma + 1.0);
  }
  return std::numeric_limits<double>::quiet_NaN();  // unreachable for rank < count()
}

double QuantileSketch::quantile(double q) const {
  const auto n = count();
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(n - 1);
  const auto lo = static_cast<std::uint64_t>(std::floor(pos));
  const auto hi = static_cast<std::uint64_t>(std::ceil(pos));
  const auto clamp = [&](double v) { return std::clamp(v, static_cast<double>(min_), static_cast<double>(max_)); };
  const double a = clamp(value_at_rank(lo));
  if (hi == lo) return a;
  const double b = clamp(value_at_rank(hi));
  return a + (b - a) * (pos - static_cast<double>(lo));
}

}  // namespace servelab::cluster
