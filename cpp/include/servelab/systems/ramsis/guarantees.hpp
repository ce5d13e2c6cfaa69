// RAMSIS's guarantees (Sec. 5.1) and one-call policy generation.
//
// From the stationary distribution P(s) of the policy's chain (power iteration, from the empty
// state), weighting each state by the queries its action serves (as the artifact does, so the
// numbers are per query - what a simulation measures):
//   expected violation = sum_s P(s) b(s) [action misses the earliest deadline] / sum_s P(s) b(s)
//   expected accuracy  = sum_{s in S*} P(s) b(s) acc(s) / sum_{s in S*} P(s) b(s),
// S* the states whose action meets the deadline. The full-queue state counts as a violation.
#pragma once

#include <cstdint>
#include <vector>

#include "servelab/solvers/mdp/solve.hpp"
#include "servelab/systems/ramsis/latency_table.hpp"
#include "servelab/systems/ramsis/mdp_builder.hpp"
#include "servelab/systems/ramsis/policy.hpp"

namespace servelab::ramsis {

struct Guarantees {
  double expected_accuracy = 0.0;
  double expected_violation = 0.0;
  double overflow_probability = 0.0;  // stationary probability of the full-queue state
  double mean_batch = 0.0;            // queries per decision
  std::vector<double> distribution;   // stationary, per state
  std::int32_t iterations = 0;
  bool converged = false;
};

// ValueError for a policy of the wrong length, or options with tolerance < 0 (or NaN) or
// max_iterations < 1.
Guarantees evaluate(const RamsisMdp& mdp, const solvers::mdp::Policy& choice,
                    const solvers::mdp::StationaryOptions& options = {});

struct GenerateOptions {
  MdpOptions mdp;
  std::int32_t sweeps = 100;    // value-iteration sweeps (undiscounted; the artifact's 100)
  double max_violation = 0.01;  // above it the policy is marked infeasible
  solvers::mdp::StationaryOptions stationary;
  std::int32_t threads = 0;  // solver threads (0: its choice; results do not depend on it)
};

struct Generated {
  WorkerPolicy policy;  // with expected_accuracy / expected_violation / feasible filled in
  Guarantees guarantees;
  std::int32_t num_states = 0;
  std::int64_t num_pairs = 0, num_transitions = 0;
  double build_seconds = 0, solve_seconds = 0, evaluate_seconds = 0;
};

// Builds the MDP, runs value iteration and evaluates the guarantees. ValueError for bad options
// (stationary as evaluate() checks them, sweeps < 1, max_violation outside [0, 1], the MDP's).
Generated generate_policy(const LatencyTable& table, const GenerateOptions& options);

// The solver's action indices of a WorkerPolicy on `mdp` (ValueError when an action of the policy
// is not an action of that MDP's state, e.g. a policy made for other models or levels).
solvers::mdp::Policy policy_choice(const RamsisMdp& mdp, const WorkerPolicy& policy);

}  // namespace servelab::ramsis
