#include "servelab/systems/kairos/kairos_plus.hpp"

#include <map>
#include <memory>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::kairos {

solvers::search::Problem search_problem(const BoundTable& table, solvers::search::Objective objective,
                                        bool bound_pruning, bool monotone_pruning) {
  if (table.configs.empty()) throw ValueError("the bound table is empty: no feasible configuration to search");
  auto bounds = std::make_shared<std::map<solvers::search::Config, double>>();
  for (std::size_t i = 0; i < table.configs.size(); ++i) bounds->emplace(table.configs.config(i), table.bound[i]);
  solvers::search::Problem problem = solvers::search::maximize_problem(
      table.space.to_search_space(), std::move(objective), [bounds](const solvers::search::Config& c) {
        const auto it = bounds->find(c);
        if (it == bounds->end()) {
          throw KeyError(str("configuration ", solvers::search::SearchSpace::format(c), " is not in the bound table"));
        }
        return it->second;
      });
  problem.bound_pruning = bound_pruning;
  problem.monotone_pruning = monotone_pruning;
  return problem;
}

solvers::search::SearchResult search_configs(const BoundTable& table, solvers::search::Objective objective,
                                             std::string_view method, const solvers::search::SearchOptions& options,
                                             const ParamArgs& args, bool bound_pruning, bool monotone_pruning) {
  const solvers::search::Problem problem = search_problem(table, std::move(objective), bound_pruning, monotone_pruning);
  return solvers::search::run_search(problem, method, options, args);
}

solvers::search::SearchResult kairos_plus(const BoundTable& table, solvers::search::Objective objective,
                                          const solvers::search::SearchOptions& options) {
  return search_configs(table, std::move(objective), "kairos_plus", options, {}, true);
}

}  // namespace servelab::kairos
