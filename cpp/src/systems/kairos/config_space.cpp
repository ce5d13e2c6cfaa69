#include "servelab/systems/kairos/config_space.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::kairos {

bool within_budget(double cost, double budget) { return cost <= budget + 1e-9 * std::max(1.0, std::abs(budget)); }

double config_cost(std::span<const double> prices, std::span<const std::int64_t> counts) {
  double total = 0.0;
  for (std::size_t k = 0; k < counts.size(); ++k) total += prices[k] * static_cast<double>(counts[k]);
  return total;
}

void InstanceSpace::validate() const {
  if (types.empty()) throw ValueError("types is empty: give the base type first, then the auxiliary types");
  if (prices.size() != types.size()) {
    throw ValueError(str("prices has ", prices.size(), " entries but types has ", types.size()));
  }
  if (max_count.size() != types.size()) {
    throw ValueError(str("max_count has ", max_count.size(), " entries but types has ", types.size()));
  }
  std::set<std::string> seen;
  for (std::size_t k = 0; k < types.size(); ++k) {
    if (types[k].empty()) throw ValueError(str("types[", k, "] is empty"));
    if (!seen.insert(types[k]).second) throw ValueError(str("types[", k, "]='", types[k], "' is repeated"));
    if (!std::isfinite(prices[k]) || prices[k] < 0) {
      throw ValueError(str("prices[", k, "] ('", types[k], "')=", prices[k], " must be finite and >= 0 $/h"));
    }
    if (max_count[k] < 0) throw ValueError(str("max_count[", k, "] ('", types[k], "')=", max_count[k], " is negative"));
  }
  if (!std::isfinite(budget) || budget < 0) throw ValueError(str("budget=", budget, " must be finite and >= 0 $/h"));
  if (min_base < 0) throw ValueError(str("min_base=", min_base, " is negative"));
  if (min_base > max_count[0]) {
    throw ValueError(str("min_base=", min_base, " exceeds max_count[0]=", max_count[0], " of the base type '", types[0],
                         "': no feasible configuration"));
  }
  const double cheapest = prices[0] * static_cast<double>(min_base);
  if (!within_budget(cheapest, budget)) {
    throw ValueError(str("budget=", budget, " $/h is below the cheapest configuration (", min_base, " x '", types[0],
                         "' at ", prices[0], " $/h = ", cheapest, " $/h): no feasible configuration"));
  }
}

solvers::search::SearchSpace InstanceSpace::to_search_space() const {
  validate();
  std::vector<solvers::search::Dimension> dims;
  for (std::size_t k = 0; k < types.size(); ++k) dims.push_back({types[k], 0, max_count[k], prices[k]});
  std::vector<solvers::search::AtLeast> at_least;
  if (min_base > 0) at_least.push_back({0, min_base});
  return solvers::search::SearchSpace(std::move(dims), budget, std::move(at_least));
}

ConfigTable::ConfigTable(std::size_t n_types, std::vector<std::int64_t> counts, std::vector<double> costs)
    : n_types_(n_types), counts_(std::move(counts)), costs_(std::move(costs)) {
  if (counts_.size() != n_types_ * costs_.size()) {
    throw ValueError(str("counts has ", counts_.size(), " entries, expected ", n_types_, " x ", costs_.size()));
  }
}

solvers::search::Config ConfigTable::config(std::size_t i) const {
  if (i >= size()) throw ValueError(str("config index ", i, " is outside the ", size(), " configurations"));
  const auto r = row(i);
  return {r.begin(), r.end()};
}

ConfigTable enumerate_configs(const InstanceSpace& space) {
  space.validate();
  const std::size_t n = space.types.size();
  const auto lowest = [&](std::size_t d) { return d == 0 ? space.min_base : std::int64_t{0}; };
  std::vector<std::int64_t> counts;
  std::vector<double> costs;
  std::vector<std::int64_t> current(n, 0);
  current[0] = space.min_base;
  // Odometer, last type fastest. Prices are >= 0, so when a point whose later counts are all at
  // their lowest is over budget, so is every point with more of its last raised type: skip them.
  while (true) {
    const double cost = config_cost(space.prices, current);
    std::size_t d = n - 1;
    if (within_budget(cost, space.budget)) {
      if (costs.size() == static_cast<std::size_t>(solvers::search::kMaxEnumeratedPoints)) {
        throw ValueError(str("the space has more than ", solvers::search::kMaxEnumeratedPoints,
                             " configurations under budget=", space.budget, "; lower max_count or the budget"));
      }
      if ((costs.size() & 0xffff) == 0) core::check_interrupt();
      counts.insert(counts.end(), current.begin(), current.end());
      costs.push_back(cost);
    } else {
      while (d > 0 && current[d] == lowest(d)) --d;
      current[d] = lowest(d);
      if (d == 0) break;
      --d;
    }
    // Advance type d, carrying into the types before it.
    while (current[d] == space.max_count[d]) {
      current[d] = lowest(d);
      if (d == 0) return ConfigTable(n, std::move(counts), std::move(costs));
      --d;
    }
    ++current[d];
  }
  return ConfigTable(n, std::move(counts), std::move(costs));
}

}  // namespace servelab::kairos
