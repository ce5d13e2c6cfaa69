// A simulated tuning experiment (Sec. 6): a learner picks a configuration per measurement episode
// of consecutive requests drawn from a workload, the performance model serves them, and the
// learner learns from the episode's latency. The static best-in-hindsight configuration (the
// oracle), found by exhaustive search on the same model and arrivals, is the yardstick: regret and
// convergence are measured against it, both on noise-free replays of the same episodes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "servelab/systems/rrl/config_space.hpp"
#include "servelab/systems/rrl/episode.hpp"
#include "servelab/systems/rrl/perf_model.hpp"
#include "servelab/systems/rrl/q_learner.hpp"
#include "servelab/workload/arrivals.hpp"

namespace servelab::rrl {

struct TuningOptions {
  std::int64_t steps = 2000;
  std::int64_t episode_requests = 200;  // the artifact's number_of_request.txt
  double state_width_qps = 0;           // load-level width; 0: half the process's mean rate
  std::int64_t max_states = 32;
  std::int64_t oracle_episodes = 50;  // episodes (evenly spaced) the oracle's search scores
  double tolerance = 0.1;             // converged: greedy within (1 + tolerance) of the oracle
  std::int64_t window = 50;           // ... in the median of every later window of this many episodes
  std::uint64_t seed = 0;
  void validate() const;
};

struct Oracle {
  std::size_t config = 0;
  double cost = 0;       // mean objective cost over the scored episodes
  double metric_ms = 0;  // mean objective latency over them
  bool feasible = true;  // SloResources: false when no configuration meets the SLO
  std::size_t evaluated = 0;
};

// The static configuration of lowest mean cost over `episodes` (noise-free); for SloResources, the
// smallest resource share whose p95 over all scored requests meets the SLO (ties: lower latency),
// or, when none does, the lowest-latency configuration with feasible = false.
Oracle find_oracle(const ConfigSpace& space, const PerfModel& model, const Objective& objective,
                   const std::vector<std::vector<double>>& episodes);

struct TuningResult {
  std::string method;
  std::vector<std::uint32_t> config, greedy, state;
  std::vector<double> rate_qps, metric_ms, cost;        // observed (with noise)
  std::vector<double> chosen_ms, greedy_ms, oracle_ms;  // noise-free replays, objective latency
  std::vector<double> chosen_cost, greedy_cost, oracle_cost;
  std::vector<double> learn_ns;  // wall time of each learning step (learn + choose); not deterministic
  Oracle oracle;
  std::int64_t converged_step = -1;  // -1: never within tolerance for good
  double mean_region_size = 1;
  std::size_t states = 0;
  double state_width_qps = 0;
};

// The episodes' arrival times (ms, each relative to its first request) drawn from `arrivals` with
// Rng(seed, "arrivals"); ValueError when the process ends before steps * episode_requests arrivals.
std::vector<std::vector<double>> draw_episodes(const workload::ArrivalProcess& arrivals, const TuningOptions& options);

// Runs `method` for options.steps episodes: "rrl" or "qlearning" (learner.region is set from it), or
// the deep-RL baselines "capes" and "deeprm" (learner.deep).
// Calls core::check_interrupt() every episode.
TuningResult run_tuning(const ConfigSpace& space, const PerfModel& model, const workload::ArrivalProcess& arrivals,
                        const Objective& objective, const std::string& method, LearnerOptions learner,
                        const TuningOptions& options);

// The first step t from which, in every window of `window` episodes, the median of the per-episode
// ratio greedy / oracle stays within 1 + tolerance (or -1 if none). The median, not the sum: an
// episode whose load falls into a rarely seen load level (a 3.5-sigma rate) is served by a barely
// learned policy there, and should not decide whether the learner has converged on the load it sees;
// the regret keeps its cost.
std::int64_t convergence_step(const std::vector<double>& greedy_cost, const std::vector<double>& oracle_cost,
                              double tolerance, std::int64_t window);

}  // namespace servelab::rrl
