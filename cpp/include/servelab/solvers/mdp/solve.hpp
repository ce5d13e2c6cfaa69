// Solvers for finite MDPs (mdp.hpp): value iteration, policy iteration, policy evaluation and the
// stationary distribution of a policy. Deterministic: the same MDP gives the same result for any
// thread count (ties between actions go to the lowest action index).
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
  double tolerance = 1e-9;           // stop when the residual falls below this ...
  std::int32_t max_iterations = 10000;
  std::int32_t min_iterations = 0;   // ... but never before this many sweeps (RAMSIS runs 100)
  std::int32_t threads = 0;          // 0: as many as pay off; results do not depend on it
};

struct Solution {
  Policy policy;               // greedy policy of the final values
  std::vector<double> values;  // per state
  std::int32_t iterations = 0;
  double residual = 0.0;       // last sweep's max (discounted) or span (undiscounted) change
  bool converged = false;
};

Solution value_iteration(const Mdp& mdp, const SolveOptions& options = {});
Solution policy_iteration(const Mdp& mdp, const SolveOptions& options = {});
// Values of a fixed policy (iterative for discount 1, i.e. the total reward over max_iterations).
std::vector<double> evaluate_policy(const Mdp& mdp, const Policy& policy, const SolveOptions& options = {});

struct StationaryOptions {
  double tolerance = 1e-12;  // L1 change between power iterations
  std::int32_t max_iterations = 100000;
  std::int32_t min_iterations = 0;
};
struct Stationary {
  std::vector<double> distribution;  // per state, sums to 1
  std::int32_t iterations = 0;
  double residual = 0.0;
  bool converged = false;
};
// Power iteration on the policy's Markov chain from the uniform distribution (or `start`).
Stationary stationary_distribution(const Mdp& mdp, const Policy& policy, const StationaryOptions& options = {},
                                   std::span<const double> start = {});

// sum_s distribution[s] * per_pair[pair chosen by policy in s]: e.g. expected reward or expected
// violation under the stationary distribution.
double expectation(const Mdp& mdp, const Policy& policy, std::span<const double> distribution,
                   std::span<const double> per_pair);

}  // namespace servelab::solvers::mdp
