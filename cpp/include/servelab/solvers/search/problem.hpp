// The two problem forms the searches solve, both over a SearchSpace with a black-box objective:
//
//  * MaximizeValue (Kairos): maximise a value (throughput) over the feasible points (the budget is
//    part of the space). The value is assumed non-decreasing in every count (more instances never
//    serve less), so an evaluated config prunes its sub-configurations (component-wise <=). With an
//    upper bound per config (Kairos's QPS_max), configs whose bound <= the best value found are
//    pruned as well.
//  * MinimizeCost (Ribbon): minimise the cost subject to objective(config) >= target (e.g. the
//    share of queries meeting QoS >= 99%). A config meeting the target prunes every config that is
//    more expensive; one violating it prunes every config it dominates (component-wise <=), since
//    fewer instances cannot do better (see strict_dimensions for Ribbon's base-type refinement).
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "servelab/solvers/search/space.hpp"

namespace servelab::solvers::search {

// The black box: called once per distinct config (searches cache), never on a pruned config.
// It may throw; the exception leaves the search unchanged (from Python: the original exception).
using Objective = std::function<double(const Config&)>;
// A per-config upper bound on the objective (MaximizeValue only).
using UpperBound = std::function<double(const Config&)>;

enum class Goal { MaximizeValue, MinimizeCost };

// "maximize" / "minimize_cost", as Python names the goals; ValueError naming any other.
Goal parse_goal(std::string_view name);
std::string_view goal_name(Goal goal);

struct Problem {
  SearchSpace space;
  Objective objective;
  Goal goal = Goal::MaximizeValue;

  // MaximizeValue: prune sub-configurations; MinimizeCost: prune by cost and by dominance.
  bool monotone_pruning = true;

  // MaximizeValue only: optional upper bound. Required by kairos_plus (which orders by it).
  UpperBound upper_bound;
  // Prune configs whose upper bound <= the best value found (when upper_bound is set). Every
  // method applies it; set false to give the competitors only sub-configuration pruning.
  bool bound_pruning = true;

  // MinimizeCost only: a config is feasible when objective(config) >= target.
  double target = 0.0;

  // Dimensions in which dominance pruning asks for strictly fewer units: an evaluated config x
  // then prunes only the configs c <= x with c[d] < x[d] for every d listed. Ribbon uses {0} (its
  // base type): under a distributor that prefers the base type, adding auxiliary instances alone
  // can lower QoS, so a violating config says nothing about configs with as many base instances.
  // Empty (the default): plain component-wise dominance.
  std::vector<std::size_t> strict_dimensions;
};

// Shorthands for the two forms.
Problem maximize_problem(SearchSpace space, Objective objective, UpperBound upper_bound = {});
Problem minimize_cost_problem(SearchSpace space, Objective objective, double target);

// ValueError naming the field when the problem is unusable (no objective, NaN target, ...).
void validate(const Problem& problem);

}  // namespace servelab::solvers::search
