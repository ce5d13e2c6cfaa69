// Request sizes: how many items each query carries.
//
// A SizeDistribution is an immutable, validated description ("lognormal(mu=5.1, sigma=0.2)");
// sample(rng) draws one size (an integer >= 1). Optional rounding up to a multiple (Kairos rounds
// up to multiples of 10) is a parameter of every distribution, applied after drawing.
//
// How a draw becomes a size (to_size below), in one step from the real-valued draw x:
//   round_to == 1: the nearest integer, halves up (floor(x + 0.5)), as Ribbon's round(sample);
//   round_to == k > 1: up to the next multiple of k (ceil(x / k) * k), as Kairos's
//     math.ceil(sample / 10) * 10 applied to the raw lognormal draw (rounding to an integer first
//     would move draws in (100, 100.5) from 110 to 100).
// The result is then raised to at least round_to (so always >= 1) and saturates at kMaxSize
// (rounded down to a multiple of round_to). Integer-valued draws (uniform, constant) are exact.
//
// Composites (SizeMixture, FallbackSize) combine their parts' draw() values, which are still real
// (rounded up to the part's own multiple when its round_to > 1), so only the outermost
// distribution turns a value into an integer.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "servelab/core/rng.hpp"

namespace servelab::workload {

inline constexpr std::int32_t kMaxSize = std::numeric_limits<std::int32_t>::max();
inline constexpr std::int64_t kMaxRoundTo = std::int64_t{1} << 30;
// The stream generate_sizes() draws from: Rng(seed, kSizeStream).
inline constexpr std::string_view kSizeStream = "sizes";

// The size for a real draw x under `round_to` (see the header comment). round_to must be >= 1.
inline std::int32_t to_size(double x, std::int32_t round_to) {
  const double k = round_to;
  const double y = round_to == 1 ? std::floor(x + 0.5) : std::ceil(x / k) * k;
  const double top = static_cast<double>(kMaxSize / round_to) * k;
  if (!(y >= k)) return round_to;  // also NaN
  if (y >= top) return static_cast<std::int32_t>(top);
  return static_cast<std::int32_t>(y);
}

namespace detail {

// Walker/Vose alias table: picks index i with probability weights[i] / sum in O(1) from one
// 53-bit uniform draw. Weights must be finite, >= 0, with a positive finite sum (checked by the
// callers, which name their own fields).
class AliasTable {
 public:
  AliasTable() = default;
  explicit AliasTable(const std::vector<double>& weights);
  std::size_t size() const { return prob_.size(); }
  std::size_t pick(Rng& rng) const {
    const double u = rng.uniform() * static_cast<double>(prob_.size());
    std::size_t i = static_cast<std::size_t>(u);
    if (i >= prob_.size()) i = prob_.size() - 1;
    return u - static_cast<double>(i) < prob_[i] ? i : alias_[i];
  }
  // Normalised probabilities (weights / sum), as given.
  const std::vector<double>& probabilities() const { return p_; }

 private:
  std::vector<double> prob_;
  std::vector<std::uint32_t> alias_;
  std::vector<double> p_;
};

}  // namespace detail

class SizeDistribution {
 public:
  virtual ~SizeDistribution() = default;
  // One size >= 1 (after clipping and rounding).
  virtual std::int32_t sample(Rng& rng) const = 0;
  virtual std::string describe() const = 0;
  // Expected size after clipping/rounding, exact where cheap, else estimated; NaN if unknown.
  // The default integrates to_size over expectation(): exact for discrete distributions,
  // a fine quadrature (relative error well below 1e-3) for continuous ones.
  virtual double mean() const;

  // One real-valued draw before the conversion to an integer, already rounded up to a multiple
  // of round_to() when that is > 1; sample(rng) == to_size(draw(rng), round_to()) in distribution.
  virtual double draw(Rng& rng) const = 0;
  // E[g(draw())], computed without random numbers (composites combine their parts').
  virtual double expectation(const std::function<double(double)>& g) const = 0;

  std::int32_t round_to() const { return round_to_; }

 protected:
  // Throws ValueError naming round_to unless 1 <= round_to <= kMaxRoundTo.
  explicit SizeDistribution(std::int64_t round_to = 1);
  double round_up(double x) const { return round_to_ == 1 ? x : std::ceil(x / round_to_) * round_to_; }
  std::int32_t finish(double x) const { return to_size(x, round_to_); }
  // ", round_to=k" when k != 1, for describe().
  std::string round_to_suffix() const;

 private:
  std::int32_t round_to_;
};

using SizePtr = std::shared_ptr<const SizeDistribution>;

// Every query has `value` items (1 <= value <= kMaxSize).
class ConstantSize final : public SizeDistribution {
 public:
  explicit ConstantSize(std::int64_t value, std::int64_t round_to = 1);
  std::int32_t sample(Rng&) const override { return finish(static_cast<double>(value_)); }
  double draw(Rng&) const override { return round_up(static_cast<double>(value_)); }
  double expectation(const std::function<double(double)>& g) const override;
  std::string describe() const override;
  std::int64_t value() const { return value_; }

 private:
  std::int64_t value_;
};

// Integers uniform on {low, ..., high}, both included (1 <= low <= high <= kMaxSize).
class UniformSize final : public SizeDistribution {
 public:
  UniformSize(std::int64_t low, std::int64_t high, std::int64_t round_to = 1);
  std::int32_t sample(Rng& rng) const override { return finish(raw(rng)); }
  double draw(Rng& rng) const override { return round_up(raw(rng)); }
  double expectation(const std::function<double(double)>& g) const override;
  std::string describe() const override;
  std::int64_t low() const { return low_; }
  std::int64_t high() const { return high_; }

 private:
  double raw(Rng& rng) const;
  std::int64_t low_, high_;
};

// exp(N(mu, sigma^2)): mu and sigma are those of the underlying normal, as numpy.random.lognormal.
class LognormalSize final : public SizeDistribution {
 public:
  LognormalSize(double mu, double sigma, std::int64_t round_to = 1);  // mu finite, sigma > 0 finite
  std::int32_t sample(Rng& rng) const override { return finish(raw(rng)); }
  double draw(Rng& rng) const override { return round_up(raw(rng)); }
  double expectation(const std::function<double(double)>& g) const override;
  std::string describe() const override;
  double mu() const { return mu_; }
  double sigma() const { return sigma_; }

 private:
  double raw(Rng& rng) const;
  double mu_, sigma_;
};

// N(mean, std^2) clipped to [low, high] (draws outside are moved to the nearer bound, not redrawn).
// low is finite, high may be +inf, low <= high; std > 0.
class ClippedGaussianSize final : public SizeDistribution {
 public:
  ClippedGaussianSize(double mean, double stddev, double low = 1.0,
                      double high = std::numeric_limits<double>::infinity(), std::int64_t round_to = 1);
  std::int32_t sample(Rng& rng) const override { return finish(raw(rng)); }
  double draw(Rng& rng) const override { return round_up(raw(rng)); }
  double expectation(const std::function<double(double)>& g) const override;
  std::string describe() const override;
  double gaussian_mean() const { return mean_; }
  double stddev() const { return std_; }
  double low() const { return low_; }
  double high() const { return high_; }

 private:
  double raw(Rng& rng) const;
  double mean_, std_, low_, high_;
};

// An empirical distribution: one of `values` (finite, > 0), chosen uniformly (no weights: the
// values are samples, e.g. a trace's sizes) or with probability proportional to `weights` (a
// histogram: same length, finite, >= 0, not all zero).
class EmpiricalSize final : public SizeDistribution {
 public:
  explicit EmpiricalSize(std::vector<double> values, std::vector<double> weights = {}, std::int64_t round_to = 1);
  std::int32_t sample(Rng& rng) const override { return finish(raw(rng)); }
  double draw(Rng& rng) const override { return round_up(raw(rng)); }
  double expectation(const std::function<double(double)>& g) const override;
  std::string describe() const override;
  const std::vector<double>& values() const { return values_; }
  const std::vector<double>& weights() const { return weights_; }  // empty: uniform choice

 private:
  double raw(Rng& rng) const;
  std::vector<double> values_, weights_;
  detail::AliasTable table_;  // only with weights
};

// Picks component i with probability weights[i] / sum, then draws from it. The components' values
// stay real until this distribution converts them (see the header comment).
class SizeMixture final : public SizeDistribution {
 public:
  // `label`, when not empty, is what describe() returns (the presets use their registry spec).
  SizeMixture(std::vector<SizePtr> components, std::vector<double> weights, std::int64_t round_to = 1,
              std::string label = {});
  std::int32_t sample(Rng& rng) const override { return finish(raw(rng)); }
  double draw(Rng& rng) const override { return round_up(raw(rng)); }
  double expectation(const std::function<double(double)>& g) const override;
  std::string describe() const override;
  const std::vector<SizePtr>& components() const { return components_; }
  const std::vector<double>& weights() const { return weights_; }

 private:
  double raw(Rng& rng) const { return components_[table_.pick(rng)]->draw(rng); }
  std::vector<SizePtr> components_;
  std::vector<double> weights_;
  detail::AliasTable table_;
  std::string label_;
};

// Draws from `base`; a draw outside [low, high] is replaced by one draw from `fallback` (not
// checked again). Kairos keeps its lognormal sizes in [100, 200] this way, else U{190..199}.
class FallbackSize final : public SizeDistribution {
 public:
  FallbackSize(SizePtr base, double low, double high, SizePtr fallback, std::int64_t round_to = 1);
  std::int32_t sample(Rng& rng) const override { return finish(raw(rng)); }
  double draw(Rng& rng) const override { return round_up(raw(rng)); }
  double expectation(const std::function<double(double)>& g) const override;
  std::string describe() const override;
  const SizePtr& base() const { return base_; }
  const SizePtr& fallback() const { return fallback_; }
  double low() const { return low_; }
  double high() const { return high_; }

 private:
  double raw(Rng& rng) const {
    const double x = base_->draw(rng);
    return x >= low_ && x <= high_ ? x : fallback_->draw(rng);
  }
  SizePtr base_;
  double low_, high_;
  SizePtr fallback_;
};

// The Kairos artifact's query sizes (helper.random_samp, "replaying the trace from DeepRecSys"):
// with probability 8/99 U{1..99}, 22/99 U{200..599}, 5/99 U{600..999}, otherwise
// lognormal(mu=5.1, sigma=0.2) kept if in [100, 200] else U{190..199}; then rounded up to a
// multiple of round_to (the artifact: math.ceil(sample / 10) * 10). describe(): "kairos_mix(round_to=10)".
std::shared_ptr<SizeMixture> kairos_sizes(std::int64_t round_to = 10);

// The Ribbon artifact's query sizes (query/functions.py random_samp, used by query/distributor.py):
// with probability 2/99 U{1..99}, 10/99 U{250..499}, otherwise lognormal(mu=5.1, sigma=0.2), replaced
// by U{400..499} when above 500; the simulator then takes round(sample). The artifact ships this
// only as code (its query/ folder holds configs and lookup tables, no size data).
std::shared_ptr<SizeMixture> ribbon_sizes(std::int64_t round_to = 1);

// Sizes of `count` queries under `seed` (stream "sizes"), in bulk.
std::vector<std::int32_t> generate_sizes(const SizeDistribution& sizes, std::uint64_t seed, std::int64_t count);

}  // namespace servelab::workload
