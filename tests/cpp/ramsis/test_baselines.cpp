// The load monitor and the load-granular baselines (Jellyfish+, ModelSwitching) of RAMSIS.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "ramsis/ramsis_fixtures.hpp"
#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/systems/ramsis/jellyfish.hpp"
#include "servelab/systems/ramsis/load_monitor.hpp"
#include "servelab/systems/ramsis/model_switching.hpp"
#include "servelab/systems/ramsis/model_switching_table.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::ramsis {
namespace {

constexpr Nanos kMs = kNanosPerMilli;

using testing::two_model_profile;

std::vector<ModelCurve> curves() {
  ModelCurve small{0, 0.6, {}}, big{1, 0.9, {}};
  for (int b = 1; b <= 8; ++b) {
    small.latency.push_back((10 + 2 * b) * kMs);
    big.latency.push_back((40 + 10 * b) * kMs);
  }
  return {small, big};
}

cluster::RunSpec replay(std::vector<double> times_s, std::int32_t workers, double slo_ms = 100) {
  cluster::RunSpec spec;
  spec.profile = two_model_profile();
  spec.workers = {cluster::WorkerGroup{"cpu", workers, {}, {}}};
  workload::Application app{"a", 1.0, millis_to_nanos(slo_ms), nullptr, 0.0};
  const auto count = static_cast<std::int64_t>(times_s.size());
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Replay>(times_s), std::vector{app}, count);
  spec.decision_statistic = profile::Statistic::P95;
  spec.service_statistic = profile::Statistic::P95;
  return spec;
}

TEST(LoadMonitor, MovingAverageOverTheWindow) {
  LoadMonitor m(500 * kMs);
  m.reset(0);
  EXPECT_EQ(m.rate_qps(0), 0.0);
  for (int i = 1; i <= 100; ++i) m.record(i * 10 * kMs);  // 100 queries/s for 1 s
  EXPECT_NEAR(m.rate_qps(1000 * kMs), 100.0, 1e-9);       // 50 arrivals in (0.5 s, 1 s]
  EXPECT_NEAR(m.rate_qps(1250 * kMs), 50.0, 1e-9);        // 25 left in (0.75 s, 1.25 s]
  EXPECT_EQ(m.rate_qps(3000 * kMs), 0.0);
}

TEST(LoadMonitor, EarlyEstimatesUseTheTimeObservedSoFar) {
  LoadMonitor m(500 * kMs);
  m.reset(0);
  m.record(100 * kMs);
  EXPECT_NEAR(m.rate_qps(100 * kMs), 10.0, 1e-9);  // 1 arrival in 0.1 s, not 1 in 0.5 s
  m.reset(0);
  m.record(0);
  EXPECT_TRUE(std::isinf(m.rate_qps(0)));  // an arrival at the very start reads as the highest load
  EXPECT_THROW(LoadMonitor(0), ValueError);
}

TEST(LoadMonitor, GridIndexIsTheSmallestLoadAtOrAbove) {
  const std::vector<double> grid{200, 400, 600};
  EXPECT_EQ(grid_index(grid, 0), 0u);
  EXPECT_EQ(grid_index(grid, 200), 0u);
  EXPECT_EQ(grid_index(grid, 201), 1u);
  EXPECT_EQ(grid_index(grid, 600), 2u);
  EXPECT_EQ(grid_index(grid, 1e9), 2u);  // above the grid: the largest
  EXPECT_THROW(validate_load_grid(std::vector<double>{}), ValueError);
  EXPECT_THROW(validate_load_grid(std::vector<double>{200, 100}), ValueError);
  EXPECT_THROW(validate_load_grid(std::vector<double>{-1}), ValueError);
}

TEST(AdaptiveBatching, MostAccurateModelThatSustainsTheLoadWithinHalfTheSlo) {
  const auto c = curves();
  // 10 queries/s per worker: "big" at batch 1 (50 ms <= 50 ms, 20 queries/s >= 10.5).
  BatchRule r = adaptive_batch_rule(c, 100 * kMs, 10, kJellyfishHeadroom);
  EXPECT_EQ(r.model, 1);
  EXPECT_EQ(r.max_batch, 1);
  // 25 queries/s: "big" cannot (20 < 26.25); "small" can at every batch up to 8 (26 ms).
  r = adaptive_batch_rule(c, 100 * kMs, 25, kJellyfishHeadroom);
  EXPECT_EQ(r.model, 0);
  EXPECT_EQ(r.max_batch, 8);
  // The batch must also fit half the SLO: with 40 ms, "small" stops at b = 5 (20 ms).
  r = adaptive_batch_rule(c, 40 * kMs, 25, 1.0);
  EXPECT_EQ(r.model, 0);
  EXPECT_EQ(r.max_batch, 5);
  // Nothing sustains 400 queries/s: the fastest model, batches as large as it goes.
  r = adaptive_batch_rule(c, 100 * kMs, 400, 1.0);
  EXPECT_EQ(r.model, 0);
  EXPECT_EQ(r.max_batch, 8);
  EXPECT_THROW(adaptive_batch_rule({}, 100 * kMs, 1, 1.0), ValueError);
  EXPECT_THROW(adaptive_batch_rule(c, 0, 1, 1.0), ValueError);
  EXPECT_THROW(adaptive_batch_rule(c, 100 * kMs, std::nan(""), 1.0), ValueError);
}

TEST(Jellyfish, KnownLowLoadServesTheAccurateModelOneQueryAtATime) {
  // 20 queries/s over 2 workers: 10 each -> "big", batch 1. Three queries at t=0: two start at
  // once (lowest ids first), the third waits in the central queue for worker 0 (free at 50 ms).
  const auto spec = replay({0, 0, 0}, 2);
  LoadGranularOptions o;
  o.fixed_load_qps = 20;
  auto jf = make_jellyfish(o);
  const auto r = sim::simulate(spec, *jf);
  const auto big = spec.profile->model_index("big");
  for (int q = 0; q < 3; ++q) EXPECT_EQ(r.queries.model[q], big) << q;
  EXPECT_EQ(r.queries.worker[0], 0);
  EXPECT_EQ(r.queries.worker[1], 1);
  EXPECT_EQ(r.queries.worker[2], 0);
  EXPECT_EQ(r.queries.start[2], 50 * kMs);
  EXPECT_EQ(r.queries.batch_queries[2], 1);
}

TEST(Jellyfish, HighLoadBatchesTheHeadOfTheCentralQueueWithTheFastModel) {
  // 100 queries/s on one worker: "small", up to 8 per batch. q0 runs alone (12 ms); the five that
  // arrived meanwhile go together at 12 ms.
  const auto spec = replay({0, 0.001, 0.001, 0.002, 0.003, 0.004}, 1);
  LoadGranularOptions o;
  o.fixed_load_qps = 100;
  auto jf = make_jellyfish(o);
  const auto r = sim::simulate(spec, *jf);
  const auto small = spec.profile->model_index("small");
  EXPECT_EQ(r.queries.batch_queries[0], 1);
  for (int q = 1; q < 6; ++q) {
    EXPECT_EQ(r.queries.model[q], small);
    EXPECT_EQ(r.queries.start[q], 12 * kMs);
    EXPECT_EQ(r.queries.batch_queries[q], 5);
  }
}

TEST(Jellyfish, EstimatedLoadSelectsTheGridLoadAtOrAboveIt) {
  // Spaced arrivals (2/s) pick the low grid load -> "big"; a burst of 40 within 20 ms reads as a
  // high load -> "small".
  std::vector<double> times;
  for (int i = 1; i <= 6; ++i) times.push_back(i * 0.5);
  for (int i = 0; i < 40; ++i) times.push_back(4.0 + i * 0.0005);
  const auto spec = replay(times, 1);
  LoadGranularOptions o;
  o.loads_qps = {5, 1000};
  auto jf = make_jellyfish(o);
  const auto r = sim::simulate(spec, *jf);
  const auto small = spec.profile->model_index("small"), big = spec.profile->model_index("big");
  EXPECT_EQ(r.queries.model[2], big);
  EXPECT_EQ(r.queries.model[45], small);
}

TEST(Jellyfish, RegisteredWithValidatedParameters) {
  const auto& registry = catalogue::schedulers();
  EXPECT_TRUE(registry.contains("jellyfish"));
  EXPECT_TRUE(registry.contains("model_switching"));
  EXPECT_EQ(registry.make("jellyfish(loads=[100, 200], slo_ms=150)")->describe(),
            "jellyfish(loads=[100, 200], load_qps=0, slo_ms=150, window_ms=500)");
  EXPECT_THROW(registry.make("jellyfish(loads=[200, 100])"), ValueError);
  EXPECT_THROW(registry.make("jellyfish(window_ms=0)"), ValueError);
  EXPECT_THROW(registry.make("model_switching(loads=[100, 200], models='a')"), ValueError);  // one model, two loads
  EXPECT_THROW(registry.make("model_switching(loads=[], models='')"), ValueError);
}

TEST(ModelSwitching, ServesTheTableModelOfTheLoadWithAdaptiveBatches) {
  const ModelSwitchingTable table{{10, 100}, {"big", "small"}};
  const auto spec = replay({0, 0.001, 0.001, 0.002}, 1);
  const auto big = spec.profile->model_index("big"), small = spec.profile->model_index("small");
  {
    LoadGranularOptions o;
    o.fixed_load_qps = 5;  // -> the 10 entry: "big"; batches capped at 1 (big sustains 10 at b=1)
    auto ms = make_model_switching(table, o);
    const auto r = sim::simulate(spec, *ms);
    for (int q = 0; q < 4; ++q) EXPECT_EQ(r.queries.model[q], big);
    EXPECT_EQ(r.queries.batch_queries[3], 1);
  }
  {
    LoadGranularOptions o;
    o.fixed_load_qps = 50;  // -> the 100 entry: "small"; the cap at 100/s is 8
    auto ms = make_model_switching(table, o);
    const auto r = sim::simulate(spec, *ms);
    for (int q = 0; q < 4; ++q) EXPECT_EQ(r.queries.model[q], small);
    EXPECT_EQ(r.queries.batch_queries[3], 3);
    EXPECT_EQ(ms->describe(),
              "model_switching(models='big,small', loads=[10, 100], load_qps=50, slo_ms=0, window_ms=500)");
  }
  LoadGranularOptions o;
  auto unknown = make_model_switching({{10}, {"nope"}}, o);
  EXPECT_THROW(sim::simulate(spec, *unknown), KeyError);
}

TEST(ModelSwitching, TableGenerationPicksTheMostAccurateModelMeetingTheTarget) {
  ModelSwitchingSearch s;
  s.profile = two_model_profile();
  s.hardware = "cpu";
  s.workers = 2;
  s.slo = 100 * kMs;
  s.loads_qps = {5, 200, 2000};
  s.duration = 20 * kNanosPerSecond;
  const ModelSwitchingResult r = generate_model_switching_table(s);
  ASSERT_EQ(r.candidates, (std::vector<std::string>{"small", "big"}));
  EXPECT_EQ(r.table.models, (std::vector<std::string>{"big", "small", "small"}));
  // 5/s: "big" simulated and qualifies, "small" not needed.
  EXPECT_TRUE(r.simulated[0][1]);
  EXPECT_LT(r.violation[0][1], 0.01);
  EXPECT_TRUE(std::isnan(r.violation[0][0]));
  // 200/s: "big" cannot sustain it (40/s at most): not simulated, counted as a full violation.
  EXPECT_FALSE(r.simulated[1][1]);
  EXPECT_EQ(r.violation[1][1], 1.0);
  EXPECT_TRUE(r.simulated[1][0]);
  // 2000/s: nothing can; the fastest model is the fallback.
  EXPECT_EQ(r.violation[2][0], 1.0);
  // Parallel search: the same table.
  s.threads = 2;
  const ModelSwitchingResult p = generate_model_switching_table(s);
  EXPECT_EQ(p.table.models, r.table.models);
  EXPECT_EQ(p.violation[0][1], r.violation[0][1]);
  s.workers = 0;
  EXPECT_THROW(generate_model_switching_table(s), ValueError);
}

}  // namespace
}  // namespace servelab::ramsis
