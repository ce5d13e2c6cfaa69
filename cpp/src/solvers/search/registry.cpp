// The search-method registry, run_search() and the helpers the methods share.
#include <algorithm>

#include "methods.hpp"
#include "search_state.hpp"
#include "servelab/core/errors.hpp"

namespace servelab::solvers::search {

Registry<Searcher>::Entry method_entry(std::string name, std::string doc, std::vector<ParamSpec> params,
                                       RunMethod run) {
  return {std::move(name), std::move(doc), std::move(params),
          [run](const Params& p) { return std::make_shared<MethodSearcher>(p, run); }};
}

const Registry<Searcher>& searcher_registry() {
  static const Registry<Searcher> registry = [] {
    Registry<Searcher> r("search method");
    register_kairos_plus(r);
    register_exhaustive(r);
    register_random(r);
    register_genetic(r);
    register_bayesian(r);
    register_annealing(r);
    register_hill_climbing(r);
    return std::move(r).freeze();
  }();
  return registry;
}

std::vector<std::string> search_methods() {
  std::vector<std::string> names;
  for (const auto& entry : searcher_registry().entries()) names.push_back(entry->name);
  return names;
}

SearchResult run_search(const Problem& problem, std::string_view method, const SearchOptions& options,
                        const ParamArgs& args) {
  auto [name, spec_args] = parse_spec(method);
  for (const auto& [key, value] : args) {
    if (spec_args.count(key))
      throw ValueError(str("parameter '", key, "' is given in the method spec and as an argument"));
    spec_args[key] = value;
  }
  const auto searcher = searcher_registry().make(name, spec_args);
  return searcher->run(problem, options);
}

std::size_t random_index(std::size_t size, SearchState& state) {
  const auto i = static_cast<std::size_t>(state.rng().uniform() * static_cast<double>(size));
  return std::min(i, size - 1);
}

std::size_t random_alive(SearchState& state) {
  const std::vector<std::size_t> alive = state.alive_points();
  if (alive.empty()) throw RuntimeError("random_alive: no alive point left");
  return alive[random_index(alive.size(), state)];
}

void shuffle(std::vector<std::size_t>& items, SearchState& state) {
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[random_index(i, state)]);
}

}  // namespace servelab::solvers::search
