// The registered search methods. Each lives in its own file and adds itself to the registry
// through register_<name>(), called once, in order, by searcher_registry().
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "servelab/core/param_builders.hpp"
#include "servelab/core/registry.hpp"
#include "servelab/solvers/search/search.hpp"

namespace servelab::solvers::search {

class SearchState;

void register_kairos_plus(Registry<Searcher>& registry);
void register_exhaustive(Registry<Searcher>& registry);
void register_random(Registry<Searcher>& registry);
void register_genetic(Registry<Searcher>& registry);
void register_bayesian(Registry<Searcher>& registry);
void register_annealing(Registry<Searcher>& registry);
void register_hill_climbing(Registry<Searcher>& registry);

// A method is a function of its validated parameters; `description` names it in the result.
using RunMethod = SearchResult (*)(const Params& params, const Problem& problem, const SearchOptions& options,
                                   const std::string& description);

class MethodSearcher final : public Searcher {
 public:
  MethodSearcher(Params params, RunMethod run) : params_(std::move(params)), run_(run) {}
  SearchResult run(const Problem& problem, const SearchOptions& options) const override {
    return run_(params_, problem, options, describe());
  }
  std::string describe() const override { return params_.describe(); }

 private:
  Params params_;
  RunMethod run_;
};

// The registry entry of a method.
Registry<Searcher>::Entry method_entry(std::string name, std::string doc, std::vector<ParamSpec> params, RunMethod run);

// Helpers the methods share, drawing from the state's seeded stream.
std::size_t random_alive(SearchState& state);  // the state must have an alive point
void shuffle(std::vector<std::size_t>& items, SearchState& state);
std::size_t random_index(std::size_t size, SearchState& state);  // uniform in [0, size)

}  // namespace servelab::solvers::search
