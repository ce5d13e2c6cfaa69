// Each generic policy makes the decision its description promises.
#include <gtest/gtest.h>

#include "servelab/core/errors.hpp"
#include "sim_fixture.hpp"

namespace servelab {
namespace {

using testing::ms;
using testing::replay_spec;
using testing::run;

// Workers 0-1 are "slow", worker 2 is "fast" (in spec order).
std::vector<cluster::WorkerGroup> slow_then_fast() { return {{"slow", 2, {}, {}}, {"fast", 1, {}, {}}}; }

TEST(Fcfs, PrefersTheListedHardwareThenTheLowestId) {
  EXPECT_EQ(run(replay_spec({0.0}, slow_then_fast()), "fcfs").queries.worker[0], 0);
  EXPECT_EQ(run(replay_spec({0.0}, slow_then_fast()), "fcfs(prefer='fast')").queries.worker[0], 2);
  const auto r = run(replay_spec({0.0, 0.0, 0.0}, slow_then_fast()), "fcfs(prefer='fast, slow')");
  EXPECT_EQ(r.queries.worker, (std::vector<std::int32_t>{2, 0, 1}));
}

TEST(Fcfs, UnknownPreferredHardwareIsAKeyError) {
  EXPECT_THROW(run(replay_spec({0.0}, slow_then_fast()), "fcfs(prefer='tpu')"), KeyError);
}

TEST(RoundRobin, CyclesThroughWorkersAndQueuesPerWorker) {
  const auto r = run(replay_spec({0.0, 0.0, 0.0, 0.0}, slow_then_fast()), "round_robin");
  EXPECT_EQ(r.queries.worker, (std::vector<std::int32_t>{0, 1, 2, 0}));
  EXPECT_DOUBLE_EQ(ms(r.queries.start[3]), 33);  // waited in worker 0's own queue
}

TEST(JoinShortestQueue, PicksTheWorkerWithFewestOutstanding) {
  // 0 and 1 busy with one query each, 2 gets the third; the fourth ties at one each: lowest id.
  const auto r = run(replay_spec({0.0, 0.0, 0.0, 0.001}, slow_then_fast()), "jsq");
  EXPECT_EQ(r.queries.worker, (std::vector<std::int32_t>{0, 1, 2, 0}));
}

TEST(LeastFinishTime, WaitsForTheFastWorkerWhenThatFinishesFirst) {
  // fast: 11 ms, slow: 33 ms. The second query finishes at 22 ms behind the first on the fast
  // worker, earlier than 33 ms on an idle slow one.
  const auto r = run(replay_spec({0.0, 0.0, 0.0}, slow_then_fast()), "least_finish_time");
  EXPECT_EQ(r.queries.worker[0], 2);
  EXPECT_EQ(r.queries.worker[1], 2);
  EXPECT_DOUBLE_EQ(ms(r.queries.finish[1]), 22);
  EXPECT_EQ(r.queries.worker[2], 0);  // fast would finish at 33 ms, slow at 33 ms: lowest id
}

TEST(EarliestDeadlineFirst, AlwaysServesTheNearestDeadlineAmongWaitingQueries) {
  // Two apps with different SLOs, overloaded single worker: at every dispatch, no waiting query
  // had an earlier deadline than the one dispatched.
  auto spec = replay_spec({}, {{"fast", 1, {}, {}}});
  std::vector<workload::Application> apps = {{"tight", 1.0, millis_to_nanos(20), nullptr, 0.0},
                                             {"loose", 1.0, millis_to_nanos(500), nullptr, 0.0}};
  spec.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(150.0), apps, 200);
  const auto r = run(spec, "edf");
  const auto& q = r.queries;
  for (std::size_t i = 0; i < q.size_of(); ++i) {
    for (std::size_t j = 0; j < q.size_of(); ++j) {
      const bool waiting = q.arrival[j] <= q.dispatch[i] && q.dispatch[j] > q.dispatch[i];
      if (waiting) EXPECT_GE(q.deadline[j], q.deadline[i]) << "query " << j << " was passed over by " << i;
    }
  }
  const auto late = run(spec, "edf(drop_late=True)");
  std::int64_t dropped = 0;
  for (std::size_t i = 0; i < late.queries.size_of(); ++i) {
    if (late.queries.status[i] == 0) {
      EXPECT_LE(late.queries.finish[i], late.queries.deadline[i]);  // fixed service: predictions are exact
    } else {
      ++dropped;
    }
  }
  EXPECT_GT(dropped, 0);
}

TEST(DynamicBatching, FillsBatchesUpToMaxOrTimesOut) {
  // Four queries at once and max_batch 3: one batch of 3 right away, the fourth after the timeout.
  const auto r = run(replay_spec({0.0, 0.0, 0.0, 0.0}, {{"fast", 2, {}, {}}}), "batching(max_batch=3, timeout_ms=4)");
  EXPECT_EQ(r.queries.batch_queries[0], 3);
  EXPECT_EQ(r.queries.batch_items[0], 3);
  EXPECT_DOUBLE_EQ(ms(r.queries.start[0]), 0);
  EXPECT_DOUBLE_EQ(ms(r.queries.start[3]), 4);
  EXPECT_EQ(r.queries.batch_queries[3], 1);
  EXPECT_DOUBLE_EQ(ms(r.queries.finish[0]), 13);  // 10 + 3 items
}

TEST(Registry, ListsEveryGenericPolicyWithTypedParameters) {
  const auto& registry = catalogue::schedulers();
  for (const char* name : {"fcfs", "round_robin", "random", "jsq", "least_finish_time", "edf", "batching"}) {
    EXPECT_TRUE(registry.contains(name)) << name;
  }
  EXPECT_THROW(registry.make("batching(max_batch=0)"), ValueError);
  EXPECT_THROW(registry.make("batching(timeout_ms=-1)"), ValueError);
  EXPECT_THROW(registry.make("fcfs(order=1)"), KeyError);
  EXPECT_THROW(registry.make("nope"), KeyError);
}

}  // namespace
}  // namespace servelab
