// Guarantees from the stationary distribution, and policy generation (guarantees.hpp).
#include "servelab/systems/ramsis/guarantees.hpp"

#include <chrono>
#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::ramsis {

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The guarantees need a distribution: at least one power iteration, to a tolerance >= 0.
void check_stationary(const solvers::mdp::StationaryOptions& s) {
  if (!(s.tolerance >= 0)) throw ValueError(str("tolerance=", s.tolerance, " must be >= 0"));
  if (s.max_iterations < 1) throw ValueError(str("max_iterations=", s.max_iterations, " must be >= 1"));
}
}  // namespace

Guarantees evaluate(const RamsisMdp& r, const solvers::mdp::Policy& choice,
                    const solvers::mdp::StationaryOptions& options) {
  check_stationary(options);
  const auto& mdp = r.mdp;
  if (static_cast<std::int32_t>(choice.size()) != mdp.num_states()) {
    throw ValueError(str("policy has ", choice.size(), " entries for ", mdp.num_states(), " states"));
  }
  std::vector<double> start(static_cast<std::size_t>(mdp.num_states()), 0.0);
  start[0] = 1.0;  // the empty queue, as the artifact starts
  auto stationary = solvers::mdp::stationary_distribution(mdp, choice, options, start);
  Guarantees g;
  double served = 0, violated = 0, satisfied = 0, accuracy = 0, decisions = 0;
  for (std::int32_t s = 0; s < mdp.num_states(); ++s) {
    const double p = stationary.distribution[s];
    const PairInfo& info = r.pairs[static_cast<std::size_t>(mdp.state_begin[s] + choice[s])];
    if (info.model == kWaitModel) continue;
    const double q = p * info.batch;
    decisions += p;
    served += q;
    if (info.violates) {
      violated += q;
    } else {
      satisfied += q;
      accuracy += q * r.table.accuracy[info.model];
    }
  }
  g.expected_violation = served > 0 ? violated / served : 0.0;
  g.expected_accuracy = satisfied > 0 ? accuracy / satisfied : 0.0;
  g.mean_batch = decisions > 0 ? served / decisions : 0.0;
  g.overflow_probability = stationary.distribution[r.overflow_state()];
  g.iterations = stationary.iterations;
  g.converged = stationary.converged;
  g.distribution = std::move(stationary.distribution);
  return g;
}

Generated generate_policy(const LatencyTable& table, const GenerateOptions& o) {
  check_stationary(o.stationary);
  if (o.sweeps < 1) throw ValueError(str("sweeps=", o.sweeps, " must be >= 1"));
  if (!(o.max_violation >= 0 && o.max_violation <= 1)) {
    throw ValueError(str("max_violation=", o.max_violation, " must be in [0, 1]"));
  }
  Generated out;
  auto t0 = std::chrono::steady_clock::now();
  const RamsisMdp mdp = build_mdp(table, o.mdp);
  out.build_seconds = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  solvers::mdp::SolveOptions solve;
  solve.discount = 1.0;
  solve.max_iterations = o.sweeps;
  solve.min_iterations = o.sweeps;  // the artifact runs a fixed number of sweeps
  solve.tolerance = 0.0;
  solve.threads = o.threads;
  const auto solution = solvers::mdp::value_iteration(mdp.mdp, solve);
  out.solve_seconds = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  out.guarantees = evaluate(mdp, solution.policy, o.stationary);
  out.evaluate_seconds = seconds_since(t0);

  out.policy = to_worker_policy(mdp, solution.policy);
  out.policy.expected_accuracy = out.guarantees.expected_accuracy;
  out.policy.expected_violation = out.guarantees.expected_violation;
  out.policy.feasible = out.guarantees.expected_violation <= o.max_violation;
  out.num_states = mdp.mdp.num_states();
  out.num_pairs = mdp.mdp.num_pairs();
  out.num_transitions = static_cast<std::int64_t>(mdp.mdp.next_state.size());
  return out;
}

solvers::mdp::Policy policy_choice(const RamsisMdp& r, const WorkerPolicy& policy) {
  const auto& mdp = r.mdp;
  if (policy.num_states() != mdp.num_states() || policy.slack_levels != r.slack_levels) {
    throw ValueError(str("the policy has ", policy.num_states(), " states and ", policy.num_levels(),
                         " slack levels, the MDP ", mdp.num_states(), " and ", r.num_levels()));
  }
  if (policy.models != r.table.models) throw ValueError("the policy's models differ from the MDP's models");
  solvers::mdp::Policy choice(static_cast<std::size_t>(mdp.num_states()), -1);
  for (std::int32_t s = 0; s < mdp.num_states(); ++s) {
    for (std::int64_t a = mdp.state_begin[s]; a < mdp.state_begin[s + 1]; ++a) {
      const PairInfo& info = r.pairs[static_cast<std::size_t>(a)];
      if (info.model == policy.action_model[s] && info.batch == policy.action_batch[s]) {
        choice[s] = static_cast<std::int32_t>(a - mdp.state_begin[s]);
        break;
      }
    }
    if (choice[s] < 0) {
      throw ValueError(str("state ", s, ": the policy's action (model ", policy.action_model[s], ", batch ",
                           policy.action_batch[s], ") is not an action of the MDP"));
    }
  }
  return choice;
}

}  // namespace servelab::ramsis
