#include "servelab/solvers/search/space.hpp"

#include <cmath>
#include <set>
#include <sstream>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::solvers::search {
namespace {

// Float prices ($0.526 x 4 ...) must not exclude a config whose cost equals the budget.
bool within_budget(double cost, double budget) { return cost <= budget + 1e-9 * std::max(1.0, std::abs(budget)); }

}  // namespace

std::vector<Dimension> dimensions_from_columns(const std::vector<std::string>& names,
                                               const std::vector<std::int64_t>& lower,
                                               const std::vector<std::int64_t>& upper,
                                               const std::vector<double>& unit_cost) {
  const std::size_t n = names.size();
  if (lower.size() != n || upper.size() != n || unit_cost.size() != n) {
    throw ValueError(str("names, lower, upper and unit_cost must have the same length; got ", n, ", ", lower.size(),
                         ", ", upper.size(), ", ", unit_cost.size()));
  }
  std::vector<Dimension> dims;
  dims.reserve(n);
  for (std::size_t d = 0; d < n; ++d) dims.push_back({names[d], lower[d], upper[d], unit_cost[d]});
  return dims;
}

SearchSpace::SearchSpace(std::vector<Dimension> dimensions, std::optional<double> budget, std::vector<AtLeast> at_least,
                         std::int64_t min_total)
    : dimensions_(std::move(dimensions)), budget_(budget), at_least_(std::move(at_least)), min_total_(min_total) {
  if (dimensions_.empty()) throw ValueError("dimensions is empty: a search space needs at least one dimension");
  std::set<std::string> names;
  for (std::size_t d = 0; d < dimensions_.size(); ++d) {
    const Dimension& dim = dimensions_[d];
    if (dim.name.empty()) throw ValueError(str("dimensions[", d, "].name is empty"));
    if (!names.insert(dim.name).second) throw ValueError(str("dimensions[", d, "].name='", dim.name, "' is repeated"));
    if (dim.upper < dim.lower) {
      throw ValueError(str("dimensions[", d, "] ('", dim.name, "'): upper=", dim.upper, " is below lower=", dim.lower));
    }
    if (!std::isfinite(dim.unit_cost) || dim.unit_cost < 0) {
      throw ValueError(
          str("dimensions[", d, "] ('", dim.name, "'): unit_cost=", dim.unit_cost, " must be finite and non-negative"));
    }
  }
  if (budget_ && (std::isnan(*budget_) || *budget_ < 0)) {
    throw ValueError(str("budget=", *budget_, " must be a non-negative number"));
  }
  if (min_total_ < 0) throw ValueError(str("min_total=", min_total_, " is negative"));
  for (std::size_t i = 0; i < at_least_.size(); ++i) {
    const AtLeast& c = at_least_[i];
    if (c.dimension >= dimensions_.size()) {
      throw ValueError(str("at_least[", i, "].dimension=", c.dimension, " is not below the number of dimensions (",
                           dimensions_.size(), ")"));
    }
    const Dimension& dim = dimensions_[c.dimension];
    if (c.count > dim.upper) {
      throw ValueError(
          str("at_least[", i, "]: count=", c.count, " of '", dim.name, "' exceeds its upper bound ", dim.upper));
    }
  }
  if (box_points() > kMaxEnumeratedPoints) {
    throw ValueError(str("the box has ", box_points(), " points, more than the ", kMaxEnumeratedPoints,
                         " a search space may enumerate; tighten the bounds"));
  }
  if (budget_) {
    // The cheapest point the bounds and minimum counts allow (min_total aside: it needs a choice).
    Config cheapest(dimensions_.size());
    for (std::size_t d = 0; d < dimensions_.size(); ++d) cheapest[d] = dimensions_[d].lower;
    for (const AtLeast& c : at_least_) cheapest[c.dimension] = std::max(cheapest[c.dimension], c.count);
    const double floor = cost(cheapest);
    if (!within_budget(floor, *budget_)) {
      throw ValueError(
          str("budget=", *budget_, " is below the cheapest configuration ", format(cheapest), " which costs ", floor));
    }
  }
}

double SearchSpace::cost(const Config& config) const {
  if (config.size() != dimensions_.size()) {
    throw ValueError(str("config ", format(config), " has ", config.size(), " counts, the space has ",
                         dimensions_.size(), " dimensions"));
  }
  double total = 0.0;
  for (std::size_t d = 0; d < config.size(); ++d) total += dimensions_[d].unit_cost * static_cast<double>(config[d]);
  return total;
}

bool SearchSpace::feasible(const Config& config) const {
  if (config.size() != dimensions_.size()) return false;
  std::int64_t total = 0;
  for (std::size_t d = 0; d < config.size(); ++d) {
    if (config[d] < dimensions_[d].lower || config[d] > dimensions_[d].upper) return false;
    total += config[d];
  }
  if (total < min_total_) return false;
  for (const AtLeast& c : at_least_) {
    if (config[c.dimension] < c.count) return false;
  }
  return !budget_ || within_budget(cost(config), *budget_);
}

void SearchSpace::check_in_box(const Config& config, const std::string& field) const {
  if (config.size() != dimensions_.size()) {
    throw ValueError(str(field, "=", format(config), " has ", config.size(), " counts, the space has ",
                         dimensions_.size(), " dimensions"));
  }
  for (std::size_t d = 0; d < config.size(); ++d) {
    if (config[d] < dimensions_[d].lower || config[d] > dimensions_[d].upper) {
      throw ValueError(str(field, "=", format(config), ": count ", config[d], " of '", dimensions_[d].name,
                           "' is outside [", dimensions_[d].lower, ", ", dimensions_[d].upper, "]"));
    }
  }
}

std::int64_t SearchSpace::box_points() const {
  std::int64_t points = 1;
  for (const Dimension& dim : dimensions_) {
    const std::int64_t width = dim.upper - dim.lower + 1;
    // Saturate instead of overflowing; anything this large is refused anyway.
    if (points > (kMaxEnumeratedPoints + 1) / width + 1) return kMaxEnumeratedPoints + 1;
    points *= width;
  }
  return points;
}

std::vector<Config> SearchSpace::enumerate() const {
  std::vector<Config> points;
  Config current(dimensions_.size());
  for (std::size_t d = 0; d < dimensions_.size(); ++d) current[d] = dimensions_[d].lower;
  for (std::int64_t visited = 1;; ++visited) {
    if (visited % 65536 == 0) core::check_interrupt();  // large boxes take a while
    if (feasible(current)) points.push_back(current);
    // Odometer increment, last dimension fastest.
    std::size_t d = dimensions_.size();
    while (d > 0) {
      --d;
      if (current[d] < dimensions_[d].upper) {
        ++current[d];
        break;
      }
      current[d] = dimensions_[d].lower;
      if (d == 0) return points;
    }
  }
}

std::string SearchSpace::format(const Config& config) {
  std::ostringstream out;
  out << '(';
  for (std::size_t d = 0; d < config.size(); ++d) out << (d ? ", " : "") << config[d];
  out << ')';
  return out.str();
}

}  // namespace servelab::solvers::search
