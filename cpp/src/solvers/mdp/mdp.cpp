// The MDP container's checks, its builder and the per-policy / per-transition helpers.
#include "servelab/solvers/mdp/mdp.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::solvers::mdp {

namespace {

// The shortest text that reads back as exactly x, so a message never shows 1 + 1e-12 as "1".
std::string number(double x) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, x).ptr;
  return std::string(buffer, end);
}

std::string where(std::int64_t pair, std::int32_t state, std::int64_t first_pair_of_state) {
  return str("pair ", pair, " (state ", state, ", action ", pair - first_pair_of_state, ")");
}

void check_offsets(const std::vector<std::int64_t>& offsets, const char* name, std::int64_t end, const char* end_name) {
  if (offsets.empty()) throw ValueError(str("mdp: ", name, " is empty (it needs one offset more than its items)"));
  if (offsets.front() != 0) throw ValueError(str("mdp: ", name, "[0]=", offsets.front(), " must be 0"));
  for (std::size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1]) {
      throw ValueError(str("mdp: ", name, "[", i, "]=", offsets[i], " is below ", name, "[", i - 1,
                           "]=", offsets[i - 1], " (offsets must not decrease)"));
    }
  }
  if (offsets.back() != end) {
    throw ValueError(str("mdp: the last ", name, " offset is ", offsets.back(), " but ", end_name, "=", end));
  }
}

}  // namespace

void Mdp::validate(double tolerance) const {
  if (!(tolerance >= 0) || !std::isfinite(tolerance)) {
    throw ValueError(str("mdp: tolerance=", tolerance, " must be a finite number >= 0"));
  }
  if (state_begin.size() < 2) throw ValueError("mdp: no states (state_begin needs num_states + 1 >= 2 offsets)");
  if (state_begin.size() - 1 > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw ValueError(str("mdp: ", state_begin.size() - 1, " states is more than the 2**31 - 1 supported"));
  }
  if (pair_begin.empty()) throw ValueError("mdp: pair_begin is empty (it needs num_pairs + 1 offsets)");
  check_offsets(state_begin, "state_begin", num_pairs(), "num_pairs (pair_begin size - 1)");
  if (next_state.size() != probability.size()) {
    throw ValueError(str("mdp: next_state has ", next_state.size(), " entries but probability has ", probability.size(),
                         " (one each per transition)"));
  }
  check_offsets(pair_begin, "pair_begin", num_transitions(), "num_transitions");
  if (reward.size() != static_cast<std::size_t>(num_pairs())) {
    throw ValueError(str("mdp: reward has ", reward.size(), " entries, expected one per pair (", num_pairs(), ")"));
  }

  const std::int32_t states = num_states();
  for (std::int32_t s = 0; s < states; ++s) {
    const std::int64_t first = state_begin[s];
    if (state_begin[s + 1] == first) throw ValueError(str("mdp: state ", s, " has no actions"));
    if (state_begin[s + 1] - first > std::numeric_limits<std::int32_t>::max()) {
      throw ValueError(str("mdp: state ", s, " has ", state_begin[s + 1] - first, " actions (at most 2**31 - 1)"));
    }
    for (std::int64_t a = first; a < state_begin[s + 1]; ++a) {
      if (!std::isfinite(reward[a])) {
        throw ValueError(str("mdp: ", where(a, s, first), ": reward=", number(reward[a]), " is not finite"));
      }
      if (pair_begin[a + 1] == pair_begin[a]) throw ValueError(str("mdp: ", where(a, s, first), " has no transitions"));
      double sum = 0.0;
      for (std::int64_t t = pair_begin[a]; t < pair_begin[a + 1]; ++t) {
        if (next_state[t] < 0 || next_state[t] >= states) {
          throw ValueError(str("mdp: transition ", t, " of ", where(a, s, first), ": next_state=", next_state[t],
                               " is out of range [0, ", states, ")"));
        }
        if (!(probability[t] >= 0.0 && probability[t] <= 1.0)) {
          throw ValueError(str("mdp: transition ", t, " of ", where(a, s, first),
                               ": probability=", number(probability[t]), " is outside [0, 1]"));
        }
        sum += probability[t];
      }
      if (!(std::abs(sum - 1.0) <= tolerance)) {
        throw ValueError(str("mdp: ", where(a, s, first), ": transition probabilities sum to ", number(sum),
                             ", not 1 (tolerance ", number(tolerance), ")"));
      }
    }
  }
}

void MdpBuilder::reserve(std::int32_t states, std::int64_t pairs, std::int64_t transitions) {
  if (states < 0 || pairs < 0 || transitions < 0) {
    throw ValueError(
        str("MdpBuilder.reserve: states=", states, ", pairs=", pairs, ", transitions=", transitions, " must be >= 0"));
  }
  mdp_.state_begin.reserve(static_cast<std::size_t>(states) + 1);
  mdp_.pair_begin.reserve(static_cast<std::size_t>(pairs) + 1);
  mdp_.reward.reserve(static_cast<std::size_t>(pairs));
  mdp_.next_state.reserve(static_cast<std::size_t>(transitions));
  mdp_.probability.reserve(static_cast<std::size_t>(transitions));
}

// Invariant: state_begin.back() == number of pairs and pair_begin.back() == number of
// transitions added so far, so the last state / pair always grows in place.
std::int32_t MdpBuilder::add_state() {
  if (mdp_.num_states() == std::numeric_limits<std::int32_t>::max()) {
    throw ValueError("MdpBuilder.add_state: more than 2**31 - 1 states");
  }
  mdp_.state_begin.push_back(mdp_.state_begin.back());
  return mdp_.num_states() - 1;
}

std::int64_t MdpBuilder::add_action(double reward) {
  if (mdp_.num_states() == 0) throw ValueError("MdpBuilder.add_action: add a state first");
  mdp_.pair_begin.push_back(mdp_.pair_begin.back());
  mdp_.reward.push_back(reward);
  ++mdp_.state_begin.back();
  return mdp_.num_pairs() - 1;
}

void MdpBuilder::add_transition(std::int32_t next, double probability) {
  const std::size_t n = mdp_.state_begin.size();
  if (n < 2 || mdp_.state_begin[n - 1] == mdp_.state_begin[n - 2]) {
    throw ValueError(
        str("MdpBuilder.add_transition: state ", mdp_.num_states() - 1, " has no action yet (add_action first)"));
  }
  mdp_.next_state.push_back(next);
  mdp_.probability.push_back(probability);
  ++mdp_.pair_begin.back();
}

void MdpBuilder::add_transition(std::int32_t next, double probability, double reward) {
  add_transition(next, probability);
  mdp_.reward.back() += probability * reward;
}

Mdp MdpBuilder::finish(double tolerance) {
  mdp_.validate(tolerance);
  Mdp done = std::move(mdp_);
  mdp_ = Mdp{};
  return done;
}

void validate_policy(const Mdp& mdp, const Policy& policy) {
  if (policy.size() != static_cast<std::size_t>(mdp.num_states())) {
    throw ValueError(str("policy has ", policy.size(), " entries, expected one per state (", mdp.num_states(), ")"));
  }
  for (std::int32_t s = 0; s < mdp.num_states(); ++s) {
    if (policy[s] < 0 || policy[s] >= mdp.num_actions(s)) {
      throw ValueError(
          str("policy[", s, "]=", policy[s], " is not an action of state ", s, " (it has ", mdp.num_actions(s), ")"));
    }
  }
}

std::vector<std::int64_t> policy_pairs(const Mdp& mdp, const Policy& policy) {
  validate_policy(mdp, policy);
  std::vector<std::int64_t> pairs(policy.size());
  for (std::size_t s = 0; s < policy.size(); ++s) pairs[s] = mdp.state_begin[s] + policy[s];
  return pairs;
}

Mdp make_mdp(std::vector<std::int64_t> state_begin, std::vector<std::int64_t> pair_begin,
             std::vector<std::int32_t> next_state, std::vector<double> probability,
             std::optional<std::vector<double>> reward, double tolerance) {
  Mdp mdp;
  mdp.state_begin = std::move(state_begin);
  mdp.pair_begin = std::move(pair_begin);
  mdp.next_state = std::move(next_state);
  mdp.probability = std::move(probability);
  if (reward) {
    mdp.reward = std::move(*reward);
  } else {
    mdp.reward.assign(mdp.pair_begin.empty() ? 0 : mdp.pair_begin.size() - 1, 0.0);
  }
  mdp.validate(tolerance);
  return mdp;
}

void add_transition_rewards(Mdp& mdp, std::span<const double> transition_reward, double tolerance) {
  const auto extra = expected_rewards(mdp, transition_reward);
  for (std::size_t a = 0; a < extra.size(); ++a) mdp.reward[a] += extra[a];
  mdp.validate(tolerance);
}

std::vector<double> expected_rewards(const Mdp& mdp, std::span<const double> transition_reward) {
  if (transition_reward.size() != static_cast<std::size_t>(mdp.num_transitions())) {
    throw ValueError(str("transition_reward has ", transition_reward.size(), " entries, expected one per transition (",
                         mdp.num_transitions(), ")"));
  }
  std::vector<double> out(static_cast<std::size_t>(mdp.num_pairs()), 0.0);
  for (std::int64_t a = 0; a < mdp.num_pairs(); ++a) {
    double sum = 0.0;
    for (std::int64_t t = mdp.pair_begin[a]; t < mdp.pair_begin[a + 1]; ++t) {
      if (!std::isfinite(transition_reward[t])) {
        throw ValueError(
            str("transition_reward[", t, "]=", number(transition_reward[t]), " (pair ", a, ") is not finite"));
      }
      sum += mdp.probability[t] * transition_reward[t];
    }
    out[a] = sum;
  }
  return out;
}

}  // namespace servelab::solvers::mdp
