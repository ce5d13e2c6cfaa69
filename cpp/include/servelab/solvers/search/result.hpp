// What every search method reports: the evaluation trace, the best config and how many
// evaluations it took to reach it.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "servelab/solvers/search/problem.hpp"
#include "servelab/solvers/search/space.hpp"

namespace servelab::solvers::search {

struct Evaluation {
  std::int64_t index = 0;  // 1-based order of evaluation (the time of evaluation)
  Config config;
  double value = 0.0;    // objective(config)
  double cost = 0.0;     // space.cost(config), $/h
  bool feasible = true;  // MinimizeCost: value >= target; MaximizeValue: always true
};

struct SearchResult {
  std::string method;  // the method with its parameters, e.g. "bayesian(xi=0.1, kernel='matern52')"
  Goal goal = Goal::MaximizeValue;

  // False when no feasible config was evaluated ("no feasible configuration"): an empty space, or
  // MinimizeCost with no config meeting the target among those evaluated.
  bool found = false;
  Config best_config;
  double best_value = std::numeric_limits<double>::quiet_NaN();
  double best_cost = std::numeric_limits<double>::quiet_NaN();
  std::int64_t best_index = 0;  // evaluations used to reach the best (its Evaluation::index), 0 if none

  std::vector<Evaluation> trace;  // distinct evaluations in order; no config appears twice

  std::int64_t space_points = 0;  // feasible points of the space
  std::int64_t pruned = 0;        // points pruned without being evaluated when the search stopped
  std::int64_t unexplored = 0;    // points neither evaluated nor pruned when it stopped
  // "exhausted" (every point evaluated or pruned; for kairos_plus: the next bound in line is at
  // most the best value found), "max_evaluations", "stop_at" (the requested quality was reached), "converged" (the
  // method's own stopping rule, e.g. hill climbing without restarts left), "empty" (no feasible point).
  std::string stop_reason;

  std::int64_t evaluations() const { return static_cast<std::int64_t>(trace.size()); }
  // Evaluations as a share of the feasible points of the space (NaN for an empty space).
  double share() const {
    return space_points > 0 ? static_cast<double>(evaluations()) / static_cast<double>(space_points)
                            : std::numeric_limits<double>::quiet_NaN();
  }
};

// The number of evaluations after which a config at least as good as `target` had been evaluated:
// MaximizeValue: value >= target - tolerance; MinimizeCost: feasible and cost <= target + tolerance.
// 0 when never reached. Pass the known optimum (e.g. from exhaustive search) to get "evaluations to
// reach the optimum".
std::int64_t evaluations_to_reach(const SearchResult& result, double target, double tolerance = 1e-9);

}  // namespace servelab::solvers::search
