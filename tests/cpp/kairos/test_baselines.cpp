// The baselines Kairos is compared with: Ribbon, DRS, CLKWRK and ORCL's online rule.
#include <gtest/gtest.h>

#include "kairos/scripted_run.hpp"
#include "servelab/core/errors.hpp"

namespace servelab::kairos {
namespace {

using testing::hardware_of;
using testing::ms;
using testing::random_spec;
using testing::registry;
using testing::run;
using testing::scripted_spec;

std::vector<cluster::WorkerGroup> mixed() { return {{"cpu", 2, {}, {}}, {"gpu", 1, {}, {}}}; }

TEST(Ribbon, IsFcfsPreferringTheFastestTypeOnTheLargestQuery) {
  const auto ribbon = run(random_spec(25, 500, mixed()), "ribbon");
  const auto fcfs = run(random_spec(25, 500, mixed()), "fcfs(prefer='gpu')");
  EXPECT_EQ(ribbon.queries.worker, fcfs.queries.worker);
  EXPECT_EQ(ribbon.queries.start, fcfs.queries.start);
  EXPECT_EQ(ribbon.scheduler, "ribbon(base='')");
  const auto cpu_first = run(random_spec(25, 500, mixed()), "ribbon(base='cpu')");
  const auto fcfs_cpu = run(random_spec(25, 500, mixed()), "fcfs(prefer='cpu')");
  EXPECT_EQ(cpu_first.queries.worker, fcfs_cpu.queries.worker);
  EXPECT_THROW(run(random_spec(25, 10, mixed()), "ribbon(base='tpu')"), KeyError);
}

TEST(Drs, SplitsQueriesAtTheThreshold) {
  const auto r = run(random_spec(15, 600, mixed()), "drs(threshold=50)");
  const auto gpu = hardware_of(r, "gpu");
  std::int64_t small = 0, large = 0;
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
    ASSERT_EQ(r.queries.status[i], 0);
    const bool on_gpu = r.workers.hardware[r.queries.worker[i]] == gpu;
    EXPECT_EQ(on_gpu, r.queries.size[i] > 50) << "query " << i << " of size " << r.queries.size[i];
    (on_gpu ? large : small) += 1;
  }
  EXPECT_GT(small, 100);
  EXPECT_GT(large, 100);
}

TEST(Drs, DefaultThresholdIsWhatEveryAuxiliaryTypeServesWithinQos) {
  // QoS 200 ms: the CPU serves 2 + 4b <= 200 ms up to b = 49.
  const auto r = run(random_spec(10, 400, mixed(), 200), "drs");
  const auto gpu = hardware_of(r, "gpu");
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
    EXPECT_EQ(r.workers.hardware[r.queries.worker[i]] == gpu, r.queries.size[i] > 49) << "query " << i;
  }
  // Only base instances: everything goes to them; only auxiliary ones: likewise.
  const auto only_cpu = run(random_spec(5, 50, {{"cpu", 3, {}, {}}}), "drs(threshold=10)");
  for (const auto s : only_cpu.queries.status) EXPECT_EQ(s, 0);
  EXPECT_THROW(registry().make("drs(threshold=-2)"), ValueError);
}

TEST(Clockwork, NeverSendsAQueryWhereItWouldMissQos) {
  // Service times equal the predictions, so every query that is not rejected meets its deadline.
  const auto r = run(random_spec(30, 800, mixed(), 300), "clockwork(reject_late=True)");
  std::int64_t rejected = 0;
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
    if (r.queries.status[i] == 0) {
      EXPECT_LE(r.queries.finish[i], r.queries.deadline[i]) << "query " << i;
    } else {
      ++rejected;
      EXPECT_EQ(r.drop_reasons[r.queries.drop_reason[i]], "would miss its QoS on every worker");
    }
  }
  EXPECT_GT(rejected, 0);  // overloaded: some cannot make it anywhere
  // By default it still serves such a query, where it finishes first: like least_finish_time.
  const auto keep = run(random_spec(30, 800, mixed(), 300), "clockwork");
  for (const auto s : keep.queries.status) EXPECT_EQ(s, 0);
  const auto lft = run(random_spec(30, 800, mixed(), 300), "least_finish_time");
  EXPECT_EQ(keep.queries.worker, lft.queries.worker);
}

TEST(Clockwork, JoinsTheQueueWhereTheQueryFinishesFirst) {
  // A 100-item query takes 120 ms on the GPU, 402 ms on a CPU: with QoS 1 s the second one
  // queues behind the first on the GPU (finishing at 240 ms) rather than take an idle CPU.
  const auto r = run(scripted_spec({0.0, 0.0, 0.0}, {100, 100, 1}, mixed()), "clockwork");
  EXPECT_EQ(r.queries.worker, (std::vector<std::int32_t>{2, 2, 0}));
  EXPECT_DOUBLE_EQ(ms(r.queries.finish[1]), 240.0);
}

TEST(Clockwork, AWorkerPastItsPredictedEndCompetesFromNow) {
  // In the serving loop a batch can run past its predicted end. CPU w0 is predicted busy until
  // 14 ms, CPU w1 until 5 ms; a 1-item query takes 6 ms. At 0 ms the first query queues on w1
  // (done at 5 + 6 = 11 ms). At 10 ms w1 is still running: the next query would finish there at
  // 10 + 6 + 6 = 22 ms, on w0 at 14 + 6 = 20 ms, so it goes to w0 (not to w1 by its 11 ms).
  testing::FakeView view{testing::gpu_cpu_profile()};
  view.add_worker("cpu", 14 * kNanosPerMilli);
  view.add_worker("cpu", 5 * kNanosPerMilli);
  auto policy = registry().make("clockwork(qos_ms=1000)");
  policy->on_start(view, view);
  policy->on_arrival(view.query(view.add_query(1, 0, kNanosPerSecond)), view, view);
  view.set_now(10 * kNanosPerMilli);
  policy->on_arrival(view.query(view.add_query(1, view.now(), kNanosPerSecond)), view, view);
  using Enqueued = std::vector<std::pair<sched::WorkerId, sched::QueryId>>;
  EXPECT_EQ(view.enqueued, (Enqueued{{1, 0}, {0, 1}}));
}

TEST(Oracle, BaseTakesTheLargestAndAuxiliaryTheSmallestWithinQos) {
  // QoS 400 ms. t=0: 100 items -> GPU. Then 100, 10 and 60 items at 1, 2, 3 ms: the idle CPU
  // would miss QoS on 100 items (402 ms) and leaves it; it takes 10 at 2 ms (done at 44 ms), then
  // the smallest waiting, 60 (242 ms). The GPU, free at 120 ms, takes the largest, 100.
  const auto r =
      run(scripted_spec({0.0, 0.001, 0.002, 0.003}, {100, 100, 10, 60}, {{"gpu", 1, {}, {}}, {"cpu", 1, {}, {}}}, 400),
          "oracle");
  EXPECT_EQ(r.queries.worker, (std::vector<std::int32_t>{0, 0, 1, 1}));
  EXPECT_DOUBLE_EQ(ms(r.queries.start[1]), 120.0);
  EXPECT_DOUBLE_EQ(ms(r.queries.start[2]), 2.0);
  EXPECT_DOUBLE_EQ(ms(r.queries.start[3]), 44.0);
}

TEST(Oracle, AuxiliaryOnlyClusterStillServesEverything) {
  const auto r = run(random_spec(4, 100, {{"cpu", 2, {}, {}}}, 50), "oracle(base='gpu')");
  for (const auto s : r.queries.status) EXPECT_EQ(s, 0);
}

}  // namespace
}  // namespace servelab::kairos
