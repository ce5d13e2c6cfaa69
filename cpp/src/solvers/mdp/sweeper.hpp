// One Bellman sweep over all states, split across a Team: v_new = T v (maximising, greedy
// actions written to `policy`) or v_new = T_pi v for a fixed policy. Every state's result
// depends only on v, and the change statistics are minima and maxima, so nothing depends on
// how states are split across threads.
#pragma once

#include <cstdint>
#include <vector>

#include "bellman.hpp"
#include "servelab/solvers/mdp/mdp.hpp"
#include "team.hpp"

namespace servelab::solvers::mdp::detail {

struct Change {
  double lowest = 0.0;   // min_s (v_new[s] - v[s])
  double highest = 0.0;  // max_s (v_new[s] - v[s])
  bool finite = true;    // every v_new[s] is finite (min/max alone would skip a NaN)
};

class Sweeper {
 public:
  // `fixed` (kept by reference, may be null): evaluate this policy instead of maximising.
  Sweeper(const Mdp& mdp, double discount, int threads, const Policy* fixed = nullptr);

  int threads() const { return team_.size(); }
  // v_new = T v; `policy` (maximising only; may be null) receives the greedy actions of v.
  Change sweep(const double* v, double* v_new, std::int32_t* policy);
  // q[pair] = reward + discount * expected next value, for every pair.
  void q_values(const double* v, double* q);

 private:
  void sweep_part(int member);

  const Mdp& mdp_;
  double discount_;
  const Policy* fixed_;
  std::vector<std::int32_t> bounds_;  // states of member m: [bounds_[m], bounds_[m + 1])
  Team team_;
  // Per-sweep arguments and per-member results (padded so members never share a cache line).
  struct alignas(64) Part {
    Change change;
  };
  std::vector<Part> parts_;
  const double* v_ = nullptr;
  double* v_new_ = nullptr;
  std::int32_t* policy_ = nullptr;
  bool q_only_ = false;
};

}  // namespace servelab::solvers::mdp::detail
