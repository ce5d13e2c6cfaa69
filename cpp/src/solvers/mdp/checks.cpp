#include "checks.hpp"

#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::solvers::mdp::detail {

void check_discount(double discount, const char* function) {
  if (!(discount >= 0.0 && discount <= 1.0)) {
    throw ValueError(str(function, ": discount=", discount, " must be in [0, 1]"));
  }
}

void check_vector(std::span<const double> values, std::int64_t expected, const char* name, const char* per) {
  if (static_cast<std::int64_t>(values.size()) != expected) {
    throw ValueError(str(name, " has ", values.size(), " entries, expected one per ", per, " (", expected, ")"));
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) throw ValueError(str(name, "[", i, "]=", values[i], " is not finite"));
  }
}

void check_shape(const Mdp& mdp, const char* function) {
  const bool ok = mdp.state_begin.size() >= 2 && !mdp.pair_begin.empty() && mdp.state_begin.front() == 0 &&
                  mdp.pair_begin.front() == 0 && mdp.state_begin.back() == mdp.num_pairs() &&
                  mdp.pair_begin.back() == mdp.num_transitions() && mdp.probability.size() == mdp.next_state.size() &&
                  static_cast<std::int64_t>(mdp.reward.size()) == mdp.num_pairs();
  if (!ok) throw ValueError(str(function, ": the MDP's arrays are inconsistent; call Mdp::validate() for details"));
}

void check_solve_options(const Mdp& mdp, const SolveOptions& o, const char* function) {
  check_shape(mdp, function);
  check_discount(o.discount, function);
  if (!(o.tolerance >= 0.0)) throw ValueError(str(function, ": tolerance=", o.tolerance, " must be >= 0"));
  if (o.max_iterations < 0) throw ValueError(str(function, ": max_iterations=", o.max_iterations, " must be >= 0"));
  if (o.min_iterations < 0 || o.min_iterations > o.max_iterations) {
    throw ValueError(
        str(function, ": min_iterations=", o.min_iterations, " must be in [0, max_iterations=", o.max_iterations, "]"));
  }
  if (o.threads < 0) throw ValueError(str(function, ": threads=", o.threads, " must be >= 0 (0: automatic)"));
  if (o.reference_state < 0 || o.reference_state >= mdp.num_states()) {
    throw ValueError(
        str(function, ": reference_state=", o.reference_state, " is not a state (there are ", mdp.num_states(), ")"));
  }
  if (o.relative && o.discount != 1.0) {
    throw ValueError(str(function, ": relative=true needs discount=1 (got ", o.discount, ")"));
  }
  if (!o.initial_values.empty()) check_vector(o.initial_values, mdp.num_states(), "initial_values", "state");
}

void check_stationary_options(const StationaryOptions& o) {
  if (!(o.tolerance >= 0.0)) throw ValueError(str("stationary_distribution: tolerance=", o.tolerance, " must be >= 0"));
  if (o.max_iterations < 0) {
    throw ValueError(str("stationary_distribution: max_iterations=", o.max_iterations, " must be >= 0"));
  }
  if (o.min_iterations < 0 || o.min_iterations > o.max_iterations) {
    throw ValueError(str("stationary_distribution: min_iterations=", o.min_iterations,
                         " must be in [0, max_iterations=", o.max_iterations, "]"));
  }
  if (o.threads < 0) {
    throw ValueError(str("stationary_distribution: threads=", o.threads, " must be >= 0 (0: automatic)"));
  }
}

}  // namespace servelab::solvers::mdp::detail
