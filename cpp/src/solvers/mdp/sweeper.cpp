#include "sweeper.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace servelab::solvers::mdp::detail {

namespace {

// Work per state: the transitions its sweep touches, as a prefix sum for balanced_ranges.
std::vector<std::int64_t> transitions_before_state(const Mdp& mdp, const Policy* fixed) {
  const std::int32_t n = mdp.num_states();
  std::vector<std::int64_t> out(static_cast<std::size_t>(n) + 1, 0);
  for (std::int32_t s = 0; s < n; ++s) {
    if (fixed) {
      const std::int64_t a = mdp.state_begin[s] + (*fixed)[s];
      out[s + 1] = out[s] + (mdp.pair_begin[a + 1] - mdp.pair_begin[a]) + 1;
    } else {
      out[s + 1] = mdp.pair_begin[mdp.state_begin[s + 1]] + mdp.state_begin[s + 1];
    }
  }
  return out;
}

}  // namespace

Sweeper::Sweeper(const Mdp& mdp, double discount, int threads, const Policy* fixed)
    : mdp_(mdp),
      discount_(discount),
      fixed_(fixed),
      team_(choose_threads(threads,
                           fixed ? mdp.num_transitions() / std::max<std::int64_t>(1, mdp.num_pairs()) * mdp.num_states()
                                 : mdp.num_transitions(),
                           mdp.num_states())),
      parts_(static_cast<std::size_t>(team_.size())) {
  const auto weights = transitions_before_state(mdp, fixed);
  bounds_ = balanced_ranges(weights, team_.size());
}

Change Sweeper::sweep(const double* v, double* v_new, std::int32_t* policy) {
  v_ = v;
  v_new_ = v_new;
  policy_ = policy;
  q_only_ = false;
  team_.run([this](int member) { sweep_part(member); });
  Change total{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), true};
  for (const auto& part : parts_) {
    total.lowest = std::min(total.lowest, part.change.lowest);
    total.highest = std::max(total.highest, part.change.highest);
    total.finite = total.finite && part.change.finite;
  }
  return total;
}

void Sweeper::q_values(const double* v, double* q) {
  v_ = v;
  v_new_ = q;
  policy_ = nullptr;
  q_only_ = true;
  team_.run([this](int member) { sweep_part(member); });
}

void Sweeper::sweep_part(int member) {
  const SparseRows rows = pair_rows(mdp_);
  const std::int32_t s0 = bounds_[member], s1 = bounds_[member + 1];
  const double* reward = mdp_.reward.data();
  const std::int64_t* state_begin = mdp_.state_begin.data();
  double lowest = std::numeric_limits<double>::infinity();
  double highest = -std::numeric_limits<double>::infinity();
  bool finite = true;

  if (q_only_) {
    for (std::int64_t a = state_begin[s0]; a < state_begin[s1]; ++a) {
      v_new_[a] = reward[a] + discount_ * rows.dot(a, v_);
    }
    return;
  }
  for (std::int32_t s = s0; s < s1; ++s) {
    double best;
    std::int32_t arg = 0;
    if (fixed_) {
      const std::int64_t a = state_begin[s] + (*fixed_)[s];
      best = reward[a] + discount_ * rows.dot(a, v_);
    } else {
      const std::int64_t first = state_begin[s];
      best = reward[first] + discount_ * rows.dot(first, v_);
      for (std::int64_t a = first + 1; a < state_begin[s + 1]; ++a) {
        const double q = reward[a] + discount_ * rows.dot(a, v_);
        if (q > best) {  // strictly: ties stay with the lowest action index
          best = q;
          arg = static_cast<std::int32_t>(a - first);
        }
      }
    }
    lowest = std::min(lowest, best - v_[s]);
    highest = std::max(highest, best - v_[s]);
    finite = finite && std::isfinite(best);
    v_new_[s] = best;
    if (policy_) policy_[s] = arg;
  }
  parts_[static_cast<std::size_t>(member)].change = {lowest, highest, finite};
}

}  // namespace servelab::solvers::mdp::detail
