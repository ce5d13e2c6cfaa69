// Finite Markov decision processes with sparse transitions (CSR layout), and their solvers.
// Generic: RAMSIS builds one per worker (systems/ramsis); anything else may build its own.
#pragma once

#include <cstdint>
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
  std::int32_t num_actions(std::int32_t state) const {
    return static_cast<std::int32_t>(state_begin[state + 1] - state_begin[state]);
  }
  // ValueError naming the state/pair: a state without actions, a probability outside [0, 1],
  // NaN, out-of-range next states, or transitions of a pair not summing to 1 within `tolerance`.
  void validate(double tolerance = 1e-9) const;
};

// Appends states, their actions and transitions in order.
class MdpBuilder {
 public:
  std::int32_t add_state();                            // returns the new state's id
  std::int64_t add_action(double reward);              // a pair of the last added state
  void add_transition(std::int32_t next, double probability);  // of the last added pair
  Mdp finish();                                        // validates, then hands the MDP over

 private:
  Mdp mdp_;
};

// A deterministic policy: for each state, the index of the chosen action among its own
// (0 .. num_actions(s) - 1).
using Policy = std::vector<std::int32_t>;

}  // namespace servelab::solvers::mdp
