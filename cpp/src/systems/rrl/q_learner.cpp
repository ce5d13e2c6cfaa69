#include "servelab/systems/rrl/q_learner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::rrl {
namespace {

// Region lists cost |C|^2 distance evaluations and memory per member: beyond this, coarsen the space.
constexpr std::size_t kMaxRegionSpace = 40000;
// Q-values, weights and update counts per (load level, configuration): 20 bytes each.
constexpr std::size_t kMaxTableEntries = 10'000'000;
// exp() arguments beyond this overflow a double: the state's weights are then re-referenced.
constexpr double kMaxExponent = 600;

}  // namespace

void LearnerOptions::validate() const {
  if (region && !(std::isfinite(radius) && radius > 0)) {
    throw ValueError(str("radius=", radius,
                         " must be positive for region-based learning (a region of radius 0 is point-based "
                         "Q-learning: method 'qlearning')"));
  }
  if (!(std::isfinite(beta) && beta >= 0 && beta <= 1e6)) throw ValueError(str("beta=", beta, " must be in [0, 1e6]"));
  if (!(std::isfinite(gamma) && gamma >= 0 && gamma < 1)) throw ValueError(str("gamma=", gamma, " must be in [0, 1)"));
  if (!(std::isfinite(lr_power) && lr_power > 0.5 && lr_power <= 1)) {
    throw ValueError(str("lr_power=", lr_power, " must be in (0.5, 1]"));
  }
  if (!(std::isfinite(constant_lr) && constant_lr >= 0 && constant_lr <= 1)) {
    throw ValueError(str("constant_lr=", constant_lr, " must be in [0, 1] (0: the visit schedule)"));
  }
  if (initial != "optimistic" && initial != "first") {
    throw ValueError(
        str("initial='", initial, "' is unknown; choose 'optimistic' (1/|C|) or 'first' (the first cost)"));
  }
  if (region) estimator.validate();
}

QLearner::QLearner(const ConfigSpace& space, std::vector<Setting> settings, std::size_t states, double rate_scale,
                   Objective objective, LearnerOptions options, std::uint64_t seed)
    : space_(space),
      settings_(std::move(settings)),
      size_(space.size()),
      states_(states),
      rate_scale_(rate_scale),
      objective_(objective),
      options_(std::move(options)),
      rng_(seed, "rrl/policy") {
  options_.validate();
  objective_.validate();
  if (settings_.size() != size_) throw ValueError("settings do not match the space");
  if (states_ < 1 || states_ > 4096) throw ValueError(str("states=", states_, " must be in 1..4096"));
  if (states_ * size_ > kMaxTableEntries) {
    throw ValueError(str("states=", states_, " load levels x ", size_, " configurations is more than ",
                         kMaxTableEntries, " Q-table entries: take fewer load levels (max_states) or a coarser space"));
  }
  if (!(std::isfinite(rate_scale) && rate_scale > 0)) {
    throw ValueError(str("rate_scale=", rate_scale, " must be positive and finite"));
  }
  if (options_.region) {
    if (size_ > kMaxRegionSpace) {
      throw ValueError(str("the space has ", size_, " configurations; region-based learning supports up to ",
                           kMaxRegionSpace, " (coarsen a knob)"));
    }
    regions_ = space.regions(options_.radius);
    estimator_.emplace(space.dims() + 1, options_.estimator, seed);
  }
  const double q0 = 1.0 / static_cast<double>(size_);  // Algorithm 1's initial perception
  q_.assign(states_ * size_, q0);
  visits_.assign(states_ * size_, 0);
  measured_.assign(states_ * size_, 0);
  weights_.assign(states_ * size_, 1.0);
  weight_ref_.assign(states_, q0);
  learned_.assign(states_, 0);
  partial_sums_.assign(size_, 0.0);
}

std::optional<std::size_t> QLearner::nearest_learned(std::size_t state) const {
  for (std::size_t d = 0; d < states_; ++d) {
    if (state >= d && learned_[state - d]) return state - d;
    if (state + d < states_ && learned_[state + d]) return state + d;
  }
  return std::nullopt;
}

void QLearner::adopt(std::size_t state) {
  if (learned_[state]) return;
  if (const auto from = nearest_learned(state)) {
    std::copy_n(&q_[*from * size_], size_, &q_[state * size_]);
    refresh_weights(state);
  }
  learned_[state] = 1;
}

void QLearner::refresh_weights(std::size_t state) {
  const double* q = &q_[state * size_];
  const double ref = *std::min_element(q, q + size_);
  weight_ref_[state] = ref;
  if (state == sum_state_) sum_valid_ = 0;
  const double scale = options_.beta * (1 - options_.gamma);
  double* w = &weights_[state * size_];
  for (std::size_t c = 0; c < size_; ++c) w[c] = std::exp(-scale * (q[c] - ref));
}

void QLearner::set_q(std::size_t state, std::size_t config, double value) {
  q_[state * size_ + config] = value;
  const double exponent = -options_.beta * (1 - options_.gamma) * (value - weight_ref_[state]);
  if (exponent > kMaxExponent) {
    refresh_weights(state);
  } else {
    weights_[state * size_ + config] = std::exp(exponent);
    if (state == sum_state_) sum_valid_ = std::min(sum_valid_, config);
  }
}

double QLearner::weight_total(std::size_t state) {
  if (state != sum_state_) {
    sum_state_ = state;
    sum_valid_ = 0;
  }
  // The same left-to-right sum as std::accumulate(w, w + size_, 0.0), resumed at the first changed weight.
  const double* w = &weights_[state * size_];
  double total = sum_valid_ > 0 ? partial_sums_[sum_valid_ - 1] : 0.0;
  for (std::size_t c = sum_valid_; c < size_; ++c) {
    total += w[c];
    partial_sums_[c] = total;
  }
  sum_valid_ = size_;
  return total;
}

std::size_t QLearner::choose(std::size_t state) {
  if (state >= states_) throw ValueError(str("state=", state, " is not below ", states_));
  adopt(state);
  const double* w = &weights_[state * size_];
  double total = weight_total(state);
  if (!(total > 1e-250) || !std::isfinite(total)) {
    refresh_weights(state);
    total = weight_total(state);
  }
  double u = rng_.uniform() * total;
  for (std::size_t c = 0; c < size_; ++c) {
    u -= w[c];
    if (u < 0) return c;
  }
  // Rounding left u a hair above 0: the last configuration of positive weight.
  for (std::size_t c = size_; c-- > 0;) {
    if (w[c] > 0) return c;
  }
  return 0;
}

std::size_t QLearner::greedy(std::size_t state) const {
  if (state >= states_) throw ValueError(str("state=", state, " is not below ", states_));
  const std::size_t s = learned_[state] ? state : nearest_learned(state).value_or(state);
  const double* q = &q_[s * size_];
  return static_cast<std::size_t>(std::min_element(q, q + size_) - q);
}

std::size_t QLearner::region_size(std::size_t config) const {
  if (config >= size_) throw ValueError(str("config=", config, " is not below ", size_));
  return options_.region ? regions_[config].size() : 1;
}

double QLearner::mean_region_size() const {
  if (!options_.region) return 1;
  double sum = 0;
  for (const auto& r : regions_) sum += static_cast<double>(r.size());
  return sum / static_cast<double>(size_);
}

void QLearner::learn(std::size_t state, std::size_t config, double rate_qps, double metric_ms, std::size_t next_state) {
  if (state >= states_ || next_state >= states_) {
    throw ValueError(str("state=", state, " or next_state=", next_state, " is not below ", states_));
  }
  if (config >= size_) throw ValueError(str("config=", config, " is not below ", size_));
  if (!(std::isfinite(metric_ms) && metric_ms > 0)) {
    throw ValueError(str("latency=", metric_ms, " ms must be positive and finite"));
  }
  if (!(std::isfinite(rate_qps) && rate_qps >= 0)) throw ValueError(str("rate_qps=", rate_qps, " must be >= 0"));
  adopt(state);
  if (options_.gamma > 0) adopt(next_state);
  if (options_.initial == "first" && !measured_any_) {
    // The artifact's start: every Q-value (every load level) at the first measured cost.
    std::fill(q_.begin(), q_.end(), objective_.cost(metric_ms, settings_[config].resource_share));
    for (std::size_t s = 0; s < states_; ++s) refresh_weights(s);
  }
  measured_any_ = true;
  const double* next = &q_[next_state * size_];
  const double future = options_.gamma > 0 ? options_.gamma * *std::min_element(next, next + size_) : 0.0;
  // Measured: the count of measurements of (s, c); estimated: the count of all its updates.
  const auto update = [&](std::size_t c, double cost, bool measured) {
    std::uint32_t& n = (measured ? measured_ : visits_)[state * size_ + c];
    if (measured) ++visits_[state * size_ + c];
    const double alpha =
        options_.constant_lr > 0 ? options_.constant_lr : std::pow(1.0 + n, -options_.lr_power);  // Eq. 2
    ++n;
    set_q(state, c, (1 - alpha) * q(state, c) + alpha * (cost + future));
  };
  if (!options_.region) {
    update(config, objective_.cost(metric_ms, settings_[config].resource_share), true);
    return;
  }
  // Eq. 1: train f on the measurement, then estimate every region member relative to it.
  const std::size_t d = space_.dims() + 1;
  const auto load = static_cast<float>(rate_qps / rate_scale_);
  const auto& region = regions_[config];
  inputs_.resize(region.size() * d);
  predictions_.resize(region.size());
  std::size_t self = 0;
  for (std::size_t i = 0; i < region.size(); ++i) {
    const auto coords = space_.coords(region[i]);
    std::copy(coords.begin(), coords.end(), inputs_.begin() + static_cast<std::ptrdiff_t>(i * d));
    inputs_[i * d + d - 1] = load;
    if (region[i] == config) self = i;
  }
  estimator_->observe(std::span<const float>(&inputs_[self * d], d), metric_ms);
  estimator_->predict_log(inputs_, region.size(), predictions_);
  for (std::size_t i = 0; i < region.size(); ++i) {
    const std::size_t c = region[i];
    const double estimate =
        c == config ? metric_ms : metric_ms * std::exp(static_cast<double>(predictions_[i] - predictions_[self]));
    update(c, objective_.cost(estimate, settings_[c].resource_share), c == config);
  }
}

}  // namespace servelab::rrl
