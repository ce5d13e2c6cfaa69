#include "servelab/workload/sizes.hpp"

#include <algorithm>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <utility>

#include "format.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/memory.hpp"

namespace servelab::workload {

using detail::num;

namespace {

using Fn = std::function<double(double)>;

// "[1, 2.5, 3]"
std::string list(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + num(values[i]);
  return out + "]";
}

// Validates weights (finite, >= 0, positive finite sum) naming `field`; returns them unchanged.
std::vector<double> checked_weights(std::vector<double> weights, std::size_t expected, const char* field,
                                    const char* of) {
  if (weights.size() != expected) {
    throw ValueError(str(field, " has ", weights.size(), " elements but ", of, " has ", expected));
  }
  double sum = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!detail::non_negative_finite(weights[i])) {
      throw ValueError(str(field, "[", i, "]=", num(weights[i]), " must be non-negative and finite"));
    }
    sum += weights[i];
  }
  if (!(sum > 0)) throw ValueError(str(field, "=", list(weights), " are all zero: at least one must be positive"));
  if (!std::isfinite(sum)) throw ValueError(str(field, "=", list(weights), " sum to infinity"));
  return weights;
}

// E[h(Z)] for a standard normal Z: midpoint rule on [-12, 12] (the mass beyond is below 1e-32,
// and every h here is bounded by kMaxSize) with 2^14 points, weights renormalised to sum to 1.
double normal_expectation(const Fn& h) {
  constexpr int kPoints = 1 << 14;
  constexpr double kLo = -12, kHi = 12, kStep = (kHi - kLo) / kPoints;
  double total = 0, mass = 0;
  for (int j = 0; j < kPoints; ++j) {
    const double z = kLo + (j + 0.5) * kStep;
    const double w = std::exp(-0.5 * z * z);
    total += w * h(z);
    mass += w;
  }
  return total / mass;
}

void check_positive_finite(double x, const char* field) {
  if (!detail::positive_finite(x)) throw ValueError(str(field, "=", num(x), " must be positive and finite"));
}

void check_component(const SizePtr& p, const std::string& field) {
  if (!p) throw ValueError(str(field, " is null: give a size distribution"));
}

}  // namespace

// --- AliasTable ---

detail::AliasTable::AliasTable(const std::vector<double>& weights) {
  const std::size_t n = weights.size();
  double sum = 0;
  for (const double w : weights) sum += w;
  p_.resize(n);
  for (std::size_t i = 0; i < n; ++i) p_[i] = weights[i] / sum;
  prob_.assign(n, 1.0);
  alias_.resize(n);
  std::vector<double> scaled(n);
  std::vector<std::uint32_t> small, large;
  std::size_t heaviest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    alias_[i] = static_cast<std::uint32_t>(i);
    scaled[i] = p_[i] * static_cast<double>(n);
    (scaled[i] < 1 ? small : large).push_back(static_cast<std::uint32_t>(i));
    if (weights[i] > weights[heaviest]) heaviest = i;
  }
  while (!small.empty() && !large.empty()) {
    const std::uint32_t s = small.back(), l = large.back();
    small.pop_back();
    prob_[s] = scaled[s];
    alias_[s] = l;
    scaled[l] = (scaled[l] + scaled[s]) - 1.0;
    if (scaled[l] < 1) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Leftovers are 1 up to rounding; a zero weight must still never be picked.
  for (const std::uint32_t i : small) {
    prob_[i] = weights[i] > 0 ? 1.0 : 0.0;
    alias_[i] = weights[i] > 0 ? i : static_cast<std::uint32_t>(heaviest);
  }
  for (const std::uint32_t i : large) prob_[i] = 1.0;
}

// --- SizeDistribution ---

SizeDistribution::SizeDistribution(std::int64_t round_to) {
  if (round_to < 1 || round_to > kMaxRoundTo) {
    throw ValueError(str("round_to=", round_to, " must be an integer in [1, ", kMaxRoundTo, "]"));
  }
  round_to_ = static_cast<std::int32_t>(round_to);
}

double SizeDistribution::mean() const {
  return expectation([this](double x) { return static_cast<double>(finish(x)); });
}

std::string SizeDistribution::round_to_suffix() const {
  return round_to_ == 1 ? std::string() : str(", round_to=", round_to_);
}

// --- ConstantSize ---

ConstantSize::ConstantSize(std::int64_t value, std::int64_t round_to) : SizeDistribution(round_to), value_(value) {
  if (value < 1 || value > kMaxSize) throw ValueError(str("value=", value, " must be in [1, ", kMaxSize, "]"));
}

double ConstantSize::expectation(const Fn& g) const { return g(round_up(static_cast<double>(value_))); }

std::string ConstantSize::describe() const { return str("constant(value=", value_, round_to_suffix(), ")"); }

// --- UniformSize ---

UniformSize::UniformSize(std::int64_t low, std::int64_t high, std::int64_t round_to)
    : SizeDistribution(round_to), low_(low), high_(high) {
  if (low < 1 || low > kMaxSize) throw ValueError(str("low=", low, " must be in [1, ", kMaxSize, "]"));
  if (high < 1 || high > kMaxSize) throw ValueError(str("high=", high, " must be in [1, ", kMaxSize, "]"));
  if (low > high) throw ValueError(str("low=", low, " is above high=", high, ": need low <= high"));
}

double UniformSize::raw(Rng& rng) const {
  return static_cast<double>(boost::random::uniform_int_distribution<std::int64_t>(low_, high_)(rng.engine()));
}

double UniformSize::expectation(const Fn& g) const {
  // Exact for up to 2^20 values; wider ranges use 2^20 evenly spread values.
  const std::int64_t n = high_ - low_ + 1;
  const std::int64_t points = std::min<std::int64_t>(n, 1 << 20);
  double total = 0;
  for (std::int64_t j = 0; j < points; ++j) {
    const std::int64_t v = low_ + (n == points ? j : static_cast<std::int64_t>((j + 0.5) * n / points));
    total += g(round_up(static_cast<double>(v)));
  }
  return total / static_cast<double>(points);
}

std::string UniformSize::describe() const {
  return str("uniform(low=", low_, ", high=", high_, round_to_suffix(), ")");
}

// --- LognormalSize ---

LognormalSize::LognormalSize(double mu, double sigma, std::int64_t round_to)
    : SizeDistribution(round_to), mu_(mu), sigma_(sigma) {
  if (!std::isfinite(mu)) throw ValueError(str("mu=", num(mu), " must be finite"));
  check_positive_finite(sigma, "sigma");
}

double LognormalSize::raw(Rng& rng) const {
  return boost::random::lognormal_distribution<double>(mu_, sigma_)(rng.engine());
}

double LognormalSize::expectation(const Fn& g) const {
  return normal_expectation([&](double z) { return g(round_up(std::exp(mu_ + sigma_ * z))); });
}

std::string LognormalSize::describe() const {
  return str("lognormal(mu=", num(mu_), ", sigma=", num(sigma_), round_to_suffix(), ")");
}

// --- ClippedGaussianSize ---

ClippedGaussianSize::ClippedGaussianSize(double mean, double stddev, double low, double high, std::int64_t round_to)
    : SizeDistribution(round_to), mean_(mean), std_(stddev), low_(low), high_(high) {
  if (!std::isfinite(mean)) throw ValueError(str("mean=", num(mean), " must be finite"));
  check_positive_finite(stddev, "std");
  if (!std::isfinite(low)) throw ValueError(str("low=", num(low), " must be finite"));
  if (std::isnan(high) || high == -std::numeric_limits<double>::infinity()) {
    throw ValueError(str("high=", num(high), " must be a number or inf"));
  }
  if (low > high) throw ValueError(str("low=", num(low), " is above high=", num(high), ": need low <= high"));
}

double ClippedGaussianSize::raw(Rng& rng) const {
  return std::clamp(boost::random::normal_distribution<double>(mean_, std_)(rng.engine()), low_, high_);
}

double ClippedGaussianSize::expectation(const Fn& g) const {
  return normal_expectation([&](double z) { return g(round_up(std::clamp(mean_ + std_ * z, low_, high_))); });
}

std::string ClippedGaussianSize::describe() const {
  return str("clipped_gaussian(mean=", num(mean_), ", std=", num(std_), ", low=", num(low_), ", high=", num(high_),
             round_to_suffix(), ")");
}

// --- EmpiricalSize ---

EmpiricalSize::EmpiricalSize(std::vector<double> values, std::vector<double> weights, std::int64_t round_to)
    : SizeDistribution(round_to), values_(std::move(values)), weights_(std::move(weights)) {
  if (values_.empty()) throw ValueError("values is empty: give at least one size");
  if (values_.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw ValueError(str("values has ", values_.size(), " elements, more than 2^32 - 1"));
  }
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (!detail::positive_finite(values_[i])) {
      throw ValueError(str("values[", i, "]=", num(values_[i]), " must be positive and finite"));
    }
  }
  if (!weights_.empty()) {
    weights_ = checked_weights(std::move(weights_), values_.size(), "weights", "values");
    table_ = detail::AliasTable(weights_);
  }
}

double EmpiricalSize::raw(Rng& rng) const {
  if (!weights_.empty()) return values_[table_.pick(rng)];
  boost::random::uniform_int_distribution<std::size_t> index(0, values_.size() - 1);
  return values_[index(rng.engine())];
}

double EmpiricalSize::expectation(const Fn& g) const {
  double total = 0;
  for (std::size_t i = 0; i < values_.size(); ++i) {
    const double p = weights_.empty() ? 1.0 / static_cast<double>(values_.size()) : table_.probabilities()[i];
    if (p > 0) total += p * g(round_up(values_[i]));
  }
  return total;
}

std::string EmpiricalSize::describe() const {
  // Long sample sets are summarised: the full list would swamp a log line.
  if (values_.size() > 32) {
    return str("empirical(", values_.size(), " values", weights_.empty() ? "" : " with weights", ", mean=", num(mean()),
               round_to_suffix(), ")");
  }
  std::string out = "empirical(values=" + list(values_);
  if (!weights_.empty()) out += ", weights=" + list(weights_);
  return out + round_to_suffix() + ")";
}

// --- SizeMixture ---

SizeMixture::SizeMixture(std::vector<SizePtr> components, std::vector<double> weights, std::int64_t round_to,
                         std::string label)
    : SizeDistribution(round_to), components_(std::move(components)), label_(std::move(label)) {
  if (components_.empty()) throw ValueError("components is empty: give at least one size distribution");
  for (std::size_t i = 0; i < components_.size(); ++i) check_component(components_[i], str("components[", i, "]"));
  weights_ = checked_weights(std::move(weights), components_.size(), "weights", "components");
  table_ = detail::AliasTable(weights_);
}

double SizeMixture::expectation(const Fn& g) const {
  double total = 0;
  for (std::size_t i = 0; i < components_.size(); ++i) {
    const double p = table_.probabilities()[i];
    if (p > 0) total += p * components_[i]->expectation([&](double x) { return g(round_up(x)); });
  }
  return total;
}

std::string SizeMixture::describe() const {
  if (!label_.empty()) return label_;
  std::string parts;
  for (const auto& c : components_) parts += (parts.empty() ? "" : "; ") + c->describe();
  const char quote = parts.find('\'') == std::string::npos ? '\'' : '"';
  return str("mixture(components=", quote, parts, quote, ", weights=", list(weights_), round_to_suffix(), ")");
}

// --- FallbackSize ---

FallbackSize::FallbackSize(SizePtr base, double low, double high, SizePtr fallback, std::int64_t round_to)
    : SizeDistribution(round_to), base_(std::move(base)), low_(low), high_(high), fallback_(std::move(fallback)) {
  check_component(base_, "base");
  check_component(fallback_, "fallback");
  if (std::isnan(low)) throw ValueError("low=nan must be a number");
  if (std::isnan(high)) throw ValueError("high=nan must be a number");
  if (low > high) throw ValueError(str("low=", num(low), " is above high=", num(high), ": need low <= high"));
}

double FallbackSize::expectation(const Fn& g) const {
  const auto inside = [this](double x) { return x >= low_ && x <= high_; };
  const double kept = base_->expectation([&](double x) { return inside(x) ? g(round_up(x)) : 0.0; });
  const double p_out = base_->expectation([&](double x) { return inside(x) ? 0.0 : 1.0; });
  if (p_out == 0) return kept;
  return kept + p_out * fallback_->expectation([&](double x) { return g(round_up(x)); });
}

std::string FallbackSize::describe() const {
  const std::string b = base_->describe(), f = fallback_->describe();
  const char quote = (b + f).find('\'') == std::string::npos ? '\'' : '"';
  return str("fallback(base=", quote, b, quote, ", low=", num(low_), ", high=", num(high_), ", fallback=", quote, f,
             quote, round_to_suffix(), ")");
}

// --- presets ---

std::shared_ptr<SizeMixture> kairos_sizes(std::int64_t round_to) {
  // helper.random_samp: rand_num = randint(1, 100) is uniform on 1..99; <= 8, <= 30, <= 35, else.
  auto lognormal = std::make_shared<LognormalSize>(5.1, 0.2);
  auto body = std::make_shared<FallbackSize>(lognormal, 100.0, 200.0, std::make_shared<UniformSize>(190, 199));
  return std::make_shared<SizeMixture>(
      std::vector<SizePtr>{std::make_shared<UniformSize>(1, 99), std::make_shared<UniformSize>(200, 599),
                           std::make_shared<UniformSize>(600, 999), body},
      std::vector<double>{8, 22, 5, 64}, round_to, str("kairos_mix(round_to=", round_to, ")"));
}

std::shared_ptr<SizeMixture> ribbon_sizes(std::int64_t round_to) {
  // query/functions.py random_samp: rand_num uniform on 1..99; <= 2, <= 12, else the lognormal,
  // which is replaced when > 500 (so kept on [0, 500]).
  auto lognormal = std::make_shared<LognormalSize>(5.1, 0.2);
  auto body = std::make_shared<FallbackSize>(lognormal, 0.0, 500.0, std::make_shared<UniformSize>(400, 499));
  return std::make_shared<SizeMixture>(
      std::vector<SizePtr>{std::make_shared<UniformSize>(1, 99), std::make_shared<UniformSize>(250, 499), body},
      std::vector<double>{2, 10, 87}, round_to, str("ribbon_mix(round_to=", round_to, ")"));
}

// --- bulk ---

std::vector<std::int32_t> generate_sizes(const SizeDistribution& sizes, std::uint64_t seed, std::int64_t count) {
  if (count < 0) throw ValueError(str("count=", count, " must be >= 0"));
  core::check_fits_memory(static_cast<double>(count), sizeof(std::int32_t), str("count=", count), "count", "the sizes");
  std::vector<std::int32_t> out;
  out.reserve(static_cast<std::size_t>(std::min<std::int64_t>(count, std::int64_t{1} << 26)));
  Rng rng(seed, kSizeStream);
  for (std::int64_t n = 0; n < count; ++n) {
    if ((n & 4095) == 0) core::check_interrupt();
    out.push_back(sizes.sample(rng));
  }
  return out;
}

}  // namespace servelab::workload
