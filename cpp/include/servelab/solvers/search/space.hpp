// Integer configuration spaces: a box of instance counts per type, a price per instance, an
// optional budget and minimum counts. Kairos's and Ribbon's searches run over such spaces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace servelab::solvers::search {

// One point of the space: a count per dimension (e.g. instances of each type).
using Config = std::vector<std::int64_t>;

struct Dimension {
  std::string name;        // e.g. "g4dn.xlarge"; unique, non-empty
  std::int64_t lower = 0;  // inclusive
  std::int64_t upper = 0;  // inclusive, >= lower
  double unit_cost = 0.0;  // price of one unit, $/h; finite, >= 0
};

// "at least `count` units of dimension `dimension`", e.g. at least one GPU (Kairos's n_gpu >= 1).
struct AtLeast {
  std::size_t dimension = 0;
  std::int64_t count = 0;
};

// The dimensions of columns given side by side: {names[d], lower[d], upper[d], unit_cost[d]}.
// ValueError unless the four have the same length (the SearchSpace checks the values).
std::vector<Dimension> dimensions_from_columns(const std::vector<std::string>& names,
                                               const std::vector<std::int64_t>& lower,
                                               const std::vector<std::int64_t>& upper,
                                               const std::vector<double>& unit_cost);

// Enumeration refuses boxes larger than this many points (they would not fit in memory anyway).
inline constexpr std::int64_t kMaxEnumeratedPoints = 2'000'000;

class SearchSpace {
 public:
  // Validates everything; ValueError naming the field and value for: no dimensions, an empty or
  // duplicate name, upper < lower, a negative or non-finite unit cost, a NaN or negative budget,
  // an AtLeast outside the dimensions or above the dimension's upper bound, a negative
  // min_total, a budget below the cheapest point allowed by the bounds and minimum counts, or a
  // box of more than kMaxEnumeratedPoints points.
  // min_total: the sum of all counts must be at least this (1 excludes the empty configuration).
  explicit SearchSpace(std::vector<Dimension> dimensions, std::optional<double> budget = std::nullopt,
                       std::vector<AtLeast> at_least = {}, std::int64_t min_total = 0);

  std::size_t size() const { return dimensions_.size(); }  // number of dimensions
  const std::vector<Dimension>& dimensions() const { return dimensions_; }
  const std::optional<double>& budget() const { return budget_; }
  const std::vector<AtLeast>& at_least() const { return at_least_; }
  std::int64_t min_total() const { return min_total_; }

  // sum_d unit_cost[d] * config[d], $/h. ValueError when the config has the wrong length.
  double cost(const Config& config) const;
  // Within the box, the budget (with a 1e-9 relative tolerance for float prices) and the minimums.
  bool feasible(const Config& config) const;
  // ValueError naming `field` when `config` has the wrong length or lies outside the box.
  void check_in_box(const Config& config, const std::string& field = "config") const;

  // Every feasible point, in lexicographic order (the first dimension varies slowest). May be
  // empty (e.g. min_total unreachable under the budget): searches then report found = false.
  std::vector<Config> enumerate() const;
  // Points of the box, ignoring budget and minimums.
  std::int64_t box_points() const;

  // "(1, 0, 2)"
  static std::string format(const Config& config);

 private:
  std::vector<Dimension> dimensions_;
  std::optional<double> budget_;
  std::vector<AtLeast> at_least_;
  std::int64_t min_total_ = 0;
};

}  // namespace servelab::solvers::search
