// RAMSIS per-worker MDP builder: state/action counts, probabilities summing to 1, the transition
// probabilities against a direct evaluation of Eq. 2, discretisations, balancers, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ramsis/ramsis_fixtures.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/systems/ramsis/mdp_builder.hpp"

using namespace servelab;
using namespace servelab::ramsis;

namespace {

LatencyTable small_table() { return servelab::ramsis::testing::three_model_table(); }

MdpOptions small_options() {
  MdpOptions o;
  o.slo = millis_to_nanos(40);
  o.load_qps = 300;
  o.workers = 3;
  o.max_queue = 6;
  o.intervals = 10;
  return o;
}

void expect_rows_sum_to_one(const solvers::mdp::Mdp& mdp, double tol = 1e-12) {
  for (std::int64_t a = 0; a < mdp.num_pairs(); ++a) {
    double sum = 0;
    for (std::int64_t t = mdp.pair_begin[a]; t < mdp.pair_begin[a + 1]; ++t) {
      ASSERT_GE(mdp.probability[t], 0.0);
      ASSERT_LE(mdp.probability[t], 1.0 + 1e-15);
      sum += mdp.probability[t];
    }
    ASSERT_NEAR(sum, 1.0, tol) << "pair " << a;
  }
  mdp.validate(1e-12);
}

double poisson(double mu, long k) {
  if (k < 0) return 0;
  if (mu == 0) return k == 0 ? 1 : 0;
  return std::exp(k * std::log(mu) - mu - std::lgamma(k + 1.0));
}

// Eq. 2 summed literally: P(s' = (n', T_j') | s = (n, T_j), a = (m, n)), n' >= 1, round-robin.
double eq2(double lambda, int K, double slo, const std::vector<double>& T, int n, int j, double tau, int np, int jp) {
  const int L = static_cast<int>(T.size());
  const double ta = slo - T[j];
  const double lower = jp > 0 ? tau - slo + T[jp] : 0.0;
  const double upper = jp + 1 < L ? tau - slo + T[jp + 1] : tau;
  const double tb = std::max(0.0, lower);
  const double tc = std::max(0.0, upper) - tb;
  const double td = std::max(0.0, tau - std::max(0.0, upper));
  double num = 0, den = 0;
  for (int ka = (n - 1) * K; ka <= n * K - 1; ++ka) den += poisson(lambda * ta, ka);
  for (int ka = (n - 1) * K; ka <= n * K - 1; ++ka) {
    // No queue of n can have built up in T_A = 0: the artifact then takes every phase as equally likely.
    const double pa = den > 0 ? poisson(lambda * ta, ka) : 1.0;
    const int x = ka % K;
    for (int kb = 0; kb <= K - x - 1; ++kb) {
      for (int kc = K - x - kb; kc <= (np + 1) * K - x - kb - 1; ++kc) {
        for (int kd = std::max(0, np * K - x - kb - kc); kd <= (np + 1) * K - x - kb - 1 - kc; ++kd) {
          num += pa * poisson(lambda * tb, kb) * poisson(lambda * tc, kc) * poisson(lambda * td, kd);
        }
      }
    }
  }
  return den > 0 ? num / den : num / K;
}

// The variable-batch case (b < n) summed literally: the (b+1)-th query (event bK of interval A)
// falls in the slot's arrival window, n - 1 worker arrivals in A, then a' arrivals during tau.
double variable_direct(double lambda, int K, double slo, const std::vector<double>& T, int n, int j, int b, double tau,
                       int np, int jp) {
  const int L = static_cast<int>(T.size());
  const double ta = slo - T[j];
  auto clampA = [&](double v) { return std::clamp(v, 0.0, ta); };
  const double lo = jp > 0 ? clampA(T[jp] + tau - T[j]) : 0.0;
  const double hi = jp + 1 < L ? clampA(T[jp + 1] + tau - T[j]) : ta;
  double num = 0, den = 0;
  for (int ka = (n - 1) * K; ka <= n * K - 1; ++ka) den += poisson(lambda * ta, ka);
  const int a = np - (n - b);
  if (a < 0) return 0.0;
  for (int i = 0; i < b * K; ++i) {
    for (int jj = b * K - i; i + jj <= n * K - 1; ++jj) {
      for (int k = std::max(0, (n - 1) * K - i - jj); i + jj + k <= n * K - 1; ++k) {
        const int x = i + jj + k - (n - 1) * K;
        double pa = 0;
        for (int c = std::max(0, a * K - x); c <= a * K + K - 1 - x; ++c) pa += poisson(lambda * tau, c);
        num += poisson(lambda * lo, i) * poisson(lambda * (hi - lo), jj) * poisson(lambda * (ta - hi), k) * pa;
      }
    }
  }
  return num / den;
}

double probability(const RamsisMdp& r, std::int64_t pair, std::int32_t next) {
  for (std::int64_t t = r.mdp.pair_begin[pair]; t < r.mdp.pair_begin[pair + 1]; ++t) {
    if (r.mdp.next_state[t] == next) return r.mdp.probability[t];
  }
  return 0.0;
}

std::filesystem::path shared_data() {
  return std::filesystem::path(__FILE__).parent_path() / "../../../../shared/data/ramsis/derived/mdp_latency_table.csv";
}

}  // namespace

TEST(RamsisMdp, StateAndActionCounts) {
  const RamsisMdp r = build_mdp(small_table(), small_options());
  const int L = 11, N = 6;
  EXPECT_EQ(r.num_levels(), L);
  EXPECT_EQ(r.mdp.num_states(), (N + 1) * L + 1);
  // Every state with a queue has the default action at least; the empty states only wait.
  for (int s = 0; s < r.mdp.num_states(); ++s) {
    ASSERT_GE(r.mdp.num_actions(s), 1);
    if (r.queue_length(s) == 0) {
      EXPECT_EQ(r.mdp.num_actions(s), 1);
      EXPECT_EQ(r.pairs[r.mdp.state_begin[s]].model, kWaitModel);
    }
  }
  // Valid actions: latency(m, n) <= T_j, plus the fastest model when none is.
  const auto& t = r.table;
  for (int s = L; s < (N + 1) * L; ++s) {
    const int n = s / L, j = s % L;
    int valid = 0;
    for (int m = 0; m < 3; ++m) valid += t.at(m, n) <= r.slack_levels[j];
    EXPECT_EQ(r.mdp.num_actions(s), std::max(valid, 1)) << "state " << s;
  }
  EXPECT_EQ(r.mdp.num_actions(r.overflow_state()), 1);
  EXPECT_TRUE(r.pairs.back().violates);
}

TEST(RamsisMdp, RowsSumToOneMaximal) {
  MdpOptions o = small_options();
  for (double prune : {0.0, 1e-12}) {
    o.prune = prune;
    expect_rows_sum_to_one(build_mdp(small_table(), o).mdp);
  }
}

TEST(RamsisMdp, RowsSumToOneVariableAndModelBased) {
  MdpOptions o = small_options();
  o.batching = Batching::Variable;
  expect_rows_sum_to_one(build_mdp(small_table(), o).mdp);
  o.discretisation = Discretisation::ModelBased;
  const RamsisMdp r = build_mdp(small_table(), o);
  expect_rows_sum_to_one(r.mdp);
  // MD levels: 0, every distinct latency <= SLO (batches <= N) and the SLO.
  std::vector<Nanos> want = {0, o.slo};
  for (int m = 0; m < 3; ++m) {
    for (int b = 1; b <= o.max_queue; ++b) {
      if (r.table.at(m, b) <= o.slo) want.push_back(r.table.at(m, b));
    }
  }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  EXPECT_EQ(r.slack_levels, want);
}

TEST(RamsisMdp, RowsSumToOneOtherArrivalsAndBalancers) {
  MdpOptions o = small_options();
  o.balancer = Balancer::ShortestQueue;
  expect_rows_sum_to_one(build_mdp(small_table(), o).mdp);
  o.balancer = Balancer::RoundRobin;
  o.arrivals = {"erlang", 3};
  expect_rows_sum_to_one(build_mdp(small_table(), o).mdp);
  o.arrivals = {"gamma", 2.5};
  EXPECT_THROW(build_mdp(small_table(), o), ValueError);
}

TEST(RamsisMdp, MaximalTransitionsMatchEquation2) {
  MdpOptions o = small_options();
  o.prune = 0;
  const RamsisMdp r = build_mdp(small_table(), o);
  std::vector<double> T(r.slack_levels.begin(), r.slack_levels.end());
  const double lambda = o.load_qps * 1e-9, slo = static_cast<double>(o.slo);
  const int L = r.num_levels(), K = o.workers;
  int checked = 0;
  for (int s : {L + 10, 2 * L + 7, 3 * L + 5, 2 * L + 10, 4 * L + 9}) {
    const int n = s / L, j = s % L;
    for (std::int64_t a = r.mdp.state_begin[s]; a < r.mdp.state_begin[s + 1]; ++a) {
      const double tau = static_cast<double>(r.table.at(r.pairs[a].model, r.pairs[a].batch));
      for (int np = 1; np <= o.max_queue; ++np) {
        for (int jp = 0; jp < L - 1; ++jp) {
          const double want = eq2(lambda, K, slo, T, n, j, tau, np, jp);
          const double got = probability(r, a, np * L + jp);
          ASSERT_NEAR(got, want, 1e-12) << "s=" << s << " a=" << a << " n'=" << np << " j'=" << jp;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(RamsisMdp, VariableTransitionsMatchDirectSums) {
  MdpOptions o = small_options();
  o.prune = 0;
  o.batching = Batching::Variable;
  const RamsisMdp r = build_mdp(small_table(), o);
  std::vector<double> T(r.slack_levels.begin(), r.slack_levels.end());
  const double lambda = o.load_qps * 1e-9, slo = static_cast<double>(o.slo);
  const int L = r.num_levels(), K = o.workers;
  int checked = 0;
  for (int s : {3 * L + 7, 4 * L + 9, 2 * L + 8}) {
    const int n = s / L, j = s % L;
    for (std::int64_t a = r.mdp.state_begin[s]; a < r.mdp.state_begin[s + 1]; ++a) {
      const int b = r.pairs[a].batch;
      if (b == n) continue;
      const double tau = static_cast<double>(r.table.at(r.pairs[a].model, b));
      for (int np = 1; np <= o.max_queue; ++np) {
        for (int jp = 0; jp < L - 1; ++jp) {
          const double want = variable_direct(lambda, K, slo, T, n, j, b, tau, np, jp);
          ASSERT_NEAR(probability(r, a, np * L + jp), want, 1e-12)
              << "s=" << s << " b=" << b << " n'=" << np << " j'=" << jp;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 200);
}

TEST(RamsisMdp, EmptyQueueAndPruning) {
  MdpOptions o = small_options();
  const RamsisMdp r = build_mdp(small_table(), o);
  const int L = r.num_levels();
  // The arrival action of every empty state leads to (1, SLO) with probability 1 (Eq. 1).
  for (int j = 0; j < L; ++j) {
    const auto a = r.mdp.state_begin[j];
    ASSERT_EQ(r.mdp.pair_begin[a + 1] - r.mdp.pair_begin[a], 1);
    EXPECT_EQ(r.mdp.next_state[r.mdp.pair_begin[a]], L + L - 1);
  }
  for (double p : r.mdp.probability) EXPECT_GE(p, o.prune);
}

TEST(RamsisMdp, BadInput) {
  MdpOptions o = small_options();
  o.slo = millis_to_nanos(3);  // below the fastest model's 4 ms
  try {
    build_mdp(small_table(), o);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("below every model"), std::string::npos) << e.what();
  }
  o = small_options();
  o.intervals = 0;
  EXPECT_THROW(build_mdp(small_table(), o), ValueError);
  o = small_options();
  o.load_qps = 0;
  EXPECT_THROW(build_mdp(small_table(), o), ValueError);
  o.load_qps = std::nan("");
  EXPECT_THROW(build_mdp(small_table(), o), ValueError);
  o = small_options();
  EXPECT_THROW(build_mdp(LatencyTable{}, o), ValueError);
  LatencyTable ragged = small_table();
  ragged.latency[1].pop_back();
  EXPECT_THROW(build_mdp(ragged, o), ValueError);
  EXPECT_THROW(LatencyTable::from_rows({"a"}, {0.5}, {"a", "a"}, {1, 3}, {0.01, 0.03}), ValueError);  // gap
}

TEST(RamsisMdp, ParetoPruning) {
  LatencyTable t = small_table();
  t.models.push_back("dominated");
  t.accuracy.push_back(0.70);  // less accurate than "medium" and slower
  std::vector<Nanos> row;
  for (int b = 1; b <= 8; ++b) row.push_back(millis_to_nanos(12.0 + 5 * (b - 1)));
  t.latency.push_back(row);
  const LatencyTable front = t.pareto_front();
  EXPECT_EQ(front.models, (std::vector<std::string>{"fast", "medium", "slow"}));
  const LatencyTable more = front.interpolated(0.05);
  EXPECT_GT(more.num_models(), 3);
  EXPECT_EQ(more.pareto_front().num_models(), more.num_models());
}

TEST(RamsisMdp, ArtifactImageCounts) {
  // The artifact's image task: 9 Pareto models, FLD D = 100, N = 32, 60 workers, 2000 QPS:
  // 3,334 states and 3,979 state-action pairs.
  std::ifstream in(shared_data());
  if (!in) GTEST_SKIP() << "shared data not found at " << shared_data();
  const std::vector<std::string> models = {"shufflenet_v2_x0_5", "mobilenet_v3_large", "efficientnet_b0",
                                           "efficientnet_b2",    "efficientnet_b3",    "efficientnet_b4",
                                           "efficientnet_v2_s",  "efficientnet_v2_m",  "efficientnet_v2_l"};
  std::vector<std::string> rm;
  std::vector<std::int64_t> rb;
  std::vector<double> rs;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string pct, task, model, batch, us;
    std::getline(ss, pct, ',');
    std::getline(ss, task, ',');
    std::getline(ss, model, ',');
    std::getline(ss, batch, ',');
    std::getline(ss, us, ',');
    if (pct != "95" || task != "image_cloud_cpu") continue;
    rm.push_back(model);
    rb.push_back(std::stoll(batch));
    rs.push_back(std::stod(us) * 1e-6);
  }
  const std::vector<double> acc = {0.57972, 0.73004, 0.77692, 0.80608, 0.82008, 0.83384, 0.84228, 0.85112, 0.85808};
  const LatencyTable table = LatencyTable::from_rows(models, acc, rm, rb, rs);
  MdpOptions o;
  o.slo = millis_to_nanos(150);
  o.load_qps = 2000;
  o.workers = 60;
  const RamsisMdp r = build_mdp(table, o);
  EXPECT_EQ(r.mdp.num_states(), 3334);
  EXPECT_EQ(r.mdp.num_pairs(), 3979);
  expect_rows_sum_to_one(r.mdp, 1e-12);
}
