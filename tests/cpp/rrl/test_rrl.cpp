// RRL's C++ parts: spaces, the performance model, episodes, the estimator, the learners and the
// tuning loop (small sizes; the fidelity comparisons are in tests/python/test_rrl_fidelity.py).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "servelab/core/errors.hpp"
#include "servelab/systems/rrl/config_space.hpp"
#include "servelab/systems/rrl/deep_rl.hpp"
#include "servelab/systems/rrl/episode.hpp"
#include "servelab/systems/rrl/estimator.hpp"
#include "servelab/systems/rrl/q_learner.hpp"
#include "servelab/systems/rrl/tuning.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/modulated_arrivals.hpp"

namespace servelab::rrl {
namespace {

TEST(RrlSpace, CpuSpaceEnumeratesRowMajorAndNormalises) {
  const auto s = cpu_space(4);
  EXPECT_EQ(s.size(), 64u);
  EXPECT_EQ(s.values(1), (std::vector<std::int64_t>{1, 1, 2}));
  const std::vector<std::int64_t> v{2, 3, 4};
  EXPECT_EQ(s.values(s.index_of(v)), v);
  EXPECT_FLOAT_EQ(s.coords(s.size() - 1)[0], 1.0f);
  // Distances count grid steps; the estimator's coordinates span [0, 1].
  EXPECT_DOUBLE_EQ(s.distance(0, 1), 1.0);
  EXPECT_NEAR(s.coords(1)[2], 1.0 / 3, 1e-6);
  EXPECT_EQ(s.regions(1)[0].size(), 4u);  // itself and one step along each knob
  EXPECT_EQ(s.regions(1)[s.index_of(std::vector<std::int64_t>{2, 2, 2})].size(), 7u);
  EXPECT_EQ(s.regions(std::sqrt(2.0))[s.index_of(std::vector<std::int64_t>{2, 2, 2})].size(), 19u);
}

TEST(RrlSpace, RejectsEmptyAndUnsortedKnobs) {
  EXPECT_THROW(ConfigSpace("cpu", {}), ValueError);
  EXPECT_THROW(ConfigSpace("cpu", {{"workers", {}}}), ValueError);
  EXPECT_THROW(ConfigSpace("cpu", {{"workers", {2, 1}}}), ValueError);
  EXPECT_THROW(cpu_space(0), ValueError);
  EXPECT_THROW(cpu_space(4).index_of(std::vector<std::int64_t>{9, 1, 1}), ValueError);
}

TEST(RrlModel, ParallelismHelpsUpToTheCoresAndHurtsBeyond) {
  CpuModel m;
  m.cores = 8;
  EXPECT_LT(m.service_ms(1, 4, 1), m.service_ms(1, 1, 1));
  EXPECT_LT(m.service_ms(1, 8, 1), m.service_ms(1, 4, 1));
  // 4 requests x 8 threads on 8 cores: oversubscribed, slower than 4 x 2.
  EXPECT_GT(m.service_ms(1, 8, 4), m.service_ms(1, 2, 4));
  GpuModel g;
  EXPECT_LT(g.service_ms(32, 1) / 32, g.service_ms(1, 1));  // batching amortises the launch
}

TEST(RrlEpisode, MoreWorkersCutQueueingUnderLoad) {
  PerfModel model;
  model.cpu.cores = 8;
  const auto space = cpu_space(8);
  const auto settings = settings_of(space, model);
  std::vector<double> arrivals;
  for (int i = 0; i < 200; ++i) arrivals.push_back(i * 50.0);  // 20 requests/s
  Objective mean;
  std::vector<double> scratch;
  const auto one = run_episode(model, settings[space.index_of(std::vector<std::int64_t>{1, 1, 1})], arrivals, mean,
                               nullptr, scratch);
  const auto four = run_episode(model, settings[space.index_of(std::vector<std::int64_t>{4, 1, 2})], arrivals, mean,
                                nullptr, scratch);
  EXPECT_GT(one.mean_ms, 10 * four.mean_ms);  // one sequential worker cannot keep up
  EXPECT_GE(four.p95_ms, four.mean_ms * 0.99);
}

TEST(RrlEpisode, SloObjectiveCostsResourcesWhenMetAndMoreWhenMissed) {
  Objective slo = Objective::parse("slo", 100);
  EXPECT_DOUBLE_EQ(slo.cost(50, 0.25), 0.25);
  EXPECT_GT(slo.cost(150, 0.1), 1.0);
  EXPECT_THROW(Objective::parse("slo", 0), ValueError);
  EXPECT_THROW(Objective::parse("fastest", 0), ValueError);
}

TEST(RrlEstimator, LearnsASmoothSurfaceAndIsDeterministic) {
  const auto run = [] {
    LatencyEstimator f(2, {}, 7);
    Rng rng(1, "data");
    for (int i = 0; i < 3000; ++i) {
      const float x = static_cast<float>(rng.uniform()), y = static_cast<float>(rng.uniform());
      f.observe(std::vector<float>{x, y}, 100 * std::exp(1.5 * x - y));
    }
    return std::pair{f.predict_ms(std::vector<float>{0.9f, 0.1f}), f.predict_ms(std::vector<float>{0.1f, 0.9f})};
  };
  const auto [high, low] = run();
  EXPECT_NEAR(std::log(high), std::log(100 * std::exp(1.35 - 0.1)), 0.3);
  EXPECT_NEAR(std::log(low), std::log(100 * std::exp(0.15 - 0.9)), 0.3);
  EXPECT_EQ(run(), std::pair(high, low));
}

TEST(RrlLearner, RegionRadiusMustBePositive) {
  const auto space = cpu_space(4);
  LearnerOptions o;
  o.radius = 0;
  EXPECT_THROW(QLearner(space, settings_of(space, PerfModel{}), 1, 1.0, Objective{}, o, 0), ValueError);
}

TEST(RrlTuning, RrlEndsNearTheOracleAndIsReproducible) {
  PerfModel model;
  model.cpu.cores = 8;
  const auto space = cpu_space(8);
  workload::Poisson arrivals(7);
  TuningOptions o;
  o.steps = 800;
  o.oracle_episodes = 10;
  const auto a = run_tuning(space, model, arrivals, Objective{}, "rrl", LearnerOptions{}, o);
  const auto b = run_tuning(space, model, arrivals, Objective{}, "rrl", LearnerOptions{}, o);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.metric_ms, b.metric_ms);
  const auto tail = [](const std::vector<double>& v) { return std::accumulate(v.end() - 100, v.end(), 0.0); };
  EXPECT_LT(tail(a.greedy_ms), 1.25 * tail(a.oracle_ms));
  EXPECT_GT(a.mean_region_size, 1.0);
}

TEST(RrlTuning, ConvergenceStepNeedsEveryLaterWindowWithinTolerance) {
  const std::vector<double> oracle(10, 1.0);
  std::vector<double> greedy{5, 5, 5, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(convergence_step(greedy, oracle, 0.1, 3), 2);  // the window [2, 5) has median 1
  greedy[6] = 9;                                           // one outlier: the median ignores it
  EXPECT_EQ(convergence_step(greedy, oracle, 0.1, 3), 2);
  greedy[7] = 9;  // two in a window of three: converged only once the windows have passed them
  EXPECT_EQ(convergence_step(greedy, oracle, 0.1, 3), 7);
  EXPECT_EQ(convergence_step(std::vector<double>(10, 5.0), oracle, 0.1, 3), -1);
}

TEST(RrlWorkload, DynamicPoissonKeepsItsMeanRate) {
  workload::DynamicPoisson p(100, 5, 0.5);
  const auto times = workload::generate_arrival_seconds(p, 3, workload::kUnlimitedCount, seconds_to_nanos(500, "h"));
  EXPECT_NEAR(static_cast<double>(times.size()) / 500, 100, 10);
  EXPECT_THROW(workload::DynamicPoisson(100, 5, 1.0), ValueError);
  workload::Spiky s(50, 1, 100, 0.3, 0.1, 0.05, 4);
  const auto spiky = workload::generate_arrival_seconds(s, 3, workload::kUnlimitedCount, seconds_to_nanos(2000, "h"));
  EXPECT_NEAR(static_cast<double>(spiky.size()) / 2000, 50, 6);
}

}  // namespace
}  // namespace servelab::rrl

namespace servelab::rrl {
namespace {

TEST(RrlDeepRl, BaselinesMoveOneKnobAStepAndAreReproducible) {
  PerfModel model;
  model.cpu.cores = 6;
  const auto space = cpu_space(6);
  workload::Poisson arrivals(6);
  TuningOptions o;
  o.steps = 120;
  o.oracle_episodes = 5;
  for (const std::string method : {"capes", "deeprm"}) {
    const auto a = run_tuning(space, model, arrivals, Objective{}, method, LearnerOptions{}, o);
    const auto b = run_tuning(space, model, arrivals, Objective{}, method, LearnerOptions{}, o);
    EXPECT_EQ(a.config, b.config) << method;
    for (std::size_t t = 1; t < a.config.size(); ++t) {
      EXPECT_LE(space.distance(a.config[t], a.config[t - 1]), 1.0) << method << " step " << t;
    }
  }
  EXPECT_THROW(make_deep_rl("dqn", space, settings_of(space, model), 1.0, Objective{}, {}, 0), ValueError);
}

}  // namespace
}  // namespace servelab::rrl
