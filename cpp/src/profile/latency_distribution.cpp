// LatencyDistribution and Statistic: one (hardware, model, batch)'s latency and its summaries.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "servelab/profile/profile.hpp"

namespace servelab::profile {

namespace {

constexpr std::string_view kStatisticNames[] = {"mean", "p50", "p95", "p99", "mean_without_max"};

void check_latency(double seconds, std::string_view what, std::size_t index) {
  if (!(std::isfinite(seconds) && seconds > 0)) {
    throw ValueError(str(what, "[", index, "]=", seconds, " must be a finite latency > 0 seconds"));
  }
}

}  // namespace

Statistic parse_statistic(std::string_view name, std::string_view field) {
  for (std::size_t i = 0; i < std::size(kStatisticNames); ++i) {
    if (name == kStatisticNames[i]) return static_cast<Statistic>(i);
  }
  throw ValueError(str(field, "='", name, "' is not a statistic (choose mean, p50, p95, p99, mean_without_max)"));
}

std::string_view statistic_name(Statistic statistic) { return kStatisticNames[static_cast<int>(statistic)]; }

LatencyDistribution LatencyDistribution::from_samples(std::vector<double> seconds) {
  if (seconds.empty()) throw ValueError("samples=[] must hold at least one latency");
  for (std::size_t i = 0; i < seconds.size(); ++i) check_latency(seconds[i], "samples", i);
  LatencyDistribution d;
  d.sorted_ = std::move(seconds);
  std::sort(d.sorted_.begin(), d.sorted_.end());
  d.cache_statistics();
  return d;
}

LatencyDistribution LatencyDistribution::from_percentiles(std::vector<std::pair<double, double>> points) {
  if (points.empty()) throw ValueError("percentiles={} must hold at least one {percentile, latency} point");
  for (const auto& [p, s] : points) {
    if (!(p > 0 && p <= 100)) throw ValueError(str("percentile=", p, " must be in (0, 100]"));
    if (!(std::isfinite(s) && s > 0)) {
      throw ValueError(str("percentile ", p, " latency=", s, " must be a finite latency > 0 seconds"));
    }
  }
  std::sort(points.begin(), points.end());
  for (std::size_t i = 1; i < points.size(); ++i) {
    const auto& [p0, s0] = points[i - 1];
    const auto& [p1, s1] = points[i];
    if (p0 == p1) throw ValueError(str("percentile=", p1, " is given twice"));
    if (s1 < s0) {
      throw ValueError(str("percentile ", p1, " latency=", s1, " is below percentile ", p0, " latency=", s0,
                           " (latency must not decrease as the percentile grows)"));
    }
  }
  LatencyDistribution d;
  d.points_ = std::move(points);
  d.cache_statistics();
  return d;
}

void LatencyDistribution::cache_statistics() {
  double mean = 0;
  double mean_without_max = 0;
  if (!sorted_.empty()) {
    // Summing the sorted values keeps the result independent of the input order.
    const double sum = std::accumulate(sorted_.begin(), sorted_.end(), 0.0);
    const auto n = static_cast<double>(sorted_.size());
    mean = sum / n;
    mean_without_max = sorted_.size() == 1 ? sorted_[0] : (sum - sorted_.back()) / (n - 1);
  } else {
    // The integral over u of the piecewise-linear quantile function (flat at both ends).
    const auto& first = points_.front();
    const auto& last = points_.back();
    mean = first.second * first.first / 100 + last.second * (100 - last.first) / 100;
    for (std::size_t i = 1; i < points_.size(); ++i) {
      mean += (points_[i].first - points_[i - 1].first) / 100 * (points_[i].second + points_[i - 1].second) / 2;
    }
    mean_without_max = mean;  // no single largest sample to drop
  }
  stats_[static_cast<int>(Statistic::Mean)] = mean;
  stats_[static_cast<int>(Statistic::P50)] = quantile(0.50);
  stats_[static_cast<int>(Statistic::P95)] = quantile(0.95);
  stats_[static_cast<int>(Statistic::P99)] = quantile(0.99);
  stats_[static_cast<int>(Statistic::MeanWithoutMax)] = mean_without_max;
}

double LatencyDistribution::statistic(Statistic statistic) const { return stats_[static_cast<int>(statistic)]; }

double LatencyDistribution::quantile(double u) const {
  if (!(u >= 0 && u <= 1)) throw ValueError(str("u=", u, " must be in [0, 1]"));
  if (!sorted_.empty()) {
    // numpy.percentile's default ("linear"): position u * (n - 1) between order statistics.
    const double pos = u * static_cast<double>(sorted_.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    if (lo + 1 >= sorted_.size()) return sorted_.back();
    const double frac = pos - static_cast<double>(lo);
    return sorted_[lo] + (sorted_[lo + 1] - sorted_[lo]) * frac;
  }
  const double p = u * 100;
  if (p <= points_.front().first) return points_.front().second;
  if (p >= points_.back().first) return points_.back().second;
  const auto hi = std::upper_bound(points_.begin(), points_.end(), p,
                                   [](double value, const auto& point) { return value < point.first; });
  const auto lo = hi - 1;
  return lo->second + (hi->second - lo->second) * (p - lo->first) / (hi->first - lo->first);
}

double LatencyDistribution::draw(double u) const {
  if (!sorted_.empty()) {
    const auto i = static_cast<std::size_t>(u * static_cast<double>(sorted_.size()));
    return sorted_[std::min(i, sorted_.size() - 1)];
  }
  return quantile(std::clamp(u, 0.0, 1.0));
}

double LatencyDistribution::sample(Rng& rng) const { return draw(rng.uniform()); }

bool LatencyDistribution::has_samples() const { return !sorted_.empty(); }

const std::vector<double>& LatencyDistribution::sorted_values() const { return sorted_; }

}  // namespace servelab::profile
