// Value iteration (and iterative policy evaluation, the same loop with the policy fixed).
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "iterate.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/solvers/mdp/solve.hpp"
#include "sweeper.hpp"

namespace servelab::solvers::mdp {

namespace detail {

namespace {

// The values (or their change in one sweep) left the range of doubles: say how large the rewards
// are, since rescaling them is the fix.
[[noreturn]] void values_overflowed(const Mdp& mdp, const std::vector<double>& values, std::int32_t sweeps,
                                    const char* function) {
  double largest = 0.0;
  for (const double r : mdp.reward) largest = std::max(largest, std::abs(r));
  std::string where = "their change between sweeps overflowed";
  for (std::size_t s = 0; s < values.size(); ++s) {
    if (!std::isfinite(values[s])) {
      where = str("state ", s, ": ", values[s]);
      break;
    }
  }
  throw ValueError(str(function, ": the values overflowed after ", sweeps, sweeps == 1 ? " sweep (" : " sweeps (",
                       where, "): rewards up to |reward|=", largest,
                       " are too large to add up over this many sweeps; divide the rewards by a constant "
                       "(the policy is unchanged) or run fewer sweeps"));
}

}  // namespace

Solution iterate(const Mdp& mdp, const SolveOptions& o, const Policy* fixed, const char* function) {
  const std::int32_t n = mdp.num_states();
  std::vector<double> v = o.initial_values.empty() ? std::vector<double>(n, 0.0) : o.initial_values;
  std::vector<double> v_new(static_cast<std::size_t>(n));
  Solution out;
  out.policy.assign(static_cast<std::size_t>(n), 0);
  Sweeper sweeper(mdp, o.discount, o.threads, fixed);
  const bool undiscounted = o.discount == 1.0;

  Change change;
  while (out.iterations < o.max_iterations) {
    core::check_interrupt();
    change = sweeper.sweep(v.data(), v_new.data(), nullptr);
    ++out.iterations;
    out.residual =
        undiscounted ? change.highest - change.lowest : std::max(std::abs(change.lowest), std::abs(change.highest));
    if (!change.finite || !std::isfinite(out.residual)) values_overflowed(mdp, v_new, out.iterations, function);
    if (o.relative) {
      const double offset = v_new[o.reference_state];
      for (auto& x : v_new) x -= offset;
    }
    std::swap(v, v_new);
    if (out.iterations >= o.min_iterations && out.residual < o.tolerance) {
      out.converged = true;
      break;
    }
  }
  if (fixed) {
    out.policy = *fixed;
  } else {
    sweeper.sweep(v.data(), v_new.data(), out.policy.data());  // the greedy policy of the final values
  }
  if (undiscounted && out.iterations > 0) {
    out.gain_lower = change.lowest;
    out.gain_upper = change.highest;
    out.gain = 0.5 * change.lowest + 0.5 * change.highest;  // the sum could overflow
  }
  out.values = std::move(v);
  return out;
}

}  // namespace detail

Solution value_iteration(const Mdp& mdp, const SolveOptions& options) {
  detail::check_solve_options(mdp, options, "value_iteration");
  return detail::iterate(mdp, options, nullptr, "value_iteration");
}

std::vector<double> q_values(const Mdp& mdp, std::span<const double> values, double discount) {
  detail::check_shape(mdp, "q_values");
  detail::check_discount(discount, "q_values");
  detail::check_vector(values, mdp.num_states(), "values", "state");
  std::vector<double> q(static_cast<std::size_t>(mdp.num_pairs()));
  detail::Sweeper(mdp, discount, 0).q_values(values.data(), q.data());
  return q;
}

Policy greedy_policy(const Mdp& mdp, std::span<const double> values, double discount) {
  detail::check_shape(mdp, "greedy_policy");
  detail::check_discount(discount, "greedy_policy");
  detail::check_vector(values, mdp.num_states(), "values", "state");
  Policy policy(static_cast<std::size_t>(mdp.num_states()));
  std::vector<double> scratch(policy.size());
  detail::Sweeper(mdp, discount, 0).sweep(values.data(), scratch.data(), policy.data());
  return policy;
}

}  // namespace servelab::solvers::mdp
