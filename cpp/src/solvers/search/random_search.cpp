// Random search with pruning (Ribbon's RAND baseline, Kairos's RAND competitor): each step
// evaluates a uniformly random point among those neither evaluated nor pruned.
#include "methods.hpp"
#include "search_state.hpp"

namespace servelab::solvers::search {
namespace {

SearchResult run_random(const Params&, const Problem& problem, const SearchOptions& options,
                        const std::string& description) {
  SearchState state(problem, options, description, PruningRules::of(problem));
  while (!state.should_stop()) state.evaluate(random_alive(state));
  return state.finish();
}

}  // namespace

void register_random(Registry<Searcher>& registry) {
  registry.add(method_entry("random", "Uniformly random order of the unpruned points.", {}, &run_random));
}

}  // namespace servelab::solvers::search
