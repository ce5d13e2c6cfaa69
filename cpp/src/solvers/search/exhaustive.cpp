// Exhaustive search: every feasible point in lexicographic order. Without pruning it is the
// reference optimum for any objective; with pruning it shows what pruning alone saves.
#include "methods.hpp"
#include "search_state.hpp"

namespace servelab::solvers::search {
namespace {

SearchResult run_exhaustive(const Params& params, const Problem& problem, const SearchOptions& options,
                            const std::string& description) {
  const bool pruning = params.get_bool("pruning");
  SearchState state(problem, options, description, pruning ? PruningRules::of(problem) : PruningRules{false, false});
  // Largest configs first: with pruning, each evaluation then prunes the most.
  for (std::size_t k = state.size(); k > 0; --k) {
    if (state.should_stop()) break;
    if (state.alive(k - 1)) state.evaluate(k - 1);
  }
  return state.finish();
}

}  // namespace

void register_exhaustive(Registry<Searcher>& registry) {
  registry.add(method_entry(
      "exhaustive", "Every feasible point, largest first (lexicographically descending): the reference optimum.",
      {bool_param("pruning", false, "apply the problem's pruning rules (false: evaluate every point)")},
      &run_exhaustive));
}

}  // namespace servelab::solvers::search
