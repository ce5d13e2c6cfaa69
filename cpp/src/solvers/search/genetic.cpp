// Genetic algorithm: a population of evaluated configs; each generation breeds `population`
// children by tournament selection, uniform crossover and per-gene mutation, then keeps the best
// `population` of parents and children. A child that is infeasible, pruned or already evaluated is
// repaired to the nearest unpruned, unevaluated point, so every child costs one new evaluation.
#include <algorithm>
#include <cmath>

#include "methods.hpp"
#include "search_state.hpp"

namespace servelab::solvers::search {
namespace {

std::size_t tournament(const std::vector<std::size_t>& population, std::int64_t size, SearchState& state) {
  std::size_t winner = population[random_index(population.size(), state)];
  for (std::int64_t k = 1; k < size; ++k) {
    const std::size_t rival = population[random_index(population.size(), state)];
    if (state.fitness(rival) > state.fitness(winner)) winner = rival;
  }
  return winner;
}

Config breed(const Config& a, const Config& b, const Params& params, const SearchSpace& space, SearchState& state) {
  Config child = a;
  if (state.rng().uniform() < params.get_float("crossover")) {
    for (std::size_t d = 0; d < child.size(); ++d) {
      if (state.rng().uniform() < 0.5) child[d] = b[d];
    }
  }
  const double rate = params.get_float("mutation");
  const std::int64_t step = params.get_int("mutation_step");
  for (std::size_t d = 0; d < child.size(); ++d) {
    if (state.rng().uniform() >= rate) continue;
    // A non-zero step in [-step, step].
    std::int64_t delta = 1 + static_cast<std::int64_t>(random_index(static_cast<std::size_t>(step), state));
    if (state.rng().uniform() < 0.5) delta = -delta;
    const auto& dim = space.dimensions()[d];
    child[d] = std::clamp(child[d] + delta, dim.lower, dim.upper);
  }
  return child;
}

SearchResult run_genetic(const Params& params, const Problem& problem, const SearchOptions& options,
                         const std::string& description) {
  const auto size = static_cast<std::size_t>(params.get_int("population"));
  const std::int64_t tournament_size = params.get_int("tournament");
  SearchState state(problem, options, description, PruningRules::of(problem));
  std::vector<std::size_t> population;
  while (population.size() < size && !state.should_stop()) {
    const std::size_t i = random_alive(state);
    state.evaluate(i);
    population.push_back(i);
  }
  while (!state.should_stop()) {
    std::vector<std::size_t> children;
    for (std::size_t k = 0; k < size && !state.should_stop(); ++k) {
      const std::size_t a = tournament(population, tournament_size, state);
      const std::size_t b = tournament(population, tournament_size, state);
      const Config child = breed(state.point(a), state.point(b), params, problem.space, state);
      std::optional<std::size_t> j = state.find(child);
      if (!j || !state.alive(*j)) j = state.nearest_alive(child);
      if (!j) break;
      state.evaluate(*j);
      children.push_back(*j);
    }
    population.insert(population.end(), children.begin(), children.end());
    // Best first; stable, so among equals the earlier evaluated survives.
    std::stable_sort(population.begin(), population.end(),
                     [&](std::size_t x, std::size_t y) { return state.fitness(x) > state.fitness(y); });
    if (population.size() > size) population.resize(size);
  }
  return state.finish();
}

}  // namespace

void register_genetic(Registry<Searcher>& registry) {
  registry.add(method_entry(
      "genetic", "Genetic algorithm: tournament selection, uniform crossover, mutation, (mu + lambda) survival.",
      {int_param("population", 10, 2, "configs kept per generation, and children bred per generation"),
       int_param("tournament", 3, 1, "contestants per tournament selection"),
       float_param("crossover", 0.9, 0.0, 1.0, "probability that a child mixes both parents (else copies one)"),
       float_param("mutation", 0.3, 0.0, 1.0, "probability that each count of a child mutates"),
       int_param("mutation_step", 2, 1, "largest change of a mutated count")},
      &run_genetic));
}

}  // namespace servelab::solvers::search
