// Hill climbing, Ribbon's baseline: from a random point, evaluate its unevaluated, unpruned unit
// neighbours in random order and move to the first at least as good (Ribbon: a cheaper config
// that still meets QoS, or, while violating QoS, one with a QoS rate at least as high); when none
// is, restart from a random unpruned point.
#include "methods.hpp"
#include "search_state.hpp"

namespace servelab::solvers::search {
namespace {

SearchResult run_hill_climbing(const Params& params, const Problem& problem, const SearchOptions& options,
                               const std::string& description) {
  const bool swaps = params.get_bool("swaps");
  const std::int64_t max_restarts = params.get_int("restarts");
  SearchState state(problem, options, description, PruningRules::of(problem));
  std::optional<std::size_t> current;
  std::int64_t restarts = 0;
  while (!state.should_stop()) {
    if (!current) {
      current = random_alive(state);
      state.evaluate(*current);
      continue;
    }
    std::vector<std::size_t> candidates = state.neighbours(*current, swaps);
    shuffle(candidates, state);
    bool moved = false;
    for (const std::size_t j : candidates) {
      if (state.should_stop()) break;
      if (!state.alive(j)) continue;  // evaluated before, or pruned by the last evaluation
      state.evaluate(j);
      if (state.fitness(j) >= state.fitness(*current)) {
        current = j;
        moved = true;
        break;
      }
    }
    if (!moved && !state.should_stop()) {
      if (max_restarts > 0 && restarts >= max_restarts) return state.finish("converged");
      ++restarts;
      current.reset();
    }
  }
  return state.finish();
}

}  // namespace

void register_hill_climbing(Registry<Searcher>& registry) {
  registry.add(
      method_entry("hill_climbing", "Ribbon's hill climbing: first-improvement unit moves with random restarts.",
                   {bool_param("swaps", true, "also move one unit from one dimension to another (along a budget)"),
                    int_param("restarts", 0, 0, "random restarts allowed after a local optimum (0: unlimited)")},
                   &run_hill_climbing));
}

}  // namespace servelab::solvers::search
