#include "servelab/solvers/search/problem.hpp"

#include <cmath>

#include "servelab/core/errors.hpp"
#include "servelab/solvers/search/result.hpp"

namespace servelab::solvers::search {

Goal parse_goal(std::string_view name) {
  if (name == "maximize") return Goal::MaximizeValue;
  if (name == "minimize_cost") return Goal::MinimizeCost;
  throw ValueError(str("goal='", name, "' is not 'maximize' or 'minimize_cost'"));
}

std::string_view goal_name(Goal goal) { return goal == Goal::MaximizeValue ? "maximize" : "minimize_cost"; }

Problem maximize_problem(SearchSpace space, Objective objective, UpperBound upper_bound) {
  return Problem{
      std::move(space), std::move(objective), Goal::MaximizeValue, true, std::move(upper_bound), true, 0.0, {}};
}

Problem minimize_cost_problem(SearchSpace space, Objective objective, double target) {
  return Problem{std::move(space), std::move(objective), Goal::MinimizeCost, true, {}, true, target, {}};
}

void validate(const Problem& problem) {
  if (!problem.objective) throw ValueError("objective is empty: a search needs a function config -> value");
  for (std::size_t k = 0; k < problem.strict_dimensions.size(); ++k) {
    if (problem.strict_dimensions[k] >= problem.space.size()) {
      throw ValueError(str("strict_dimensions[", k, "]=", problem.strict_dimensions[k],
                           " is not below the number of dimensions (", problem.space.size(), ")"));
    }
  }
  if (problem.goal == Goal::MinimizeCost) {
    if (!std::isfinite(problem.target)) throw ValueError(str("target=", problem.target, " must be finite"));
    if (problem.upper_bound) throw ValueError("upper_bound is only meaningful when maximising a value");
  }
}

std::int64_t evaluations_to_reach(const SearchResult& result, double target, double tolerance) {
  if (std::isnan(target)) throw ValueError("target=nan: evaluations_to_reach needs a number");
  if (!(tolerance >= 0)) throw ValueError(str("tolerance=", tolerance, " must be non-negative"));
  for (const Evaluation& e : result.trace) {
    const bool reached =
        result.goal == Goal::MaximizeValue ? e.value >= target - tolerance : e.feasible && e.cost <= target + tolerance;
    if (reached) return e.index;
  }
  return 0;
}

}  // namespace servelab::solvers::search
