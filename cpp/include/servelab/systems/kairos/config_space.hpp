// Kairos's configuration space: how many instances of each type to rent under a cost budget.
//
// types[0] is the base type (the one that meets QoS for every query size, e.g. the GPU); the rest
// are auxiliary types. A configuration is a count per type within [0, max_count], costing
// sum(price * count) $/h <= budget, with at least min_base base instances (the artifact: >= 1 GPU).
// The budget test and the cost are those of solvers::search::SearchSpace, so the configurations
// enumerated here are exactly the points the generic searches explore.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "servelab/solvers/search/space.hpp"

namespace servelab::kairos {

struct InstanceSpace {
  std::vector<std::string> types;       // types[0]: the base type; unique, non-empty names
  std::vector<double> prices;           // $/h per instance, finite, >= 0
  std::vector<std::int64_t> max_count;  // per type, >= 0
  double budget = 0.0;                  // $/h, finite, >= 0
  std::int64_t min_base = 1;            // base instances every configuration has at least

  // ValueError naming the field and value: mismatched lengths, bad names, prices or counts, and a
  // budget below the cheapest configuration (min_base base instances): no feasible configuration.
  void validate() const;
  // The same space for the generic searches (one dimension per type, AtLeast{0, min_base}).
  solvers::search::SearchSpace to_search_space() const;
};

// True when `cost` fits `budget` (the 1e-9 tolerance of SearchSpace: float prices must not exclude
// a configuration that costs exactly the budget).
bool within_budget(double cost, double budget);

// Every configuration of a space, row-major (one row of counts per configuration), in
// lexicographic order with the first type varying slowest (the artifact's itertools.product order).
class ConfigTable {
 public:
  ConfigTable() = default;
  ConfigTable(std::size_t n_types, std::vector<std::int64_t> counts, std::vector<double> costs);

  std::size_t size() const { return costs_.size(); }
  bool empty() const { return costs_.empty(); }
  std::size_t n_types() const { return n_types_; }
  std::span<const std::int64_t> row(std::size_t i) const { return {counts_.data() + i * n_types_, n_types_}; }
  std::int64_t count(std::size_t i, std::size_t type) const { return counts_[i * n_types_ + type]; }
  double cost(std::size_t i) const { return costs_[i]; }
  const std::vector<std::int64_t>& counts() const { return counts_; }  // size() * n_types()
  const std::vector<double>& costs() const { return costs_; }
  solvers::search::Config config(std::size_t i) const;

 private:
  std::size_t n_types_ = 0;
  std::vector<std::int64_t> counts_;
  std::vector<double> costs_;
};

// sum(prices[k] * counts[k]) summed from the first type on, as SearchSpace::cost and the artifact.
double config_cost(std::span<const double> prices, std::span<const std::int64_t> counts);

// Validates the space, then lists every feasible configuration (budget-pruned: the loops stop as
// soon as adding an instance of a type exceeds the budget). ValueError beyond
// solvers::search::kMaxEnumeratedPoints configurations; stops on Ctrl-C (core::check_interrupt).
ConfigTable enumerate_configs(const InstanceSpace& space);

}  // namespace servelab::kairos
