// MDP solvers against brute force (every deterministic policy solved exactly), against each
// other, and for determinism across thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/solvers/mdp/mdp.hpp"
#include "servelab/solvers/mdp/solve.hpp"

namespace mdp = servelab::solvers::mdp;

namespace {

// A random MDP: every state has 1..max_actions actions, each with `per_pair` transitions (or
// 1..2*per_pair-1 when `varied`) to random states; rewards uniform in [0, 1).
mdp::Mdp random_mdp(int states, int max_actions, int per_pair, unsigned seed, bool varied = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  mdp::MdpBuilder b;
  for (int s = 0; s < states; ++s) {
    b.add_state();
    const int actions = 1 + static_cast<int>(rng() % max_actions);
    for (int a = 0; a < actions; ++a) {
      b.add_action(unit(rng));
      const int k = varied ? 1 + static_cast<int>(rng() % (2 * per_pair - 1)) : per_pair;
      std::vector<double> w(k);
      double total = 0;
      for (auto& x : w) total += (x = 0.05 + unit(rng));
      for (int i = 0; i < k; ++i) b.add_transition(static_cast<int>(rng() % states), w[i] / total);
    }
  }
  return b.finish(1e-12);
}

using Matrix = std::vector<std::vector<double>>;

// Solves A x = b by Gaussian elimination with partial pivoting (small dense systems only).
std::vector<double> solve_dense(Matrix a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < n; ++r) {
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    }
    std::swap(a[c], a[pivot]);
    std::swap(b[c], b[pivot]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n);
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= a[i][k] * x[k];
    x[i] = s / a[i][i];
  }
  return x;
}

Matrix chain(const mdp::Mdp& m, const mdp::Policy& policy) {
  const auto n = static_cast<std::size_t>(m.num_states());
  Matrix p(n, std::vector<double>(n, 0.0));
  for (std::size_t s = 0; s < n; ++s) {
    const auto a = m.state_begin[s] + policy[s];
    for (auto t = m.pair_begin[a]; t < m.pair_begin[a + 1]; ++t) p[s][m.next_state[t]] += m.probability[t];
  }
  return p;
}

std::vector<double> policy_rewards(const mdp::Mdp& m, const mdp::Policy& policy) {
  std::vector<double> r(policy.size());
  for (std::size_t s = 0; s < r.size(); ++s) r[s] = m.reward[m.state_begin[s] + policy[s]];
  return r;
}

// (I - discount P_pi)^-1 r_pi
std::vector<double> exact_values(const mdp::Mdp& m, const mdp::Policy& policy, double discount) {
  Matrix a = chain(m, policy);
  for (std::size_t s = 0; s < a.size(); ++s) {
    for (auto& x : a[s]) x *= -discount;
    a[s][s] += 1.0;
  }
  return solve_dense(a, policy_rewards(m, policy));
}

// pi (I - P) = 0 with sum pi = 1 (one balance equation replaced by the normalisation).
std::vector<double> exact_stationary(const mdp::Mdp& m, const mdp::Policy& policy) {
  const Matrix p = chain(m, policy);
  const std::size_t n = p.size();
  Matrix a(n, std::vector<double>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) a[i][j] = (i == j ? 1.0 : 0.0) - p[j][i];
  }
  std::vector<double> b(n, 0.0);
  a[n - 1].assign(n, 1.0);
  b[n - 1] = 1.0;
  return solve_dense(a, b);
}

// Calls visit(policy) for every deterministic policy.
template <typename Visit>
void for_each_policy(const mdp::Mdp& m, Visit visit) {
  mdp::Policy policy(static_cast<std::size_t>(m.num_states()), 0);
  while (true) {
    visit(policy);
    std::size_t s = 0;
    while (s < policy.size() && ++policy[s] == m.num_actions(static_cast<std::int32_t>(s))) policy[s++] = 0;
    if (s == policy.size()) return;
  }
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

}  // namespace

TEST(MdpSolve, DiscountedOptimumEqualsBestOfAllPolicies) {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    const auto m = random_mdp(5, 3, 3, seed);
    const double discount = 0.9;
    std::vector<double> best(5, -1e300);
    mdp::Policy best_policy;
    double best_sum = -1e300;
    for_each_policy(m, [&](const mdp::Policy& policy) {
      const auto v = exact_values(m, policy, discount);
      for (std::size_t s = 0; s < v.size(); ++s) best[s] = std::max(best[s], v[s]);
      double sum = 0;
      for (double x : v) sum += x;
      if (sum > best_sum) best_sum = sum, best_policy = policy;
    });

    const auto vi = mdp::value_iteration(m, {.discount = discount, .tolerance = 1e-13});
    ASSERT_TRUE(vi.converged) << "seed " << seed;
    EXPECT_LT(max_abs_diff(vi.values, best), 1e-10) << "seed " << seed;
    EXPECT_EQ(vi.policy, best_policy) << "seed " << seed;  // one policy is best in every state

    const auto pi = mdp::policy_iteration(m, {.discount = discount});
    ASSERT_TRUE(pi.converged);
    EXPECT_EQ(pi.policy, vi.policy) << "seed " << seed;
    EXPECT_LT(max_abs_diff(pi.values, best), 1e-12) << "seed " << seed;
    EXPECT_LT(pi.residual, 1e-12);

    const auto ev = mdp::policy_evaluation(m, best_policy, {.discount = discount});
    EXPECT_LT(max_abs_diff(ev.values, best), 1e-12);
    EXPECT_LT(ev.residual, 1e-12);
  }
}

TEST(MdpSolve, UndiscountedSweepsAreFiniteHorizonTotals) {
  const auto m = random_mdp(6, 3, 4, 99);
  // k sweeps from zero: the best expected total reward over k steps, by plain recursion.
  std::vector<double> v(6, 0.0);
  for (int k = 0; k < 7; ++k) {
    std::vector<double> next(6);
    for (int s = 0; s < 6; ++s) {
      double best = -1e300;
      for (auto a = m.state_begin[s]; a < m.state_begin[s + 1]; ++a) {
        double q = 0.0;
        for (auto t = m.pair_begin[a]; t < m.pair_begin[a + 1]; ++t) q += m.probability[t] * v[m.next_state[t]];
        best = std::max(best, m.reward[a] + q);
      }
      next[s] = best;
    }
    v = next;
  }
  const auto vi = mdp::value_iteration(m, {.tolerance = 0, .max_iterations = 7});
  EXPECT_EQ(vi.iterations, 7);
  EXPECT_FALSE(vi.converged);
  EXPECT_EQ(vi.values, v);  // same order of summation: bit-identical
  EXPECT_EQ(vi.policy, mdp::greedy_policy(m, vi.values));
  EXPECT_LE(vi.gain_lower, vi.gain_upper);
  EXPECT_DOUBLE_EQ(vi.residual, vi.gain_upper - vi.gain_lower);

  // min_iterations keeps sweeping past convergence.
  const auto forced = mdp::value_iteration(m, {.tolerance = 1e300, .min_iterations = 5});
  EXPECT_EQ(forced.iterations, 5);
  EXPECT_TRUE(forced.converged);
}

TEST(MdpSolve, AverageRewardPolicyIterationMatchesRelativeValueIteration) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const auto m = random_mdp(5, 3, 5, 100 + seed);
    // Brute force: the best gain over all policies (every chain here is irreducible).
    double best_gain = -1e300;
    for_each_policy(m, [&](const mdp::Policy& policy) {
      const auto d = exact_stationary(m, policy);
      const auto r = policy_rewards(m, policy);
      double g = 0;
      for (std::size_t s = 0; s < d.size(); ++s) g += d[s] * r[s];
      best_gain = std::max(best_gain, g);
    });
    const auto pi = mdp::policy_iteration(m, {.discount = 1.0});
    ASSERT_TRUE(pi.converged);
    EXPECT_NEAR(pi.gain, best_gain, 1e-12) << "seed " << seed;
    EXPECT_EQ(pi.values[0], 0.0);

    const auto rvi = mdp::value_iteration(m, {.tolerance = 1e-13, .relative = true});
    ASSERT_TRUE(rvi.converged);
    EXPECT_NEAR(rvi.gain, best_gain, 1e-11);
    EXPECT_LE(rvi.gain_lower, best_gain + 1e-12);
    EXPECT_GE(rvi.gain_upper, best_gain - 1e-12);
    EXPECT_LT(max_abs_diff(rvi.values, pi.values), 1e-9) << "seed " << seed;  // both: bias with h[0] = 0
    EXPECT_EQ(rvi.policy, pi.policy);

    const auto gb = mdp::average_reward(m, pi.policy);
    EXPECT_NEAR(gb.gain, best_gain, 1e-12);
  }
}

TEST(MdpSolve, AverageRewardRejectsMultichainPolicies) {
  // Two absorbing states: the only policy has two recurrent classes.
  mdp::MdpBuilder b;
  for (int s = 0; s < 2; ++s) {
    b.add_state();
    b.add_action(s);
    b.add_transition(s, 1.0);
  }
  const auto m = b.finish();
  EXPECT_THROW(mdp::average_reward(m, {0, 0}), servelab::ValueError);
  EXPECT_THROW(mdp::policy_iteration(m, {.discount = 1.0}), servelab::ValueError);
  // Value iteration still works: the gain differs per state, so the span never shrinks.
  const auto vi = mdp::value_iteration(m, {.max_iterations = 50});
  EXPECT_FALSE(vi.converged);
  EXPECT_EQ(vi.values, (std::vector<double>{0.0, 50.0}));
}

TEST(MdpSolve, StationaryDistributionMatchesTheLinearSolve) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const auto m = random_mdp(8, 2, 4, 200 + seed);
    const mdp::Policy policy(8, 0);
    const auto exact = exact_stationary(m, policy);
    const auto st = mdp::stationary_distribution(m, policy);
    ASSERT_TRUE(st.converged);
    EXPECT_LT(st.residual, 1e-12);
    EXPECT_LT(max_abs_diff(st.distribution, exact), 1e-11) << "seed " << seed;
    double total = 0;
    for (double p : st.distribution) total += p;
    EXPECT_NEAR(total, 1.0, 1e-15);

    // From a single state, as RAMSIS starts; and the expectation of the rewards is the gain.
    std::vector<double> start(8, 0.0);
    start[0] = 1.0;
    const auto from0 = mdp::stationary_distribution(m, policy, {}, start);
    EXPECT_LT(max_abs_diff(from0.distribution, exact), 1e-11);
    const double gain = mdp::expectation(m, policy, from0.distribution, m.reward);
    EXPECT_NEAR(gain, mdp::average_reward(m, policy).gain, 1e-11);
  }
}

TEST(MdpSolve, LazyPowerIterationConvergesOnPeriodicChains) {
  mdp::MdpBuilder b;  // 0 -> 1 -> 0: period 2
  for (int s = 0; s < 2; ++s) {
    b.add_state();
    b.add_action(0.0);
    b.add_transition(1 - s, 1.0);
  }
  const auto m = b.finish();
  const std::vector<double> start{1.0, 0.0};
  const auto plain = mdp::stationary_distribution(m, {0, 0}, {.max_iterations = 101}, start);
  EXPECT_FALSE(plain.converged);
  EXPECT_EQ(plain.distribution, (std::vector<double>{0.0, 1.0}));
  const auto lazy = mdp::stationary_distribution(m, {0, 0}, {.lazy = true}, start);
  EXPECT_TRUE(lazy.converged);
  EXPECT_NEAR(lazy.distribution[0], 0.5, 1e-12);
}

TEST(MdpSolve, TiesGoToTheLowestActionIndex) {
  mdp::MdpBuilder b;
  b.add_state();
  for (int a = 0; a < 3; ++a) {
    b.add_action(a == 0 ? 0.5 : 1.0);  // actions 1 and 2 tie
    b.add_transition(0, 1.0);
  }
  const auto m = b.finish();
  EXPECT_EQ(mdp::value_iteration(m, {.discount = 0.5}).policy, mdp::Policy{1});
  EXPECT_EQ(mdp::policy_iteration(m, {.discount = 0.5}).policy, mdp::Policy{1});
  EXPECT_EQ(mdp::greedy_policy(m, std::vector<double>{0.0}), mdp::Policy{1});
}

TEST(MdpSolve, ResultsDoNotDependOnTheThreadCount) {
  const auto m = random_mdp(3000, 4, 12, 7, true);  // ~90k transitions: several threads when asked
  const auto one = mdp::value_iteration(m, {.tolerance = 0, .max_iterations = 40, .threads = 1});
  const auto rel = mdp::value_iteration(m, {.tolerance = 0, .max_iterations = 40, .threads = 1, .relative = true});
  const auto st1 = mdp::stationary_distribution(m, one.policy, {.tolerance = 0, .max_iterations = 60, .threads = 1});
  const auto ev1 = mdp::policy_evaluation(m, one.policy, {.tolerance = 0, .max_iterations = 30, .threads = 1});
  for (int threads : {2, 3, 5, 8}) {
    const auto many = mdp::value_iteration(m, {.tolerance = 0, .max_iterations = 40, .threads = threads});
    EXPECT_EQ(many.values, one.values) << threads << " threads";
    EXPECT_EQ(many.policy, one.policy);
    EXPECT_EQ(many.residual, one.residual);
    const auto rel_many =
        mdp::value_iteration(m, {.tolerance = 0, .max_iterations = 40, .threads = threads, .relative = true});
    EXPECT_EQ(rel_many.values, rel.values);
    const auto st =
        mdp::stationary_distribution(m, one.policy, {.tolerance = 0, .max_iterations = 60, .threads = threads});
    EXPECT_EQ(st.distribution, st1.distribution) << threads << " threads";
    EXPECT_EQ(st.residual, st1.residual);
    const auto ev = mdp::policy_evaluation(m, one.policy, {.tolerance = 0, .max_iterations = 30, .threads = threads});
    EXPECT_EQ(ev.values, ev1.values);
  }
  // Automatic thread count too.
  EXPECT_EQ(mdp::value_iteration(m, {.tolerance = 0, .max_iterations = 40}).values, one.values);
}

TEST(MdpSolve, DiscountedPolicyIterationOnALargerMdp) {
  const auto m = random_mdp(2500, 3, 10, 11, true);  // above the direct-solve size: iterative solver
  const auto pi = mdp::policy_iteration(m, {.discount = 0.95});
  ASSERT_TRUE(pi.converged);
  EXPECT_LT(pi.residual, 1e-9);
  const auto vi = mdp::value_iteration(m, {.discount = 0.95, .tolerance = 1e-12});
  EXPECT_LT(max_abs_diff(vi.values, pi.values), 1e-9);
  EXPECT_EQ(vi.policy, pi.policy);
}

TEST(MdpSolve, CtrlCStopsTheSweeps) {
  const auto m = random_mdp(50, 2, 3, 5);
  int asked = 0;
  servelab::core::InterruptScope scope([&] { return ++asked >= 3; }, std::chrono::nanoseconds(0));
  EXPECT_THROW(mdp::value_iteration(m, {.tolerance = 0, .max_iterations = 1000000}), servelab::Interrupted);
  EXPECT_EQ(asked, 3);
  asked = 0;  // with worker threads running: they are stopped and joined on the way out
  EXPECT_THROW(mdp::value_iteration(m, {.tolerance = 0, .max_iterations = 1000000, .threads = 3}),
               servelab::Interrupted);
  asked = 0;
  EXPECT_THROW(mdp::stationary_distribution(m, mdp::Policy(50, 0), {.tolerance = 0, .max_iterations = 1000000}),
               servelab::Interrupted);
}

TEST(MdpSolve, FixedStepCountMatchesAPlainPowerIteration) {
  // RAMSIS's use: 1,000 steps from state 0, tolerance 0. The solver may stop at an exact fixed
  // point or 2-cycle; the answer must still be that of all 1,000 steps, bit for bit.
  const auto m = random_mdp(300, 2, 8, 21, true);
  const mdp::Policy policy(300, 0);
  std::vector<double> x(300, 0.0);
  x[0] = 1.0;
  const std::vector<double> start = x;
  for (int step = 0; step < 1000; ++step) {
    std::vector<double> y(300, 0.0);
    for (int s = 0; s < 300; ++s) {
      const auto a = m.state_begin[s];
      for (auto t = m.pair_begin[a]; t < m.pair_begin[a + 1]; ++t) y[m.next_state[t]] += m.probability[t] * x[s];
    }
    double total = 0;
    for (double p : y) total += p;
    for (auto& p : y) p /= total;
    x = y;
  }
  const auto st = mdp::stationary_distribution(m, policy, {.tolerance = 0, .max_iterations = 1000}, start);
  EXPECT_EQ(st.distribution, x);
  EXPECT_EQ(st.iterations, 1000);
  for (int threads : {2, 3}) {
    EXPECT_EQ(
        mdp::stationary_distribution(m, policy, {.tolerance = 0, .max_iterations = 1000, .threads = threads}, start)
            .distribution,
        x);
  }
}
