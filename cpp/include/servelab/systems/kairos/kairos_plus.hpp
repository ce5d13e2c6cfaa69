// Kairos+ (Algorithm 1) and its competitors over Kairos's configuration space, wired to the generic
// searches of solvers/search: the space of a BoundTable, its bounds as the per-config upper bound,
// and an objective (the allowable throughput of a configuration, typically a simulation).
//
// Every method gets sub-configuration pruning (an evaluated configuration prunes every one with
// fewer instances of each type) unless `monotone_pruning` is false. Kairos+ also prunes by bound,
// which is its contribution; the competitors get bound pruning only on request (the paper gives
// them sub-configuration pruning).
//
// Sub-configuration pruning is correct only when removing an instance never raises the objective.
// A first-come-first-served distributor (Ribbon, DRS) breaks that: an extra slow instance takes
// queries it serves beyond QoS, so a sub-configuration can serve more and the pruning can skip the
// optimum. Such objectives are searched with monotone_pruning = false (servelab.kairos chooses it
// per distributor). Bound pruning stays correct whenever the bound is above the objective.
#pragma once

#include <string_view>

#include "servelab/core/params.hpp"
#include "servelab/solvers/search/search.hpp"
#include "servelab/systems/kairos/upper_bound.hpp"

namespace servelab::kairos {

// The maximisation problem of a table: its space, `objective`, and its bounds (KeyError for a
// configuration outside the table). The table must outlive the problem.
solvers::search::Problem search_problem(const BoundTable& table, solvers::search::Objective objective,
                                        bool bound_pruning, bool monotone_pruning = true);

// Runs `method` ("kairos_plus", "random", "genetic", "bayesian", "annealing", "hill_climbing",
// "exhaustive", or a spec with parameters) with `args`. ValueError for an empty table ("no feasible
// configuration"), KeyError for an unknown method.
solvers::search::SearchResult search_configs(const BoundTable& table, solvers::search::Objective objective,
                                             std::string_view method = "kairos_plus",
                                             const solvers::search::SearchOptions& options = {},
                                             const ParamArgs& args = {}, bool bound_pruning = false,
                                             bool monotone_pruning = true);

// Algorithm 1: search_configs(table, objective, "kairos_plus", options).
solvers::search::SearchResult kairos_plus(const BoundTable& table, solvers::search::Objective objective,
                                          const solvers::search::SearchOptions& options = {});

}  // namespace servelab::kairos
