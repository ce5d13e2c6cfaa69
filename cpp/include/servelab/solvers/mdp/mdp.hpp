// Finite Markov decision processes with sparse transitions (CSR layout), and their solvers.
// Generic: RAMSIS builds one per worker (systems/ramsis); anything else may build its own.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace servelab::solvers::mdp {

// State s owns the state-action pairs [state_begin[s], state_begin[s+1]); pair a owns the
// transitions [pair_begin[a], pair_begin[a+1]) of next_state / probability. reward[a] is the
// expected immediate reward of pair a (per-transition rewards are folded in by the builder).
struct Mdp {
  std::vector<std::int64_t> state_begin{0};  // size num_states + 1
  std::vector<std::int64_t> pair_begin{0};   // size num_pairs + 1
  std::vector<std::int32_t> next_state;      // size num_transitions
  std::vector<double> probability;           // size num_transitions
  std::vector<double> reward;                // size num_pairs

  std::int32_t num_states() const { return static_cast<std::int32_t>(state_begin.size()) - 1; }
  std::int64_t num_pairs() const { return static_cast<std::int64_t>(pair_begin.size()) - 1; }
  std::int64_t num_transitions() const { return static_cast<std::int64_t>(next_state.size()); }
  std::int32_t num_actions(std::int32_t state) const {
    return static_cast<std::int32_t>(state_begin[state + 1] - state_begin[state]);
  }
  // The global pair index of `state`'s action-th action (no range check).
  std::int64_t pair_of(std::int32_t state, std::int32_t action) const { return state_begin[state] + action; }
  // ValueError naming the state/pair: a state without actions, a probability outside [0, 1],
  // NaN, out-of-range next states, or transitions of a pair not summing to 1 within `tolerance`.
  // Also checks the CSR arrays themselves (sizes, offsets starting at 0 and never decreasing)
  // and that rewards are finite.
  void validate(double tolerance = 1e-9) const;
};

// Appends states, their actions and transitions in order. A transition may point to a state
// added later; finish() checks everything.
class MdpBuilder {
 public:
  void reserve(std::int32_t states, std::int64_t pairs, std::int64_t transitions);
  std::int32_t add_state();                                    // returns the new state's id
  std::int64_t add_action(double reward);                      // a pair of the last added state
  void add_transition(std::int32_t next, double probability);  // of the last added pair
  // A transition with its own reward: adds probability * reward to the pair's expected reward
  // (for rewards R(s, a, s'); the action's own reward, if any, is given to add_action).
  void add_transition(std::int32_t next, double probability, double reward);
  std::int32_t num_states() const { return mdp_.num_states(); }
  std::int64_t num_pairs() const { return mdp_.num_pairs(); }
  Mdp finish(double tolerance = 1e-9);  // validates, then hands the MDP over (the builder restarts empty)

 private:
  Mdp mdp_;
};

// A deterministic policy: for each state, the index of the chosen action among its own
// (0 .. num_actions(s) - 1).
using Policy = std::vector<std::int32_t>;

// ValueError unless `policy` has one entry per state, each a valid action of its state.
void validate_policy(const Mdp& mdp, const Policy& policy);

// The global pair index chosen by `policy` in each state (validates the policy).
std::vector<std::int64_t> policy_pairs(const Mdp& mdp, const Policy& policy);

// An MDP from its arrays, validated (Mdp::validate): `reward` per pair, or nullopt for 0 everywhere.
Mdp make_mdp(std::vector<std::int64_t> state_begin, std::vector<std::int64_t> pair_begin,
             std::vector<std::int32_t> next_state, std::vector<double> probability,
             std::optional<std::vector<double>> reward, double tolerance = 1e-9);

// Adds the expectation of rewards given per transition (expected_rewards) to every pair's reward,
// then validates the MDP again (the sums could overflow).
void add_transition_rewards(Mdp& mdp, std::span<const double> transition_reward, double tolerance = 1e-9);

// Expected immediate reward of every pair for rewards given per transition:
// sum over the pair's transitions t of probability[t] * transition_reward[t], summed in order.
// Assign the result to mdp.reward (or add the actions' own rewards to it first).
std::vector<double> expected_rewards(const Mdp& mdp, std::span<const double> transition_reward);

}  // namespace servelab::solvers::mdp
