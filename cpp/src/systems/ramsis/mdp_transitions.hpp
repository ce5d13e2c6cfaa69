// Transition rows of RAMSIS's per-worker MDP (internal to mdp_builder.cpp).
//
// The worker sees every K-th event ("stride") of a Poisson process of rate lambda (arrivals.hpp).
// In state (n, T_j) the earliest query arrived T_A = SLO - T_j ago, with n - 1 worker arrivals
// since, so the event count of interval A is (n-1)K + x with x in [0, K) (Eq. 2's k_A), and x -
// the phase of the round-robin at the decision - is distributed as Poisson((n-1)K + x; lambda T_A)
// normalised over x: w[x]. The next first arrival of the worker is the m-th event, m = K - x.
//
// Maximal batch (b = n) served in tau (Fig. 4's intervals B, C, D): the next state is (n', T_j')
// when the m-th event falls into the slot of times whose slack at the next decision is in
// [T_j', T_j'+1) - slot (e_j', e_j'+1] with e_i = max(0, tau - SLO + T_i) - and the total count N(tau)
// is in [m + (n'-1)K, m + n'K - 1]. With
//   Phi(t, m, n') = P(N(t) < m, N(tau) in [m + (n'-1)K, m + n'K - 1])
// the probability is sum_x w[x] (Phi(e_j', m, n') - Phi(e_j'+1, m, n')). Phi is a difference of
//   Psi(t, m, c) = P(N(t) < m, N(tau) <= m - 1 + c),  c = i K,
// which has an O(1) recurrence in m (given N(tau) = q, N(t) is Binomial(q, t / tau)):
//   Psi(t, m + 1, c) = Psi(t, m, c) + p_t(m) Q_u(c) + p_tau(m + c) P(Bin(m + c, t/tau) <= m - 1),
// so one kernel per (queue length, model) costs O(boundaries x queue lengths x K), and a state's
// row is the kernel mixed with its w: the same sums as Eq. 2, in another order.
//
// Variable batch (b < n): the next earliest query is the (b+1)-th of the queue, event bK of
// interval A; given N(T_A) = q its time is that of the bK-th of q uniform points, and the worker's
// new arrivals during tau depend on the phase x only.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "servelab/core/time.hpp"

namespace servelab::ramsis::detail {

struct Grid {
  double slo = 0;               // ns
  std::vector<double> levels;   // T_0 = 0 .. T_{L-1} = slo, ns
  std::int32_t max_queue = 32;  // N
  std::int32_t num_levels() const { return static_cast<std::int32_t>(levels.size()); }
  std::int32_t overflow_state() const { return (max_queue + 1) * num_levels(); }
  // Largest level <= value (0 below T_0).
  std::int32_t level_of(double value) const;
};

struct Row {
  std::vector<std::int32_t> next;
  std::vector<double> prob;
};

// P(N(u) <= iK) for u = SLO - T_i of every level, i = 0..N: shared by every kernel of one rate.
class LevelCdfs {
 public:
  LevelCdfs(const Grid& grid, double rate, std::int32_t stride);
  double at(std::int32_t level, std::int32_t i) const { return cdf_[level * (max_i_ + 1) + i]; }

 private:
  std::int32_t max_i_;
  std::vector<double> cdf_;
};

// The phase weights w of each state (n, j): they depend on the state only, so every action of a
// state shares them. Computed on first use.
class PhaseWeights {
 public:
  explicit PhaseWeights(const Grid& grid) : grid_(grid), cache_(static_cast<std::size_t>(grid.overflow_state()) + 1) {}
  // n = N + 1: the full-queue state (its j is 0).
  const std::vector<double>& get(std::int32_t n, std::int32_t j, double rate, std::int32_t stride);

 private:
  const Grid& grid_;
  std::vector<std::vector<double>> cache_;
};

// The rows of every state (n, j in js) taking a maximal batch of n (n = N + 1: the full-queue
// state, whose slack is 0) that lasts tau ns. One row per entry of js, in order.
std::vector<Row> maximal_rows(const Grid& grid, double rate, std::int32_t stride, const LevelCdfs& cdfs,
                              PhaseWeights& weights, std::int32_t n, double tau, const std::vector<std::int32_t>& js,
                              double prune);

// P(a new worker arrivals during tau | phase x) for a = 0..N, x = 0..K-1: shared by every row
// whose action lasts tau (at one rate).
struct NewArrivals {
  NewArrivals(double rate, std::int32_t stride, double tau, std::int32_t max_queue);
  std::int32_t stride;
  std::vector<double> p;    // [a * stride + x]
  std::vector<double> top;  // max over x, per a
};

// The row of state (n, j) serving the b < n earliest queries in tau ns.
Row variable_row(const Grid& grid, double rate, std::int32_t stride, PhaseWeights& weights, std::int32_t n,
                 std::int32_t j, std::int32_t b, double tau, const NewArrivals& arrivals, double prune);

}  // namespace servelab::ramsis::detail
