// The bookkeeping every search method shares: the enumerated feasible points, which are evaluated
// or pruned, the evaluation cache and trace, the pruning rules of problem.hpp, the stopping rules
// and the seeded random stream. Methods only choose which alive point to evaluate next.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "servelab/core/rng.hpp"
#include "servelab/solvers/search/result.hpp"
#include "servelab/solvers/search/search.hpp"

namespace servelab::solvers::search {

struct PruningRules {
  bool monotone = true;  // sub-configurations (MaximizeValue) or cost/dominance (MinimizeCost)
  bool bound = true;     // upper bound <= best value (MaximizeValue with an upper bound)
  // The rules the problem asks for.
  static PruningRules of(const Problem& problem);
};

class SearchState {
 public:
  // `needs_bounds`: compute every point's upper bound even if bound pruning is off (kairos_plus).
  SearchState(const Problem& problem, const SearchOptions& options, std::string method, PruningRules rules,
              bool needs_bounds = false);

  const Problem& problem() const { return problem_; }
  Goal goal() const { return problem_.goal; }
  Rng& rng() { return rng_; }

  std::size_t size() const { return points_.size(); }
  const Config& point(std::size_t i) const { return points_[i]; }
  double cost(std::size_t i) const { return costs_[i]; }
  // Upper bound of point i; only when bounds were computed.
  double bound(std::size_t i) const { return bounds_[i]; }
  bool has_bounds() const { return !bounds_.empty(); }

  bool evaluated(std::size_t i) const { return status_[i] == kEvaluated; }
  bool pruned(std::size_t i) const { return status_[i] == kPruned; }
  bool alive(std::size_t i) const { return status_[i] == kAlive; }
  std::size_t alive_count() const { return alive_count_; }
  std::vector<std::size_t> alive_points() const;

  // Index of a feasible point, or nullopt when `config` is not one.
  std::optional<std::size_t> find(const Config& config) const;
  // Feasible points one unit move away: +-1 in one dimension and, with `swaps`, -1 in one and +1
  // in another (moves along a budget frontier).
  std::vector<std::size_t> neighbours(std::size_t i, bool swaps) const;
  // The alive point nearest to `config` (L1 distance, ties broken at random); nullopt if none.
  std::optional<std::size_t> nearest_alive(const Config& config);

  // True when the search must stop: no alive point, max_evaluations used, or stop_at reached.
  bool should_stop() const;

  // Evaluates alive point i (a logic error otherwise), records it and applies the pruning rules.
  const Evaluation& evaluate(std::size_t i);
  // Fitness (higher is better) of an evaluated point: the value when maximising; Ribbon's score
  // when minimising cost: 0.5 + 0.5 * (1 - cost / max cost) when feasible, else 0.5 * value /
  // target (clamped to [0, 0.5)), so every feasible point beats every infeasible one.
  double fitness(std::size_t i) const;
  double value(std::size_t i) const { return values_[i]; }
  std::optional<std::size_t> best() const { return best_; }

  // Marks alive point i pruned (a method's own rule, e.g. kairos_plus's bound).
  void prune(std::size_t i);

  SearchResult finish(std::string reason = {});

 private:
  enum Status : std::uint8_t { kAlive, kEvaluated, kPruned };
  std::int64_t box_index(const Config& config) const;
  bool better(std::size_t a, std::size_t b) const;  // a strictly better than b (both evaluated)
  bool stop_at_reached() const;
  void apply_pruning(std::size_t i);

  const Problem& problem_;
  SearchOptions options_;
  std::string method_;
  PruningRules rules_;
  Rng rng_;
  std::vector<Config> points_;
  std::vector<double> costs_;
  std::vector<double> bounds_;
  std::vector<double> values_;
  std::vector<Status> status_;
  std::unordered_map<std::int64_t, std::size_t> index_;
  std::size_t alive_count_ = 0;
  double max_cost_ = 0.0;
  std::optional<std::size_t> best_;
  std::vector<Evaluation> trace_;
};

}  // namespace servelab::solvers::search
