#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "servelab/cluster/cluster_state.hpp"
#include "servelab/cluster/quantile_sketch.hpp"
#include "servelab/core/errors.hpp"
#include "sim_fixture.hpp"

namespace servelab {
namespace {

using testing::ms;
using testing::replay_spec;
using testing::run;

TEST(Simulator, FcfsOnOneWorkerQueuesExactly) {
  // 11 ms service; arrivals at 0, 5, 30 ms: the second waits for the first.
  const auto r = run(replay_spec({0.0, 0.005, 0.030}, {{"fast", 1, {}, {}}}), "fcfs");
  ASSERT_EQ(r.queries.size_of(), 3u);
  EXPECT_DOUBLE_EQ(ms(r.queries.finish[0]), 11);
  EXPECT_DOUBLE_EQ(ms(r.queries.start[1]), 11);
  EXPECT_DOUBLE_EQ(ms(r.queries.finish[1]), 22);
  EXPECT_DOUBLE_EQ(ms(r.queries.start[2]), 30);
  EXPECT_DOUBLE_EQ(ms(r.duration), 41);
  EXPECT_EQ(r.workers.batches[0], 3);
  EXPECT_EQ(r.workers.busy[0], millis_to_nanos(33));
  EXPECT_EQ(r.world, "sim");
}

TEST(Simulator, CompletionsGoBeforeArrivalsAtTheSameTime) {
  // The first batch ends at exactly 11 ms when the second query arrives: it must find the worker idle.
  const auto r = run(replay_spec({0.0, 0.011}, {{"fast", 1, {}, {}}}), "fcfs");
  EXPECT_EQ(r.queries.dispatch[1], r.queries.arrival[1]);
}

TEST(Simulator, SameSeedSameRecordsAndSeedsDiffer) {
  auto spec = replay_spec({}, {{"fast", 2, {}, {}}, {"slow", 3, {}, {}}});
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(150.0), spec.workload->apps(), 3000);
  spec.service_statistic.reset();  // sampled service times
  spec.seed = 5;
  const auto a = run(spec, "least_finish_time");
  const auto b = run(spec, "least_finish_time");
  EXPECT_EQ(a.queries.finish, b.queries.finish);
  EXPECT_EQ(a.queries.worker, b.queries.worker);
  spec.seed = 6;
  EXPECT_NE(run(spec, "least_finish_time").queries.arrival, a.queries.arrival);
}

TEST(Simulator, EveryQueryEndsOnceAndNoWorkerOverlaps) {
  auto spec = replay_spec({}, {{"fast", 1, {}, {}}, {"slow", 2, {}, {}}});
  spec.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(400.0),
                                                       spec.workload->apps(), 2000);  // overloaded
  for (const auto& entry : catalogue::schedulers().entries()) {
    // Policies with a required parameter (a policy file, a table) are covered by their systems' tests.
    const bool needs_arguments = std::any_of(entry->params.begin(), entry->params.end(),
                                             [](const ParamSpec& p) { return !p.default_value.has_value(); });
    if (needs_arguments) continue;
    const auto r = run(spec, entry->name.c_str());
    ASSERT_EQ(r.queries.size_of(), 2000u) << entry->name;
    std::vector<std::pair<Nanos, Nanos>> intervals[3];
    for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
      if (r.queries.status[i] == 0) {
        EXPECT_LE(r.queries.arrival[i], r.queries.dispatch[i]) << entry->name;
        EXPECT_LE(r.queries.start[i], r.queries.finish[i]) << entry->name;
        intervals[r.queries.worker[i]].push_back({r.queries.start[i], r.queries.finish[i]});
      } else {
        EXPECT_GE(r.queries.drop_reason[i], 0) << entry->name;
      }
    }
    for (auto& list : intervals) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());  // one entry per batch
      for (std::size_t k = 1; k < list.size(); ++k) EXPECT_LE(list[k - 1].second, list[k].first) << entry->name;
    }
  }
}

TEST(Simulator, DrainLimitCutsOffWhatIsLeft) {
  auto spec = replay_spec({0.0, 0.0, 0.0}, {{"slow", 1, {}, {}}});  // 33 ms each
  spec.drain_limit = millis_to_nanos(50);
  const auto r = run(spec, "fcfs");
  EXPECT_EQ(r.queries.status[0], 0);
  EXPECT_EQ(r.queries.status[1], 1);  // was running at 50 ms
  EXPECT_EQ(r.queries.status[2], 1);  // still queued
  ASSERT_EQ(r.drop_reasons.size(), 1u);
  EXPECT_EQ(r.drop_reasons[0], "cut off at end of run");
  EXPECT_EQ(r.queries.dispatch[1], -1);
  EXPECT_DOUBLE_EQ(ms(r.duration), 50);
}

TEST(Simulator, CostIsPriceTimesActiveTime) {
  const auto r = run(replay_spec({0.0}, {{"fast", 1, {}, {}}}), "fcfs");
  EXPECT_NEAR(r.workers.cost[0], 3.6 * 0.011 / 3600, 1e-15);
  EXPECT_NEAR(r.queries.cost[0], r.workers.cost[0], 1e-12);
}

// A scheduler that exercises the cluster-changing actions and bad actions.
class Scripted final : public sched::Scheduler {
 public:
  std::string describe() const override { return "scripted"; }
  void on_start(const sched::ClusterView& view, sched::Actions& actions) override {
    const sched::ModelId m = 0;
    added = actions.add_worker("fast", std::span(&m, 1), millis_to_nanos(100));
    actions.set_timer(millis_to_nanos(5), 42);
    EXPECT_THROW(actions.set_timer(-1, 0), ValueError);
    EXPECT_THROW(actions.add_worker("tpu", {}, 0), KeyError);
  }
  void on_arrival(const sched::Query& q, const sched::ClusterView& view, sched::Actions& actions) override {
    const sched::QueryId id = q.id;
    if (view.is_idle(added)) {
      actions.dispatch(added, 0, std::span(&id, 1));
      EXPECT_THROW(actions.dispatch(added, 0, std::span(&id, 1)), ValueError);  // busy now
    } else {
      EXPECT_EQ(view.status(added), sched::WorkerStatus::Starting);
      EXPECT_THROW(actions.dispatch(added, 0, std::span(&id, 1)), ValueError);
      EXPECT_THROW(actions.dispatch(0, 7, std::span(&id, 1)), ValueError);  // unknown model
      EXPECT_THROW(actions.dispatch(0, 0, {}), ValueError);                 // empty batch
      actions.enqueue(id);
    }
  }
  void on_timer(std::int64_t tag, const sched::ClusterView& view, sched::Actions&) override {
    timer_tag = tag;
    timer_at = view.now();
  }
  void on_worker_ready(sched::WorkerId worker, const sched::ClusterView& view, sched::Actions& actions) override {
    ready = worker;
    ready_at = view.now();
    while (!view.central_queue().empty() && view.is_idle(worker)) {
      const sched::QueryId id = view.central_queue().front();
      actions.dispatch(worker, 0, std::span(&id, 1));
    }
  }
  sched::WorkerId added = -1, ready = -1;
  std::int64_t timer_tag = -1;
  Nanos timer_at = -1, ready_at = -1;
};

TEST(Simulator, AddedWorkersStartUpTimersFireAndBadActionsThrow) {
  auto spec = replay_spec({0.010, 0.200}, {{"slow", 1, {}, {}}});
  Scripted policy;
  const auto r = sim::simulate(spec, policy);
  EXPECT_EQ(policy.added, 1);
  EXPECT_EQ(policy.timer_tag, 42);
  EXPECT_DOUBLE_EQ(ms(policy.timer_at), 5);
  EXPECT_EQ(policy.ready, 1);
  EXPECT_DOUBLE_EQ(ms(policy.ready_at), 100);
  EXPECT_EQ(r.queries.worker[0], 1);  // waited for the new worker
  EXPECT_DOUBLE_EQ(ms(r.queries.start[0]), 100);
  EXPECT_EQ(r.queries.worker[1], 1);
  EXPECT_EQ(r.workers.active[1], r.duration - 0);  // paid from its add at t=0
}

TEST(Simulator, InvalidSpecsNameTheField) {
  auto spec = replay_spec({0.0}, {{"fast", 0, {}, {}}});
  try {
    run(spec, "fcfs");
    FAIL() << "count 0 accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("workers[0].count=0"), std::string::npos) << e.what();
  }
  spec = replay_spec({0.0}, {{"gpu", 1, {}, {}}});
  EXPECT_THROW(run(spec, "fcfs"), KeyError);
  spec = replay_spec({0.0}, {{"fast", 1, {"nope"}, {}}});
  EXPECT_THROW(run(spec, "fcfs"), KeyError);
  spec = replay_spec({0.0}, {{"fast", 1, {}, {}}}, 1000, 101);  // beyond the profile's batch 100
  const auto r = run(spec, "fcfs");
  EXPECT_EQ(r.queries.status[0], 1);  // no worker can serve it: dropped at once, with the reason
  EXPECT_EQ(r.drop_reasons.at(r.queries.drop_reason[0]), "no worker can serve it");
  EXPECT_EQ(r.queries.finish[0], 0);
}

// numpy's default percentile: linear interpolation between the order statistics.
double exact_quantile(std::vector<std::int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos)), hi = static_cast<std::size_t>(std::ceil(pos));
  return static_cast<double>(v[lo]) + static_cast<double>(v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

TEST(QuantileSketch, WithinTheStatedRelativeErrorOfNumpysPercentile) {
  std::mt19937_64 gen(7);
  std::lognormal_distribution<double> dist(16.0, 1.5);  // ns: about 9 ms, spread over decades
  std::vector<std::int64_t> values;
  cluster::QuantileSketch sketch, half_a, half_b;
  for (int i = 0; i < 20000; ++i) {
    const auto v = i % 50 == 0 ? std::int64_t{0} : static_cast<std::int64_t>(dist(gen)) + 1;
    values.push_back(v);
    sketch.add(v);
    (i % 2 ? half_a : half_b).add(v);
  }
  half_a.merge(half_b);
  ASSERT_EQ(sketch.count(), values.size());
  for (const double q : {0.0, 0.01, 0.02, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0}) {
    const double exact = exact_quantile(values, q);
    EXPECT_LE(std::abs(sketch.quantile(q) - exact), cluster::QuantileSketch::kAlpha * exact + 1e-9) << "q=" << q;
    EXPECT_EQ(half_a.quantile(q), sketch.quantile(q)) << "merging is exact, q=" << q;
  }
  EXPECT_TRUE(std::isnan(cluster::QuantileSketch{}.quantile(0.5)));
}

TEST(RecordMode, ParsesAndNamesTheFieldWhenWrong) {
  EXPECT_EQ(cluster::parse_record_mode("all").kind, cluster::RecordMode::Kind::All);
  EXPECT_EQ(cluster::parse_record_mode("none").kind, cluster::RecordMode::Kind::None);
  const auto s = cluster::parse_record_mode("sample(0.25)");
  EXPECT_EQ(s.kind, cluster::RecordMode::Kind::Sample);
  EXPECT_DOUBLE_EQ(s.p, 0.25);
  for (const char* bad : {"bogus", "sample(1.5)", "sample()", "sample(0.5", "sample(-1)", "sample(nan)"}) {
    try {
      cluster::parse_record_mode(bad);
      FAIL() << bad << " accepted";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(str("records='", bad, "'")), std::string::npos) << e.what();
    }
  }
}

cluster::RunSpec poisson_spec(std::int64_t count) {
  auto spec = replay_spec({}, {{"fast", 4, {}, {}}});
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(300.0), spec.workload->apps(), count);
  return spec;
}

TEST(Simulator, StreamedRunCountsEveryQueryInConstantMemory) {
  auto spec = poisson_spec(100000);
  const auto full = run(spec, "fcfs");
  spec.records = cluster::parse_record_mode("none");
  const auto small = run(spec, "fcfs");
  ASSERT_TRUE(small.streamed);
  EXPECT_EQ(small.queries.size_of(), 0u);
  const auto all = small.streamed->overall();
  EXPECT_EQ(all.queries, 100000);
  std::int64_t completed = 0;
  for (std::size_t i = 0; i < full.queries.size_of(); ++i) completed += full.queries.status[i] == 0;
  EXPECT_EQ(all.completed, completed);
  EXPECT_EQ(small.duration, full.duration);
  EXPECT_EQ(small.workers.busy, full.workers.busy);
  // Ten times the queries: the records held stay one block, only the time series grows.
  auto spec10 = poisson_spec(1000000);
  spec10.records = spec.records;
  const auto large = run(spec10, "fcfs");
  EXPECT_EQ(large.streamed->queries(), 1000000);
  EXPECT_LE(large.peak_bytes, small.peak_bytes + large.streamed->windows().size() * 2 * sizeof(cluster::StreamWindow));
}

}  // namespace
}  // namespace servelab
