// Generic search over integer configuration spaces with pruning (see problem.hpp), by name:
//
//   kairos_plus    Kairos+ (Algorithm 1): evaluate in descending upper-bound order, prune by bound
//                  and by sub-configuration; stops when the next bound <= the best found.
//   exhaustive     every feasible point, largest first (lexicographically descending): the
//                  reference optimum; with pruning=true it applies the problem's pruning rules.
//   random         uniformly random order of the unpruned points (Ribbon's RAND with pruning).
//   genetic        population, tournament selection, uniform crossover, mutation; children that
//                  are pruned or already evaluated are repaired to the nearest unpruned point.
//   bayesian       Ribbon's BO: Gaussian process (Matern 5/2 or RBF) on the counts (or on
//                  counts normalised to [0, 1]), length scale by marginal likelihood over a grid,
//                  expected improvement with xi over the unpruned points.
//   annealing      simulated annealing over unit moves, restricted to unpruned points.
//   hill_climbing  Ribbon's hill-climbing baseline: local moves from random restarts.
//
// Every method: deterministic in the seed, never evaluates a config twice or a pruned config,
// stops at max_evaluations, when stop_at is reached or when every point is evaluated or pruned,
// and calls core::check_interrupt() between evaluations.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "servelab/core/params.hpp"
#include "servelab/core/registry.hpp"
#include "servelab/solvers/search/problem.hpp"
#include "servelab/solvers/search/result.hpp"

namespace servelab::solvers::search {

struct SearchOptions {
  std::uint64_t seed = 0;
  std::int64_t max_evaluations = 0;  // 0: no limit (the space is finite); ValueError if < 0
  // Stop as soon as a config this good is evaluated (MaximizeValue: value >= stop_at;
  // MinimizeCost: feasible and cost <= stop_at), e.g. a known optimum.
  std::optional<double> stop_at;
};

// A search method built from the registry with its own parameters (xi, population, ...).
class Searcher {
 public:
  virtual ~Searcher() = default;
  virtual SearchResult run(const Problem& problem, const SearchOptions& options) const = 0;
  // "genetic(population=10, ...)"
  virtual std::string describe() const = 0;
};

// Registered methods (see the list above), with typed, documented parameters.
const Registry<Searcher>& searcher_registry();
std::vector<std::string> search_methods();

// Runs `method` ("bayesian" or a spec "bayesian(xi=0.05)") with `args` on the problem.
// KeyError for an unknown method; ValueError for bad parameters, options or problems.
SearchResult run_search(const Problem& problem, std::string_view method, const SearchOptions& options = {},
                        const ParamArgs& args = {});

}  // namespace servelab::solvers::search
