#include "search_state.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::solvers::search {
namespace {

// Costs are sums of float prices: treat differences below this as ties.
double cost_tolerance(double cost) { return 1e-9 * std::max(1.0, std::abs(cost)); }

// a <= b component-wise, and a < b in every strict dimension.
bool dominated_by(const Config& a, const Config& b, const std::vector<std::size_t>& strict) {
  for (std::size_t d = 0; d < a.size(); ++d) {
    if (a[d] > b[d]) return false;
  }
  for (const std::size_t d : strict) {
    if (a[d] >= b[d]) return false;
  }
  return true;
}

}  // namespace

PruningRules PruningRules::of(const Problem& problem) {
  return {problem.monotone_pruning, problem.bound_pruning && static_cast<bool>(problem.upper_bound)};
}

SearchState::SearchState(const Problem& problem, const SearchOptions& options, std::string method, PruningRules rules,
                         bool needs_bounds)
    : problem_(problem),
      options_(options),
      method_(std::move(method)),
      rules_(rules),
      rng_(options.seed, "search/" + method_) {
  validate(problem);
  if (options.max_evaluations < 0) {
    throw ValueError(str("max_evaluations=", options.max_evaluations, " is negative (0 means no limit)"));
  }
  if (options.stop_at && std::isnan(*options.stop_at)) throw ValueError("stop_at=nan must be a number");
  points_ = problem.space.enumerate();
  costs_.reserve(points_.size());
  for (std::size_t i = 0; i < points_.size(); ++i) {
    costs_.push_back(problem.space.cost(points_[i]));
    max_cost_ = std::max(max_cost_, costs_.back());
    index_.emplace(box_index(points_[i]), i);
  }
  if (rules_.bound || needs_bounds) {
    if (!problem.upper_bound) throw ValueError(str("method '", method_, "' needs an upper_bound for every config"));
    bounds_.reserve(points_.size());
    for (const Config& c : points_) {
      const double b = problem.upper_bound(c);
      if (std::isnan(b)) throw ValueError(str("upper_bound", SearchSpace::format(c), " is nan"));
      bounds_.push_back(b);
    }
  }
  values_.assign(points_.size(), std::numeric_limits<double>::quiet_NaN());
  status_.assign(points_.size(), kAlive);
  alive_count_ = points_.size();
}

std::int64_t SearchState::box_index(const Config& config) const {
  std::int64_t index = 0;
  const auto& dims = problem_.space.dimensions();
  for (std::size_t d = 0; d < dims.size(); ++d)
    index = index * (dims[d].upper - dims[d].lower + 1) + (config[d] - dims[d].lower);
  return index;
}

std::optional<std::size_t> SearchState::find(const Config& config) const {
  if (!problem_.space.feasible(config)) return std::nullopt;
  const auto it = index_.find(box_index(config));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::size_t> SearchState::alive_points() const {
  std::vector<std::size_t> out;
  out.reserve(alive_count_);
  for (std::size_t i = 0; i < points_.size(); ++i) {
    if (status_[i] == kAlive) out.push_back(i);
  }
  return out;
}

std::vector<std::size_t> SearchState::neighbours(std::size_t i, bool swaps) const {
  std::vector<std::size_t> out;
  Config c = points_[i];
  const std::size_t dims = c.size();
  for (std::size_t d = 0; d < dims; ++d) {
    for (const int step : {-1, +1}) {
      c[d] += step;
      if (const auto j = find(c)) out.push_back(*j);
      c[d] -= step;
    }
  }
  if (swaps) {
    for (std::size_t from = 0; from < dims; ++from) {
      for (std::size_t to = 0; to < dims; ++to) {
        if (from == to) continue;
        --c[from];
        ++c[to];
        if (const auto j = find(c)) out.push_back(*j);
        ++c[from];
        --c[to];
      }
    }
  }
  return out;
}

std::optional<std::size_t> SearchState::nearest_alive(const Config& config) {
  std::int64_t best_distance = std::numeric_limits<std::int64_t>::max();
  std::vector<std::size_t> ties;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    if (status_[i] != kAlive) continue;
    std::int64_t distance = 0;
    for (std::size_t d = 0; d < config.size(); ++d) distance += std::abs(points_[i][d] - config[d]);
    if (distance < best_distance) {
      best_distance = distance;
      ties.clear();
    }
    if (distance == best_distance) ties.push_back(i);
  }
  if (ties.empty()) return std::nullopt;
  return ties[static_cast<std::size_t>(rng_.uniform() * static_cast<double>(ties.size()))];
}

bool SearchState::stop_at_reached() const {
  if (!options_.stop_at || !best_) return false;
  const std::size_t b = *best_;
  if (problem_.goal == Goal::MaximizeValue) return values_[b] >= *options_.stop_at;
  return costs_[b] <= *options_.stop_at + cost_tolerance(*options_.stop_at);
}

bool SearchState::should_stop() const {
  if (alive_count_ == 0) return true;
  if (options_.max_evaluations > 0 && static_cast<std::int64_t>(trace_.size()) >= options_.max_evaluations) return true;
  return stop_at_reached();
}

double SearchState::fitness(std::size_t i) const {
  const double v = values_[i];
  if (problem_.goal == Goal::MaximizeValue) return v;
  if (v >= problem_.target) return 0.5 + 0.5 * (max_cost_ > 0 ? 1.0 - costs_[i] / max_cost_ : 1.0);
  if (problem_.target > 0) return 0.5 * std::clamp(v / problem_.target, 0.0, 1.0);
  return 0.5 / (1.0 + (problem_.target - v));
}

bool SearchState::better(std::size_t a, std::size_t b) const {
  if (problem_.goal == Goal::MaximizeValue) return values_[a] > values_[b];
  const bool fa = values_[a] >= problem_.target;
  const bool fb = values_[b] >= problem_.target;
  if (fa != fb) return fa;
  if (!fa) return false;  // among infeasible points, none is "best"
  return costs_[a] < costs_[b] - cost_tolerance(costs_[b]);
}

void SearchState::prune(std::size_t i) {
  if (status_[i] != kAlive) return;
  status_[i] = kPruned;
  --alive_count_;
}

const Evaluation& SearchState::evaluate(std::size_t i) {
  if (i >= points_.size() || status_[i] != kAlive) {
    throw RuntimeError(str("search method '", method_, "' tried to evaluate a point that is not alive"));
  }
  core::check_interrupt();
  const double v = problem_.objective(points_[i]);
  if (!std::isfinite(v)) {
    throw ValueError(str("objective", SearchSpace::format(points_[i]), " returned ", v, "; values must be finite"));
  }
  values_[i] = v;
  status_[i] = kEvaluated;
  --alive_count_;
  Evaluation e;
  e.index = static_cast<std::int64_t>(trace_.size()) + 1;
  e.config = points_[i];
  e.value = v;
  e.cost = costs_[i];
  e.feasible = problem_.goal == Goal::MaximizeValue || v >= problem_.target;
  const bool improves = e.feasible && (!best_ || better(i, *best_));
  trace_.push_back(std::move(e));
  if (improves) best_ = i;
  apply_pruning(i);
  return trace_.back();
}

void SearchState::apply_pruning(std::size_t i) {
  const Config& x = points_[i];
  const bool feasible = trace_.back().feasible;
  for (std::size_t j = 0; j < points_.size(); ++j) {
    if (status_[j] != kAlive) continue;
    bool prune_j = false;
    if (rules_.monotone) {
      if (problem_.goal == Goal::MaximizeValue || !feasible) {
        // More instances never do worse: a sub-configuration cannot beat x (maximising) or
        // meet the target when x misses it (minimising cost).
        prune_j = dominated_by(points_[j], x, problem_.strict_dimensions);
      } else {
        // x meets the target: a more expensive config cannot be cheaper.
        prune_j = costs_[j] > costs_[i] + cost_tolerance(costs_[i]);
      }
    }
    if (!prune_j && rules_.bound && best_ && problem_.goal == Goal::MaximizeValue) {
      prune_j = bounds_[j] <= values_[*best_];
    }
    if (prune_j) {
      status_[j] = kPruned;
      --alive_count_;
    }
  }
}

SearchResult SearchState::finish(std::string reason) {
  SearchResult result;
  result.method = method_;
  result.goal = problem_.goal;
  if (best_) {
    const std::size_t b = *best_;
    result.found = true;
    result.best_config = points_[b];
    result.best_value = values_[b];
    result.best_cost = costs_[b];
    for (const Evaluation& e : trace_) {
      if (e.config == points_[b]) result.best_index = e.index;
    }
  }
  result.space_points = static_cast<std::int64_t>(points_.size());
  for (const Status s : status_) {
    if (s == kPruned) ++result.pruned;
  }
  result.unexplored = static_cast<std::int64_t>(alive_count_);
  if (!reason.empty()) {
    result.stop_reason = std::move(reason);
  } else if (points_.empty()) {
    result.stop_reason = "empty";
  } else if (stop_at_reached()) {
    result.stop_reason = "stop_at";
  } else if (alive_count_ == 0) {
    result.stop_reason = "exhausted";
  } else if (options_.max_evaluations > 0 && static_cast<std::int64_t>(trace_.size()) >= options_.max_evaluations) {
    result.stop_reason = "max_evaluations";
  } else {
    result.stop_reason = "converged";
  }
  result.trace = std::move(trace_);
  trace_.clear();
  return result;
}

}  // namespace servelab::solvers::search
