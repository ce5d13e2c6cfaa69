// Solvers for finite MDPs (mdp.hpp): value iteration, policy iteration, policy evaluation and the
// stationary distribution of a policy. Deterministic: the same MDP gives the same result for any
// thread count (ties between actions go to the lowest action index).
//
// Criteria: discount < 1 is the discounted total reward. discount == 1 is undiscounted: value
// iteration and iterative policy evaluation then give the total reward over the sweeps run (a
// finite horizon; RAMSIS runs exactly 100 sweeps), or with `relative` the relative values of the
// average-reward criterion; policy iteration with discount 1 optimises the average reward (gain)
// of unichain MDPs.
//
// Run a fixed number of sweeps k: max_iterations = k, tolerance = 0.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "servelab/solvers/mdp/mdp.hpp"

namespace servelab::solvers::mdp {

struct SolveOptions {
  // 1.0: undiscounted (total reward over the sweeps run; convergence judged on the span of the
  // value change, as relative value iteration does, so an average-reward MDP stops too).
  double discount = 1.0;
  double tolerance = 1e-9;  // stop when the residual falls below this ...
  std::int32_t max_iterations = 10000;
  std::int32_t min_iterations = 0;  // ... but never before this many sweeps (RAMSIS runs 100)
  std::int32_t threads = 0;         // 0: as many as pay off; results do not depend on it
  // Relative value iteration (discount 1): after each sweep subtract the new value of
  // reference_state from every value, so values stay bounded and converge to the bias.
  bool relative = false;
  std::int32_t reference_state = 0;      // also the state whose bias is 0 in average-reward policy iteration
  std::vector<double> initial_values{};  // empty: all zero
};

struct Solution {
  Policy policy;               // greedy policy of the final values
  std::vector<double> values;  // per state
  std::int32_t iterations = 0;
  double residual = 0.0;  // last sweep's max (discounted) or span (undiscounted) change
  bool converged = false;
  // discount 1 only (0 otherwise): the last sweep's smallest and largest value change bound the
  // optimal average reward per step (for value iteration; exact for policy iteration), and gain
  // is their midpoint.
  double gain = 0.0;
  double gain_lower = 0.0;
  double gain_upper = 0.0;
};

Solution value_iteration(const Mdp& mdp, const SolveOptions& options = {});
// discount < 1: Howard's policy iteration with exact policy evaluation. discount 1: average-reward
// policy iteration (every policy met must be unichain; values are the bias, 0 at reference_state,
// gain is the optimal average reward). Starts from the greedy policy of initial_values; an action
// is only replaced by a strictly better one, so the loop ends. iterations = improvement rounds
// (at most max_iterations); tolerance, min_iterations and relative are not used.
Solution policy_iteration(const Mdp& mdp, const SolveOptions& options = {});
// Values of a fixed policy (iterative for discount 1, i.e. the total reward over max_iterations).
std::vector<double> evaluate_policy(const Mdp& mdp, const Policy& policy, const SolveOptions& options = {});
// The same with its report: exact linear solve for discount < 1 (iterations 1, residual = the
// largest equation error); sweeps for discount 1 (residual = span of the last change, and the
// gain bounds as for value iteration). `policy` in the result is the one evaluated.
Solution policy_evaluation(const Mdp& mdp, const Policy& policy, const SolveOptions& options = {});

// Average reward (gain) and bias of a policy whose Markov chain has a single recurrent class:
// h + gain = r + P h with h[reference_state] = 0. ValueError if the chain is not unichain.
struct GainBias {
  double gain = 0.0;
  std::vector<double> bias;
};
GainBias average_reward(const Mdp& mdp, const Policy& policy, std::int32_t reference_state = 0);

// One Bellman backup without maximisation: q[pair] = reward[pair] + discount * sum_t p_t v[next_t].
std::vector<double> q_values(const Mdp& mdp, std::span<const double> values, double discount = 1.0);
// The greedy policy of `values` (ties to the lowest action index).
Policy greedy_policy(const Mdp& mdp, std::span<const double> values, double discount = 1.0);

struct StationaryOptions {
  double tolerance = 1e-12;  // L1 change between power iterations
  std::int32_t max_iterations = 100000;
  std::int32_t min_iterations = 0;
  // Iterate x <- (x + x P) / 2 instead of x <- x P: the same fixed point, but it converges on
  // periodic chains too.
  bool lazy = false;
  std::int32_t threads = 0;  // 0: as many as pay off; results do not depend on it
};
struct Stationary {
  std::vector<double> distribution;  // per state, sums to 1
  std::int32_t iterations = 0;       // the steps the distribution stands for
  double residual = 0.0;             // L1 change of the last step
  bool converged = false;            // the last change was below tolerance, or exactly 0
};
// Power iteration on the policy's Markov chain from the uniform distribution (or `start`, which
// is normalised first). The distribution is renormalised after every step (so rows summing to 1
// only within the validation tolerance do not leak mass). For a fixed number of steps k:
// max_iterations = k, tolerance = 0. Once the iterates reach an exact fixed point or a 2-cycle
// (as floating point does after enough steps) the remaining steps are not computed: the result
// is still bit-identical to computing them.
Stationary stationary_distribution(const Mdp& mdp, const Policy& policy, const StationaryOptions& options = {},
                                   std::span<const double> start = {});

// sum_s distribution[s] * per_pair[pair chosen by policy in s]: e.g. expected reward or expected
// violation under the stationary distribution. Summed in state order.
double expectation(const Mdp& mdp, const Policy& policy, std::span<const double> distribution,
                   std::span<const double> per_pair);

}  // namespace servelab::solvers::mdp
