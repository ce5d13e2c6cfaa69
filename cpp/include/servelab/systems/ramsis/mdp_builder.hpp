// RAMSIS's per-worker MDP (Sec. 4): states (n, T_j) plus the full-queue state, actions (model,
// batch) under latency constraints, reward accuracy x SLO satisfied, transition probabilities from
// the central arrival process and the load balancer (Eq. 1-3, Appendix I).
//
// Semantics follow the public artifact where the paper leaves room:
//  - states n = 0..N with every slack level, then the full-queue state, which behaves like a queue
//    of N + 1 queries with slack 0 (it serves N + 1: the latency table is extended to that batch);
//  - in state (n, T_j), n >= 1: every (model, batch) with latency <= T_j, plus the default action
//    (the fastest model, maximal batch) when it is not among them; ties in the solver go to the
//    earlier action: models in table order, larger batches first;
//  - reward: accuracy(model) * batch / n when latency <= T_j and n <= N, else 0;
//  - after a maximal batch with no arrival during the service, the next decision is taken at the
//    next arrival: the empty-queue mass goes straight to (1, SLO) (the empty states keep their
//    arrival action and are reached only as a starting point).
// Transition rows are exact up to `prune`: entries below it are dropped and the row renormalised
// (0 keeps everything; the default drops what cannot matter to a policy or its guarantees).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "servelab/core/time.hpp"
#include "servelab/solvers/mdp/mdp.hpp"
#include "servelab/systems/ramsis/arrivals.hpp"
#include "servelab/systems/ramsis/latency_table.hpp"
#include "servelab/systems/ramsis/policy.hpp"

namespace servelab::ramsis {

struct MdpOptions {
  Nanos slo = 0;                // required, > 0
  double load_qps = 0.0;        // total load at the central queue, > 0
  std::int32_t workers = 1;     // K
  std::int32_t max_queue = 32;  // N
  Discretisation discretisation = Discretisation::FixedLength;
  std::int32_t intervals = 100;  // D (FLD)
  Batching batching = Batching::Maximal;
  Balancer balancer = Balancer::RoundRobin;
  ArrivalModel arrivals;
  bool pareto = true;    // prune models off the (accuracy, batch-1 latency) Pareto front
  double prune = 1e-12;  // drop transition probabilities below this (0: keep all)

  void validate() const;  // ValueError naming the field and value
};

// One state-action pair's meaning (aligned with Mdp's pairs).
struct PairInfo {
  std::int32_t model = kWaitModel;
  std::int32_t batch = 0;
  bool violates = false;  // latency(model, batch) > slack of the state (or the full-queue state)
};

struct RamsisMdp {
  solvers::mdp::Mdp mdp;
  MdpOptions options;
  LatencyTable table;               // the models actually used (after Pareto pruning), extended to N + 1
  std::vector<Nanos> slack_levels;  // T_0 = 0 < ... < T_last = slo
  std::vector<PairInfo> pairs;      // per state-action pair

  std::int32_t num_levels() const { return static_cast<std::int32_t>(slack_levels.size()); }
  std::int32_t overflow_state() const { return (options.max_queue + 1) * num_levels(); }
  std::int32_t queue_length(std::int32_t state) const {
    return state == overflow_state() ? options.max_queue + 1 : state / num_levels();
  }
  std::int32_t level(std::int32_t state) const { return state == overflow_state() ? 0 : state % num_levels(); }
};

// Slack levels: FLD 0, SLO/D, ..., SLO (rounded down to whole ns); MD: 0, every distinct latency
// of the table's (model, batch <= N) that is <= SLO, and SLO.
std::vector<Nanos> slack_levels(const LatencyTable& table, const MdpOptions& options);

// Builds the MDP. ValueError for: no models, an SLO below every model's batch-1 latency, D = 0,
// a non-positive load, N < 1, a table shorter than batch N (gaps are rejected by the table itself).
// Only the full-queue state's batch N + 1 is extrapolated (an OLS line, as the artifact does).
RamsisMdp build_mdp(const LatencyTable& table, const MdpOptions& options);

// The WorkerPolicy of a solved MDP: `choice` is the solver's action index per state.
WorkerPolicy to_worker_policy(const RamsisMdp& mdp, const solvers::mdp::Policy& choice);

}  // namespace servelab::ramsis
