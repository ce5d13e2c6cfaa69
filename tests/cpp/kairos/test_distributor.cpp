// Kairos's query distributor: the cost of a pair (Eq. 2, 8 and the artifact's slack), the
// heterogeneity coefficients, one decision against a brute-force assignment, and small runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kairos/fake_view.hpp"
#include "kairos/scripted_run.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/systems/kairos/distributor.hpp"

namespace servelab::kairos {
namespace {

using testing::FakeView;
using testing::gpu_cpu_profile;
using testing::random_spec;
using testing::registry;
using testing::scripted_spec;

std::shared_ptr<KairosDistributor> make(const std::string& spec) {
  auto s = std::dynamic_pointer_cast<KairosDistributor>(registry().make(spec));
  EXPECT_NE(s, nullptr);
  return s;
}

std::vector<cluster::WorkerGroup> one_gpu_one_cpu() { return {{"gpu", 1, {}, {}}, {"cpu", 1, {}, {}}}; }

TEST(KairosCost, PaperPenalisesPairsMissingXiTimesQos) {
  // L = 20 + 100 = 120, W = 30: 150 <= 0.98 x 200 = 196, so C x L.
  EXPECT_DOUBLE_EQ(paper_cost({0.5, 20, 100, 30, 200}, 0.98, 10), 60.0);
  // 150 > 0.98 x 150 = 147: L' = 10 x T_qos.
  EXPECT_DOUBLE_EQ(paper_cost({0.5, 20, 100, 30, 150}, 0.98, 10), 0.5 * 1500.0);
  // Exactly at xi x T_qos still meets it.
  EXPECT_DOUBLE_EQ(paper_cost({1.0, 0, 98, 0, 100}, 0.98, 10), 98.0);
}

TEST(KairosCost, PaperTailMakesAPairRiskyAndTheMeanMakesItMiss) {
  // Mean 3 + 0 waited fits 0.98 x 5 = 4.9, its tail 6 does not: risky, T_qos + C x L.
  EntryInputs e{0.2, 0, 3, 0, 5, 6};
  EXPECT_FALSE(misses_qos(e, 0.98));
  EXPECT_TRUE(risks_qos(e, 0.98));
  EXPECT_DOUBLE_EQ(paper_cost(e, 0.98, 10), 5.0 + 0.2 * 3);
  // Any fitting pair of a query is cheaper than any risky one.
  e.tail_ms = 4.5;
  EXPECT_FALSE(risks_qos(e, 0.98));
  EXPECT_DOUBLE_EQ(paper_cost(e, 0.98, 10), 0.2 * 3);
  // The mean misses: Eq. 8, whatever the tail.
  e.latency_ms = 5;
  EXPECT_TRUE(misses_qos(e, 0.98));
  EXPECT_FALSE(risks_qos(e, 0.98));
  EXPECT_DOUBLE_EQ(paper_cost(e, 0.98, 10), 0.2 * 10 * 5);
  // No tail (0, or below the mean): the paper's Eq. 5 on the mean alone.
  EXPECT_DOUBLE_EQ(paper_cost({0.5, 20, 100, 30, 200, 0}, 0.98, 10), 60.0);
}

TEST(KairosCost, ArtifactSlackPenalties) {
  // Meets QoS with the 2% safeguard: -slack = C x (t_left + lat).
  EXPECT_DOUBLE_EQ(artifact_cost({0.3, 10, 100, 0, 350}, 0.98), 0.3 * 110);
  // 350 - 0 - 345 = 5 >= 0 but 5 - 7 < 0: the near-miss penalty, 500.
  EXPECT_DOUBLE_EQ(artifact_cost({0.3, 0, 345, 0, 350}, 0.98), 500.0);
  // Misses outright: 1000.
  EXPECT_DOUBLE_EQ(artifact_cost({0.3, 0, 400, 0, 350}, 0.98), 1000.0);
  // A query already past its target (t_qos = 0) is priced by its slack alone.
  EXPECT_DOUBLE_EQ(artifact_cost({0.3, 0, 400, 350, 350}, 0.98), 0.3 * 400);
  // Waiting counts: 350 - 300 - 40 = 10 >= 7.
  EXPECT_DOUBLE_EQ(artifact_cost({1.0, 0, 40, 300, 350}, 0.98), 40.0);
}

TEST(KairosCost, HeterogeneityCoefficient) {
  // The paper's example: 100 ms on the base, 200 and 500 ms elsewhere.
  EXPECT_DOUBLE_EQ(heterogeneity_coefficient(100, 100, false), 1.0);
  EXPECT_DOUBLE_EQ(heterogeneity_coefficient(100, 200, false), 0.5);
  EXPECT_DOUBLE_EQ(heterogeneity_coefficient(100, 500, false), 0.2);
  EXPECT_DOUBLE_EQ(heterogeneity_coefficient(120, 402, true), 0.3);  // artifact: 2 decimals
  EXPECT_DOUBLE_EQ(heterogeneity_coefficient(0, 402, false), 1.0);   // unknown yet
  EXPECT_DOUBLE_EQ(heterogeneity_coefficient(120, 0, false), 1.0);
}

TEST(KairosOptionsTest, BadValuesAreValueErrorsAndUnknownBaseAKeyError) {
  EXPECT_THROW(registry().make("kairos(variant='clever')"), ValueError);
  EXPECT_THROW(registry().make("kairos(xi=0)"), ValueError);
  EXPECT_THROW(registry().make("kairos(noise=-1)"), ValueError);
  EXPECT_THROW(registry().make("kairos(window=-2)"), ValueError);
  EXPECT_THROW(registry().make("kairos(predictor='psychic')"), ValueError);
  EXPECT_THROW(registry().make("kairos(tail=100)"), ValueError);
  EXPECT_THROW(registry().make("kairos(tail=-2)"), ValueError);
  EXPECT_EQ(make("kairos")->options().tail, 99.0);
  EXPECT_EQ(make("kairos(variant='artifact')")->options().tail, 0.0);
  EXPECT_THROW(testing::run(scripted_spec({0.0}, {10}, one_gpu_one_cpu()), "kairos(base='tpu')"), KeyError);
}

// Brute force over every injective row -> column map (rows <= cols).
double brute_force_min(const std::vector<double>& cost, int rows, int cols, std::vector<int>* best_cols) {
  std::vector<int> perm(cols);
  std::iota(perm.begin(), perm.end(), 0);
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> chosen;
  do {
    double total = 0;
    for (int k = 0; k < rows; ++k) total += cost[k * cols + perm[k]];
    if (total < best - 1e-12) {
      best = total;
      chosen.assign(perm.begin(), perm.begin() + rows);
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  *best_cols = chosen;
  return best;
}

TEST(KairosDecision, DispatchesTheIdleHalfOfAnOptimalAssignment) {
  // Random clusters of 4 workers (some busy) and 1-4 pending queries of 1-99 items (at 100, C_j L_ij
  // is the same on every type by definition, a tie): the queries started are
  // exactly those an optimal assignment of the paper's cost matrix, computed here independently,
  // puts on idle workers. (A loose QoS keeps the costs continuous: no ties between penalties.
  // Idle workers of one type are interchangeable, so pairs are compared as (query, type).)
  Rng rng(11, "test");
  auto profile = gpu_cpu_profile();
  const Nanos slo = 10 * kNanosPerSecond;
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    FakeView view(profile);
    const Nanos now = 500 * kNanosPerMilli;
    view.set_now(now);
    const int n_workers = 4;
    const int n_queries = 1 + static_cast<int>(rng.uniform() * 4);
    bool any_gpu = false;
    for (int w = 0; w < n_workers; ++w) {
      const bool busy = rng.uniform() < 0.5;
      const bool gpu = rng.uniform() < 0.5;
      any_gpu = any_gpu || gpu;
      view.add_worker(gpu ? "gpu" : "cpu", busy ? now + static_cast<Nanos>(rng.uniform() * 2e8) : -1);
    }
    if (view.idle_workers().empty()) continue;
    for (int q = 0; q < n_queries; ++q) {
      view.add_query(1 + static_cast<std::int32_t>(rng.uniform() * 99), now - static_cast<Nanos>(rng.uniform() * 1e8),
                     slo);
    }
    KairosOptions o = KairosOptions::defaults(Variant::Paper);
    o.predictor = PredictorSource::Profile;
    KairosDistributor k(o);
    k.on_start(view, view);
    const double base_ms = any_gpu ? 120.0 : 402.0;  // the fastest present type at the largest size
    std::vector<double> cost(static_cast<std::size_t>(n_queries * n_workers));
    for (int i = 0; i < n_queries; ++i) {
      const auto q = view.query(i);
      for (int j = 0; j < n_workers; ++j) {
        const double lat = nanos_to_millis(view.predicted_latency(j, 0, q.size));
        const double type_ms = nanos_to_millis(view.predicted_latency(j, 0, 100));
        const double rem = nanos_to_millis(view.busy_until(j) - now);
        cost[i * n_workers + j] =
            paper_cost({base_ms / type_ms, rem, lat, nanos_to_millis(now - q.arrival), 1e4}, 0.98, 10.0);
        // Ties between an idle and a busy instance of one type go to the older query (1 ns per row).
        if (!view.is_idle(j)) cost[i * n_workers + j] += 1e-6 * (n_queries - i);
      }
    }
    std::vector<int> best;
    brute_force_min(cost, n_queries, n_workers, &best);
    std::vector<std::pair<sched::QueryId, sched::HardwareId>> expected, got;
    for (int i = 0; i < n_queries; ++i) {
      if (view.is_idle(best[i])) expected.emplace_back(i, view.hardware(best[i]));
    }
    k.decide_once(view, view);
    for (const auto& [w, id] : view.dispatched) got.emplace_back(id, view.hardware(w));
    std::sort(got.begin(), got.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(got, expected) << "trial " << trial;
    ++checked;
  }
  EXPECT_GT(checked, 200);
}

TEST(KairosDecision, ArtifactLimitsRowsToTwiceTheInstances) {
  auto profile = gpu_cpu_profile();
  for (const char* variant : {"paper", "artifact"}) {
    FakeView view(profile);
    view.add_worker("gpu");
    for (int q = 0; q < 10; ++q) view.add_query(50, 0, 400 * kNanosPerMilli);
    auto k = make(std::string("kairos(variant='") + variant + "')");
    k->on_start(view, view);
    k->decide_once(view, view);
    EXPECT_EQ(k->stats().max_rows, std::string(variant) == "paper" ? 10 : 2) << variant;
    ASSERT_EQ(view.dispatched.size(), 1u);
  }
}

TEST(Kairos, SmallQueryGoesToTheSlowTypeAndTheLargeOneToTheFast) {
  // A query of 1 item, then one of 100, both at t=0. Kairos: C_cpu = 120/402; the small one costs
  // 21 on the GPU but 0.3 x 6 on the CPU, so it goes to the CPU, and the large one to the GPU.
  // Ribbon (FCFS, GPU first) does the opposite and the large query takes 402 ms on the CPU.
  const auto spec = scripted_spec({0.0, 0.0}, {1, 100}, one_gpu_one_cpu());
  const auto k = testing::run(spec, "kairos(predictor='profile')");
  EXPECT_EQ(k.queries.worker, (std::vector<std::int32_t>{1, 0}));
  EXPECT_DOUBLE_EQ(testing::ms(k.queries.finish[1]), 120.0);
  const auto spec2 = scripted_spec({0.0, 0.0}, {1, 100}, one_gpu_one_cpu());
  const auto r = testing::run(spec2, "ribbon");
  EXPECT_EQ(r.queries.worker, (std::vector<std::int32_t>{0, 1}));
  EXPECT_DOUBLE_EQ(testing::ms(r.queries.finish[1]), 402.0);
}

TEST(Kairos, LargeQueryWaitsForTheBusyFastInstanceRatherThanMissQosOnTheSlowOne) {
  // QoS 300 ms: 100 items take 402 ms on the CPU (penalised), 120 ms on the GPU. The second query
  // arrives while the GPU is busy and waits for it instead of taking the idle CPU.
  for (const char* variant : {"paper", "artifact"}) {
    const auto spec = scripted_spec({0.0, 0.010}, {100, 100}, one_gpu_one_cpu(), 300);
    const auto r = testing::run(spec, str("kairos(variant='", variant, "', predictor='profile')"));
    EXPECT_EQ(r.queries.worker, (std::vector<std::int32_t>{0, 0})) << variant;
    EXPECT_DOUBLE_EQ(testing::ms(r.queries.start[1]), 120.0) << variant;
    EXPECT_DOUBLE_EQ(testing::ms(r.queries.finish[1]), 240.0) << variant;
  }
}

TEST(Kairos, PaperHoldsAQueryMatchedAgainstQosWhenWaitingMeetsIt) {
  // QoS 400 ms (xi T = 392), three queries of 100 items at 0, 10 and 20 ms; the GPU takes 120 ms,
  // the CPU 402 (misses). At 20 ms the second and third both fit on the busy GPU, but Eq. 7 matches
  // one of them to the idle CPU, a certain violation. The paper variant keeps it waiting (oldest
  // first on the GPU: all three meet QoS); the artifact starts it on the CPU.
  const auto spec = scripted_spec({0.0, 0.010, 0.020}, {100, 100, 100}, one_gpu_one_cpu(), 400);
  const auto r = testing::run(spec, "kairos(predictor='profile')");
  EXPECT_EQ(r.queries.worker, (std::vector<std::int32_t>{0, 0, 0}));
  EXPECT_DOUBLE_EQ(testing::ms(r.queries.finish[1]), 240.0);
  EXPECT_DOUBLE_EQ(testing::ms(r.queries.finish[2]), 360.0);
  const auto spec2 = scripted_spec({0.0, 0.010, 0.020}, {100, 100, 100}, one_gpu_one_cpu(), 400);
  const auto a = testing::run(spec2, "kairos(variant='artifact')");
  EXPECT_EQ(a.queries.worker[1] + a.queries.worker[2], 1);
}

TEST(Kairos, CoefficientsComeFromTheLargestQueryOnTheBaseType) {
  const auto spec = scripted_spec({0.0, 0.0}, {1, 100}, one_gpu_one_cpu());
  auto paper = make("kairos(predictor='profile')");
  sim::simulate(spec, *paper);
  EXPECT_EQ(paper->roles().largest, 100);
  EXPECT_EQ(spec.profile->hardware()[paper->roles().base], "gpu");
  EXPECT_DOUBLE_EQ(paper->coefficient(0), 1.0);
  EXPECT_NEAR(paper->coefficient(1), 120.0 / 402.0, 1e-12);
  auto artifact = make("kairos(variant='artifact')");
  sim::simulate(scripted_spec({0.0, 0.0}, {1, 100}, one_gpu_one_cpu()), *artifact);
  EXPECT_DOUBLE_EQ(artifact->coefficient(1), 0.3);
  // A named base type normalises to it instead.
  auto cpu_base = make("kairos(predictor='profile', base='cpu')");
  sim::simulate(scripted_spec({0.0, 0.0}, {1, 100}, one_gpu_one_cpu()), *cpu_base);
  EXPECT_NEAR(cpu_base->coefficient(0), 402.0 / 120.0, 1e-12);
  EXPECT_DOUBLE_EQ(cpu_base->coefficient(1), 1.0);
}

TEST(Kairos, LearnsLatenciesOnlineFromALinearModelToALookupTable) {
  auto k = make("kairos");  // paper: online predictor, no prior knowledge
  const auto r = sim::simulate(random_spec(15, 600, {{"gpu", 2, {}, {}}, {"cpu", 3, {}, {}}}), *k);
  const auto gpu = testing::hardware_of(r, "gpu");
  const auto cpu = testing::hardware_of(r, "cpu");
  const auto* g = k->predictor().estimator(gpu, 0);
  const auto* c = k->predictor().estimator(cpu, 0);
  ASSERT_NE(g, nullptr);
  ASSERT_NE(c, nullptr);
  // Service times are exactly 20 + b and 2 + 4b ms: the line is exact, the table too.
  EXPECT_NEAR(g->slope() * 1e3, 1.0, 1e-9);
  EXPECT_NEAR(c->intercept() * 1e3, 2.0, 1e-9);
  EXPECT_NEAR(g->predict(50) * 1e3, 70.0, 1e-9);
  EXPECT_GT(g->count() + c->count(), 500);
  // After learning, C_cpu is the true ratio.
  std::int32_t cpu_worker = -1;
  for (std::int32_t w = 0; w < static_cast<std::int32_t>(r.workers.hardware.size()); ++w) {
    if (r.workers.hardware[w] == cpu) cpu_worker = w;
  }
  EXPECT_NEAR(k->coefficient(cpu_worker), 120.0 / 402.0, 1e-9);
}

TEST(Kairos, PredictionNoiseIsDeterministicPerSeedAndChangesDecisions) {
  auto run = [](const char* spec, std::uint64_t seed) {
    return testing::run(random_spec(20, 400, {{"gpu", 2, {}, {}}, {"cpu", 3, {}, {}}}, 400, seed), spec);
  };
  const auto a = run("kairos(noise=0.3, predictor='profile')", 1);
  const auto b = run("kairos(noise=0.3, predictor='profile')", 1);
  const auto clean = run("kairos(predictor='profile')", 1);
  EXPECT_EQ(a.queries.worker, b.queries.worker);
  EXPECT_EQ(a.queries.start, b.queries.start);
  EXPECT_NE(a.queries.worker, clean.queries.worker);
}

TEST(Kairos, EveryQueryEndsUnderOverload) {
  for (const char* spec : {"kairos", "kairos(variant='artifact')", "kairos(noise=0.05)"}) {
    auto k = make(spec);
    const auto r = sim::simulate(random_spec(60, 800, {{"gpu", 1, {}, {}}, {"cpu", 2, {}, {}}}, 300), *k);
    std::int64_t completed = 0;
    for (const auto s : r.queries.status) completed += s == 0;
    EXPECT_EQ(completed, 800) << spec;
    EXPECT_GT(k->stats().decisions, 0) << spec;
    EXPECT_EQ(k->stats().dispatched, 800) << spec;
  }
}

// A GPU predicted to finish at 10 ms, an idle CPU, and a 60-item query with QoS 240 ms: on the
// GPU it completes at 10 + 80 = 90 ms; on the CPU it takes 242 ms and misses QoS, so it waits.
struct WaitingForTheGpu {
  FakeView view{gpu_cpu_profile()};
  std::shared_ptr<KairosDistributor> kairos;
  explicit WaitingForTheGpu(const std::string& spec) {
    view.add_worker("gpu", 10 * kNanosPerMilli);
    view.add_worker("cpu");
    kairos = make(spec);
    kairos->on_start(view, view);
    const auto id = view.add_query(60, 0, 240 * kNanosPerMilli);
    kairos->on_arrival(view.query(id), view, view);
  }
  // Moves the clock to the last timer (the GPU overran its prediction: still busy) and fires it.
  Nanos fire_timer() {
    const auto [at, tag] = view.timers.back();
    view.set_now(at);
    kairos->on_timer(tag, view, view);
    return at;
  }
};

TEST(Kairos, PaperReplansWhenAWaitingPairStopsMeetingQos) {
  WaitingForTheGpu s("kairos(predictor='profile')");
  EXPECT_TRUE(s.view.dispatched.empty());
  // GPU pair: (GPU free at 10 ms) 80 ms + waiting stays within 0.98 x 240 = 235.2 ms until
  // 235.2 - 80 = 155.2 ms; just after, it is penalised and the idle CPU is the cheaper pair.
  ASSERT_EQ(s.view.timers.size(), 1u);
  EXPECT_EQ(s.fire_timer(), 155'200'000 + 1);
  ASSERT_EQ(s.view.dispatched.size(), 1u);
  EXPECT_EQ(s.view.dispatched[0].first, 1);  // the CPU
  EXPECT_EQ(s.kairos->stats().timer_steps, 1);
}

TEST(Kairos, ArtifactReplansAtTheSafeguardAndAtTheMiss) {
  WaitingForTheGpu s("kairos(variant='artifact')");
  // 155.2 ms + 1 ns: the GPU pair enters the 2% safeguard (-500), still better than the CPU's
  // -1000; 160 ms + 1 ns: it misses (-1000) like the CPU, and the tie goes to the idle CPU.
  EXPECT_EQ(s.fire_timer(), 155'200'000 + 1);
  EXPECT_TRUE(s.view.dispatched.empty());
  EXPECT_EQ(s.fire_timer(), 160'000'000 + 1);
  ASSERT_EQ(s.view.dispatched.size(), 1u);
  EXPECT_EQ(s.view.dispatched[0].first, 1);
}

TEST(Kairos, DropsAQueryNoWorkerCanServe) {
  auto spec = scripted_spec({0.0, 0.0}, {150, 10}, one_gpu_one_cpu());  // 150 > the profile's 100
  const auto r = testing::run(spec, "kairos");
  EXPECT_EQ(r.queries.status[0], 1);
  EXPECT_EQ(r.queries.status[1], 0);
}

}  // namespace
}  // namespace servelab::kairos
