// Policy iteration and policy evaluation (exact linear solves, or sweeps for discount 1).
#include <algorithm>
#include <cmath>
#include <limits>

#include "checks.hpp"
#include "iterate.hpp"
#include "linear.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/solvers/mdp/solve.hpp"
#include "sweeper.hpp"

namespace servelab::solvers::mdp {

namespace {

// Switch an action only for a gain above rounding noise, so policy iteration cannot cycle
// between equally good actions.
bool clearly_better(double candidate, double current) {
  return candidate > current + 1e-12 * std::max(1.0, std::abs(candidate));
}

}  // namespace

Solution policy_evaluation(const Mdp& mdp, const Policy& policy, const SolveOptions& options) {
  detail::check_solve_options(mdp, options, "policy_evaluation");
  validate_policy(mdp, policy);
  if (options.discount == 1.0) return detail::iterate(mdp, options, &policy, "policy_evaluation");
  Solution out;
  out.values = detail::solve_discounted(mdp, policy, options.discount, &out.residual);
  out.policy = policy;
  out.iterations = 1;
  out.converged = true;
  return out;
}

std::vector<double> evaluate_policy(const Mdp& mdp, const Policy& policy, const SolveOptions& options) {
  return policy_evaluation(mdp, policy, options).values;
}

GainBias average_reward(const Mdp& mdp, const Policy& policy, std::int32_t reference_state) {
  detail::check_shape(mdp, "average_reward");
  validate_policy(mdp, policy);
  if (reference_state < 0 || reference_state >= mdp.num_states()) {
    throw ValueError(
        str("average_reward: reference_state=", reference_state, " is not a state (there are ", mdp.num_states(), ")"));
  }
  double error = 0.0;
  return detail::solve_average(mdp, policy, reference_state, &error, "average_reward");
}

Solution policy_iteration(const Mdp& mdp, const SolveOptions& o) {
  detail::check_solve_options(mdp, o, "policy_iteration");
  const std::int32_t n = mdp.num_states();
  const bool average = o.discount == 1.0;
  detail::Sweeper sweeper(mdp, o.discount, o.threads);

  Solution out;
  out.policy.assign(static_cast<std::size_t>(n), 0);
  {
    const std::vector<double> start = o.initial_values.empty() ? std::vector<double>(n, 0.0) : o.initial_values;
    std::vector<double> scratch(static_cast<std::size_t>(n));
    sweeper.sweep(start.data(), scratch.data(), out.policy.data());
  }
  double error = 0.0;
  const auto evaluate = [&] {
    core::check_interrupt();
    if (!average) return detail::solve_discounted(mdp, out.policy, o.discount, &error);
    auto gb = detail::solve_average(mdp, out.policy, o.reference_state, &error, "policy_iteration");
    out.gain = gb.gain;
    return std::move(gb.bias);
  };

  std::vector<double> v = evaluate();
  std::vector<double> q(static_cast<std::size_t>(mdp.num_pairs()));
  Policy next = out.policy;
  while (true) {
    sweeper.q_values(v.data(), q.data());
    bool changed = false;
    double lowest = std::numeric_limits<double>::infinity(), highest = -lowest;
    for (std::int32_t s = 0; s < n; ++s) {
      const std::int64_t first = mdp.state_begin[s];
      std::int64_t best = first;
      for (std::int64_t a = first + 1; a < mdp.state_begin[s + 1]; ++a) {
        if (q[a] > q[best]) best = a;
      }
      // T v - v: 0 at a discounted optimum; the optimal gain in every state at an average one.
      lowest = std::min(lowest, q[best] - v[s]);
      highest = std::max(highest, q[best] - v[s]);
      next[s] = out.policy[s];
      if (clearly_better(q[best], q[first + out.policy[s]])) {
        next[s] = static_cast<std::int32_t>(best - first);
        changed = true;
      }
    }
    out.residual = average ? highest - lowest : std::max(std::abs(lowest), std::abs(highest));
    if (average) {
      out.gain_lower = lowest;
      out.gain_upper = highest;
    }
    if (!changed) {
      out.converged = true;
      break;
    }
    if (out.iterations >= o.max_iterations) break;  // policy and values stay a matching pair
    ++out.iterations;
    out.policy.swap(next);
    v = evaluate();
  }
  out.values = std::move(v);
  return out;
}

}  // namespace servelab::solvers::mdp
