// Simulated annealing over unit moves: propose a random neighbour (evaluated or unpruned; a pruned
// config is never looked at), accept it if better or with probability exp(delta / T), cool T
// geometrically. Moving onto evaluated configs is free (cached); after `stall` proposals without a
// new evaluation the walk restarts, reheated, from a random unpruned point.
#include <cmath>

#include "methods.hpp"
#include "search_state.hpp"

namespace servelab::solvers::search {

namespace {

SearchResult run_annealing(const Params& params, const Problem& problem, const SearchOptions& options,
                           const std::string& description) {
  const double initial_temperature = params.get_float("temperature");
  const double cooling = params.get_float("cooling");
  const bool swaps = params.get_bool("swaps");
  const std::int64_t stall_limit = params.get_int("stall");
  SearchState state(problem, options, description, PruningRules::of(problem));
  std::optional<std::size_t> current;
  double temperature = initial_temperature;
  std::int64_t stalled = 0;
  while (!state.should_stop()) {
    std::vector<std::size_t> moves;
    if (current) {
      for (const std::size_t j : state.neighbours(*current, swaps)) {
        if (!state.pruned(j)) moves.push_back(j);
      }
    }
    if (!current || moves.empty() || stalled >= stall_limit) {
      current = random_alive(state);
      state.evaluate(*current);
      temperature = initial_temperature;
      stalled = 0;
      continue;
    }
    const std::size_t j = moves[random_index(moves.size(), state)];
    if (state.alive(j)) {
      state.evaluate(j);
      stalled = 0;
    } else {
      ++stalled;
    }
    // Temperatures are relative to the best value's magnitude, so one setting fits throughputs
    // of 10 or 10,000 QPS; Ribbon's score for cost minimisation already lies in [0, 1].
    const auto best = state.best();
    const double scale =
        problem.goal == Goal::MaximizeValue && best ? std::max(std::abs(state.value(*best)), 1e-12) : 1.0;
    const double delta = (state.fitness(j) - state.fitness(*current)) / scale;
    if (delta >= 0 || state.rng().uniform() < std::exp(delta / std::max(temperature, 1e-12))) current = j;
    temperature *= cooling;
  }
  return state.finish();
}

}  // namespace

void register_annealing(Registry<Searcher>& registry) {
  registry.add(method_entry(
      "annealing", "Simulated annealing over unit moves with geometric cooling and restarts.",
      {float_param("temperature", 0.1, 0.0, std::nullopt, "initial temperature, relative to the best value", true),
       float_param("cooling", 0.95, 0.0, 1.0, "temperature factor per proposal", true),
       bool_param("swaps", true, "also move one unit from one dimension to another (along a budget)"),
       int_param("stall", 50, 1, "proposals without a new evaluation before restarting")},
      &run_annealing));
}

}  // namespace servelab::solvers::search
