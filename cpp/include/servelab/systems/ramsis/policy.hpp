// RAMSIS's generated model-selection policies, as the online scheduler consumes them.
//
// A WorkerPolicy is the solved per-worker MDP for one (total load, worker count, SLO): its slack
// discretisation (FLD: 0, SLO/D, ..., SLO; MD: every distinct profiled latency <= SLO, plus 0 and
// SLO), the maximum queue length N, and one action (model, batch) per state (n, slack level j) for
// n = 0..N, plus the full-queue (overflow) state. A PolicySet holds the policies of one task across
// a grid of loads; lookup(load) returns the policy of the smallest grid load at or above `load`.
//
// The scheduler calls decide(queue_length, earliest_slack) once per decision: O(log levels).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "servelab/core/time.hpp"

namespace servelab::ramsis {

// What a worker does in a state. model == kWaitModel (empty queue): wait for the next arrival.
struct Action {
  std::int32_t model = -1;  // index into the policy's models
  std::int32_t batch = 0;   // queries to serve, earliest deadlines first
};
inline constexpr std::int32_t kWaitModel = -1;

// What the MDP builder accepts, and so what a valid policy can hold.
inline constexpr std::int32_t kMaxQueueLength = 4096;  // N
inline constexpr std::int32_t kMaxIntervals = 100000;  // D (FLD)
inline constexpr std::int32_t kMaxErlangShape = 1000;  // r of erlang<r> arrivals

enum class Discretisation { FixedLength, ModelBased };  // "fld" / "md"
enum class Batching { Maximal, Variable };              // "maximal" / "variable"

struct WorkerPolicy {
  // --- what it was generated for ---
  std::vector<std::string> models;  // profile model names, the order of every model index below
  std::vector<double> accuracy;     // per model, the reward's accuracy (as given: % or fraction)
  Nanos slo = 0;
  double load_qps = 0.0;                 // total load at the central queue
  std::int32_t workers = 1;              // K: each worker receives load_qps / K
  std::string balancer = "round_robin";  // or "shortest_queue"
  std::string arrivals = "poisson";      // the central arrival process: "poisson" or "erlang<r>"
  Discretisation discretisation = Discretisation::FixedLength;
  std::int32_t intervals = 100;  // D for FLD (0 for MD)
  Batching batching = Batching::Maximal;

  // --- the state space ---
  std::vector<Nanos> slack_levels;  // ascending T_0 = 0 < T_1 < ... < T_last = slo
  std::int32_t max_queue = 32;      // N: states n = 0..N, then one overflow state
  // Action of state (n, j) at [n * levels + j] for n = 0..N; the overflow state's action last
  // (index (N + 1) * levels). model[s] == kWaitModel for n == 0.
  std::vector<std::int32_t> action_model;
  std::vector<std::int32_t> action_batch;

  // --- guarantees (Sec. 5.1, per query, from the stationary distribution) ---
  double expected_accuracy = 0.0;   // mean accuracy of the queries served within their deadline
  double expected_violation = 0.0;  // fraction of queries served after their deadline
  // False when the expected violation exceeds the generation's max_violation (1% by default): no
  // model keeps up with this load within the SLO. The policy still exists (the fastest model is
  // the fallback), but nothing is guaranteed.
  bool feasible = true;

  std::int32_t num_levels() const { return static_cast<std::int32_t>(slack_levels.size()); }
  std::int32_t num_states() const { return (max_queue + 1) * num_levels() + 1; }
  std::int32_t overflow_state() const { return (max_queue + 1) * num_levels(); }
  std::int32_t state_index(std::int32_t n, std::int32_t level) const {
    return n > max_queue ? overflow_state() : n * num_levels() + level;
  }
  // Largest j with slack_levels[j] <= slack (0 when slack < 0): the MDP's conservative view.
  std::int32_t level_of(Nanos slack) const;
  // The action for a queue of `queue_length` queries whose earliest deadline is `earliest_slack`
  // away. Queue length 0 -> {kWaitModel, 0}; beyond N -> the overflow state's model with
  // batch = min(queue_length, overflow batch). The batch never exceeds queue_length.
  Action decide(std::int32_t queue_length, Nanos earliest_slack) const;
  Action action_at(std::int32_t state) const { return {action_model[state], action_batch[state]}; }

  // ValueError naming the field: sizes, level order, model indices, batches in 1..n, and the
  // generation fields a scheduler relies on (balancer, arrivals, max_queue, intervals).
  void validate() const;
};

struct PolicySet {
  std::vector<std::string> models;
  std::vector<double> accuracy;
  Nanos slo = 0;
  std::int32_t workers = 1;
  std::vector<WorkerPolicy> policies;  // ascending load_qps, same models / slo / workers

  // Index of the smallest grid load >= load_qps; the highest policy when the load is above all
  // (the caller may flag it: nothing generated covers that load). ValueError when empty or NaN.
  std::int32_t lookup_index(double load_qps) const;
  const WorkerPolicy& lookup(double load_qps) const { return policies[lookup_index(load_qps)]; }
  Action decide(double load_qps, std::int32_t queue_length, Nanos earliest_slack) const {
    return lookup(load_qps).decide(queue_length, earliest_slack);
  }
  void validate() const;  // every policy valid, ascending loads, consistent models / slo / workers
};

std::string discretisation_name(Discretisation d);
Discretisation parse_discretisation(const std::string& name);  // ValueError naming the value
std::string batching_name(Batching b);
Batching parse_batching(const std::string& name);

// JSON (policy_json.cpp): a self-describing document; from_json validates and raises ValueError
// naming the field that is missing or wrong.
std::string to_json(const WorkerPolicy& policy);
std::string to_json(const PolicySet& set);
WorkerPolicy worker_policy_from_json(const std::string& text);
PolicySet policy_set_from_json(const std::string& text);
// Either document, told apart by its "format" field; a worker policy becomes a set of one.
PolicySet any_policy_set_from_json(const std::string& text);

// The set of one policy (the scheduler runs sets; a single policy serves every load).
PolicySet policy_set_of(WorkerPolicy policy);

}  // namespace servelab::ramsis
