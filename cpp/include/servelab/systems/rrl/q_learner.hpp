// Region-based Q-learning (RRL, Sec. 4.2, Eq. 2-3, Algorithm 1) and, with no region and no
// estimator, the point-based Q-learning baseline (Watkins) it generalises.
//
// State s: the load level (the measured arrival rate, binned). Action c: a configuration.
// Q starts at 1/|C| everywhere (Algorithm 1, initial = "optimistic"). Below every cost (all costs
// are positive), so each configuration that no observation has reached yet looks best: the first
// steps sweep the space, which a region sweeps |C(c)| times faster than a point does (the speed-up
// Theorem 4.1 analyses). initial = "first" starts every Q at the first measured cost instead, as
// the artifact does (it measures the centre configuration and copies its latency everywhere): an
// unreached configuration then looks as good as the first one measured, and no sweep is forced.
// Each step, after measuring r_t under (s_t, c_t) and the next state s_{t+1}:
//   for every c within distance delta of c_t:
//     Q(s_t, c) <- (1 - alpha) Q(s_t, c) + alpha (rhat_t(s_t, c) + gamma min_c' Q(s_{t+1}, c'))  (Eq. 2)
// with rhat from the estimator (Eq. 1) (point-based: only c_t, with r_t itself). The policy is the
// Boltzmann distribution pi(s, c) ~ exp(-beta (1 - gamma) Q(s, c)) (Eq. 3; the factor 1 - gamma keeps
// beta in units of the cost, since Q accumulates cost / (1 - gamma)).
// Learning rate: alpha = (1 + n)^-omega, omega in (0.5, 1] (Sum alpha = inf, Sum alpha^2 < inf,
// as Sec. 4.2 assumes), where n counts, for the measured configuration, its earlier measurements in
// that state, and for the other region members all their earlier updates (the paper is silent on
// how alpha_t is indexed). So a configuration's first measurement replaces whatever its neighbours'
// estimates had put there, and later estimates move it less and less: without this, a measured
// configuration updated as a neighbour many times before keeps its estimation error (an optimum
// next to a capacity cliff, estimated from the cliff's far side, is never tried again). Or a
// constant (the artifact uses 0.3), which tracks a changing workload but does not satisfy the
// second condition.
// Costs are estimated for every region member by the estimator, so costs use the configuration's
// own resource share (SLO objective) with the estimated latency.
// Discount: the configuration does not change the next load level, so gamma > 0 adds the same
// expected min_c' Q(s', c') to every configuration of a state, but early on that bootstrap is the
// optimistic 1/|C| and later a real cost: configurations first updated early keep a lower Q for
// many steps, a bias that dwarfs the differences between good configurations. The artifact's
// update (Q = 0.7 Q + 0.3 Q_est) has no bootstrap at all; gamma = 0 is our default too.
// Unseen load levels (the paper is silent): the first time a level is used, it starts from a copy
// of the Q-values of the nearest level already learned (update counts reset, so its own
// measurements take over at once), instead of 1/|C| everywhere, which would send a rare burst to a
// random configuration; greedy() of a level never used answers with the nearest learned level.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "servelab/core/rng.hpp"
#include "servelab/systems/rrl/config_space.hpp"
#include "servelab/systems/rrl/deep_rl.hpp"
#include "servelab/systems/rrl/episode.hpp"
#include "servelab/systems/rrl/estimator.hpp"
#include "servelab/systems/rrl/tuner.hpp"

namespace servelab::rrl {

struct LearnerOptions {
  bool region = true;                  // false: point-based Q-learning (no estimator)
  double radius = 1;                   // delta, in grid steps (1: the nearest neighbours); region only, > 0
  double beta = 20;                    // Boltzmann inverse temperature, per unit of cost
  double gamma = 0;                    // discount factor, in [0, 1) (0, as the artifact's update; see above)
  double lr_power = 0.8;               // omega
  double constant_lr = 0;              // > 0: use this alpha instead of the visit schedule
  std::string initial = "optimistic";  // Q's start: "optimistic" (1/|C|) or "first" (see above)
  EstimatorOptions estimator;
  DeepRlOptions deep;  // the deep-RL baselines' settings (deep_rl.hpp); unused here
  void validate() const;
};

class QLearner final : public Tuner {
 public:
  // `states`: the number of load levels; `rate_scale`: divides the arrival rate for the estimator.
  QLearner(const ConfigSpace& space, std::vector<Setting> settings, std::size_t states, double rate_scale,
           Objective objective, LearnerOptions options, std::uint64_t seed);

  // Draws a configuration from the Boltzmann policy of `state`.
  std::size_t choose(std::size_t state);
  // The configuration of lowest Q in `state` (the lowest index among ties).
  std::size_t greedy(std::size_t state) const;
  // Learns from one episode: (state, config) measured `metric_ms` while arrivals came at `rate_qps`;
  // next_state is the load level the next decision sees.
  void learn(std::size_t state, std::size_t config, double rate_qps, double metric_ms, std::size_t next_state) override;
  std::size_t decide(std::size_t state, double) override { return choose(state); }
  std::size_t best(std::size_t state) const override { return greedy(state); }

  double q(std::size_t state, std::size_t config) const { return q_[state * size_ + config]; }
  std::size_t region_size(std::size_t config) const;
  double mean_region_size() const override;
  const LatencyEstimator* estimator() const { return estimator_ ? &*estimator_ : nullptr; }

 private:
  void set_q(std::size_t state, std::size_t config, double value);
  void refresh_weights(std::size_t state);
  // The sum of `state`'s weights, in index order; partial sums kept from the previous call, so a
  // step recomputes only from the lowest weight that changed since (the region's first member).
  double weight_total(std::size_t state);
  // The nearest level with observations (ties: the lower), or nullopt when none has any.
  std::optional<std::size_t> nearest_learned(std::size_t state) const;
  // Makes `state` learned, copying the nearest learned level's Q-values if there is one.
  void adopt(std::size_t state);

  const ConfigSpace& space_;
  std::vector<Setting> settings_;
  std::size_t size_, states_;
  double rate_scale_;
  Objective objective_;
  LearnerOptions options_;
  Rng rng_;
  std::vector<std::vector<std::uint32_t>> regions_;
  std::optional<LatencyEstimator> estimator_;
  std::vector<double> q_, weights_, weight_ref_;  // weights: exp(-beta (1 - gamma) (Q - ref))
  std::vector<std::uint32_t> visits_, measured_;
  std::vector<char> learned_;                // per state: has Q-values of its own (or adopted)
  bool measured_any_ = false;                // initial "first": the first measurement has set Q
  std::vector<float> inputs_, predictions_;  // scratch for region estimates
  // weight_total's cache: running sums of sum_state_'s weights, valid below index sum_valid_.
  std::vector<double> partial_sums_;
  std::size_t sum_state_ = 0, sum_valid_ = 0;
};

}  // namespace servelab::rrl
