// LatencyEstimator: a least-squares line that gives way to a per-batch lookup table.
#include "servelab/profile/estimator.hpp"

#include <cmath>
#include <limits>

#include "servelab/core/errors.hpp"

namespace servelab::profile {

LatencyEstimator::LatencyEstimator(std::int64_t min_observations) : min_observations_(min_observations) {
  if (min_observations < 1) throw ValueError(str("min_observations=", min_observations, " must be >= 1"));
}

void LatencyEstimator::observe(std::int64_t batch, double seconds) {
  if (batch < 1) throw ValueError(str("batch=", batch, " must be >= 1"));
  if (!(std::isfinite(seconds) && seconds > 0)) {
    throw ValueError(str("seconds=", seconds, " must be a finite latency > 0"));
  }
  auto& cell = table_[batch];
  ++cell.count;
  cell.mean += (seconds - cell.mean) / static_cast<double>(cell.count);

  const auto x = static_cast<double>(batch);
  if (count_ == 0) {
    x0_ = x;
    y0_ = seconds;
  }
  ++count_;
  const double dx = x - x0_;
  const double dy = seconds - y0_;
  sx_ += dx;
  sy_ += dy;
  sxx_ += dx * dx;
  sxy_ += dx * dy;
}

double LatencyEstimator::slope() const {
  const auto n = static_cast<double>(count_);
  const double var = sxx_ - sx_ * sx_ / n;  // n * variance of the batch sizes
  if (table_.size() < 2 || !(var > 0)) return std::numeric_limits<double>::quiet_NaN();
  return (sxy_ - sx_ * sy_ / n) / var;
}

double LatencyEstimator::intercept() const {
  const double b = slope();
  if (std::isnan(b)) return b;
  const auto n = static_cast<double>(count_);
  // The line passes through the mean point (x0 + sx/n, y0 + sy/n).
  return (y0_ + sy_ / n) - b * (x0_ + sx_ / n);
}

std::int64_t LatencyEstimator::observations(std::int64_t batch) const {
  const auto it = table_.find(batch);
  return it == table_.end() ? 0 : it->second.count;
}

double LatencyEstimator::table_mean(std::int64_t batch) const {
  const auto it = table_.find(batch);
  return it == table_.end() ? std::numeric_limits<double>::quiet_NaN() : it->second.mean;
}

double LatencyEstimator::predict(std::int64_t batch) const {
  if (batch < 1) throw ValueError(str("batch=", batch, " must be >= 1"));
  if (count_ == 0) throw RuntimeError(str("cannot predict batch=", batch, ": no latency observed yet"));
  const auto it = table_.find(batch);
  if (it != table_.end() && it->second.count >= min_observations_) return it->second.mean;
  const auto x = static_cast<double>(batch);
  const double b = slope();
  if (!std::isnan(b)) {
    const double line = intercept() + b * x;
    if (line > 0) return line;
  }
  const auto n = static_cast<double>(count_);
  return (y0_ + sy_ / n) / (x0_ + sx_ / n) * x;
}

}  // namespace servelab::profile
