// Kairos+ (Kairos, HPDC'23, Algorithm 1): evaluate configs in descending upper-bound order; each
// evaluation prunes its sub-configurations, and a new best value prunes every config whose bound
// does not exceed it. The search ends when every config is evaluated or pruned, i.e. as soon as
// the next bound in line is at most the best value found.
#include <algorithm>
#include <numeric>

#include "methods.hpp"
#include "search_state.hpp"
#include "servelab/core/errors.hpp"

namespace servelab::solvers::search {
namespace {

SearchResult run_kairos_plus(const Params&, const Problem& problem, const SearchOptions& options,
                             const std::string& description) {
  if (problem.goal != Goal::MaximizeValue) {
    throw ValueError("method 'kairos_plus' maximises a value under a budget; goal=minimize_cost has no upper bound");
  }
  if (!problem.upper_bound) throw ValueError("method 'kairos_plus' needs upper_bound: the per-config throughput bound");
  // Bound pruning is part of the algorithm, whatever the problem's bound_pruning says.
  SearchState state(problem, options, description, {problem.monotone_pruning, true}, true);
  std::vector<std::size_t> order(state.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return state.bound(a) > state.bound(b); });
  for (const std::size_t i : order) {
    if (state.should_stop()) break;
    if (state.alive(i)) state.evaluate(i);
  }
  return state.finish();
}

}  // namespace

void register_kairos_plus(Registry<Searcher>& registry) {
  registry.add(method_entry("kairos_plus",
                            "Kairos+ (Algorithm 1): descending upper-bound order, pruning by bound and by "
                            "sub-configuration. Needs upper_bound; maximisation only.",
                            {}, &run_kairos_plus));
}

}  // namespace servelab::solvers::search
