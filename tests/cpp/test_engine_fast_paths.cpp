// The simulator's fast paths give what the general ones give: the longest-idle lists built on
// first use, the arrival times drawn ahead in blocks, the one-query dispatch, the worker-id check
// every view call and action makes, the cluster state's one-call model choice, and record rows
// appended unwritten.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "servelab/cluster/idle_index.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/query.hpp"
#include "sim_fixture.hpp"

namespace servelab {
namespace {

using sched::WorkerId;

// The same random status changes on two indexes, `eager` asked for its longest idle worker after
// each change and `lazy` only from step `first_ask` on; once both answer they must agree, also
// after a second hardware type splits the groups.
void drive(std::int32_t workers, int first_ask, bool split_midway) {
  cluster::IdleIndex eager, lazy;
  for (WorkerId w = 0; w < workers; ++w) {
    eager.add_worker(w, 0);
    lazy.add_worker(w, 0);
  }
  Rng rng(5, "test");
  for (int step = 0; step < 4000; ++step) {
    if (split_midway && step == 2000) {
      for (cluster::IdleIndex* index : {&eager, &lazy}) {
        for (WorkerId w = workers; w < workers + 20; ++w) index->add_worker(w, 1);
      }
      workers += 20;
    }
    const auto w = static_cast<WorkerId>(rng.engine()() % static_cast<std::uint64_t>(workers));
    const bool idle = rng.uniform() < 0.5;
    for (cluster::IdleIndex* index : {&eager, &lazy}) idle ? index->set_idle(w) : index->set_not_idle(w);
    const auto all = cluster::IdleIndex::kAll;
    const WorkerId expected = eager.longest_idle(all);
    if (step < first_ask) continue;
    ASSERT_EQ(lazy.longest_idle(all), expected) << "step " << step;
    if (split_midway && step >= 2000) {
      ASSERT_EQ(lazy.longest_idle(0), eager.longest_idle(0)) << "step " << step;
      ASSERT_EQ(lazy.longest_idle(1), eager.longest_idle(1)) << "step " << step;
    }
    const auto a = eager.members(all), b = lazy.members(all);
    ASSERT_EQ(std::vector<WorkerId>(a.begin(), a.end()), std::vector<WorkerId>(b.begin(), b.end()));
  }
}

TEST(IdleIndexLists, BuiltOnFirstUseTheyMatchListsKeptFromTheStart) {
  drive(40, 1500, false);
  drive(40, 3000, true);  // first asked after the split
  drive(40, 1000, true);  // asked before the split, kept through it
  drive(300, 3999, false);
}

TEST(IdleIndexLists, SplittingBeforeAnyAskKeepsEachTypesIdleOrder) {
  cluster::IdleIndex index;
  for (WorkerId w = 0; w < 4; ++w) index.add_worker(w, 0);
  for (const WorkerId w : {3, 1, 2}) index.set_idle(w);
  index.add_worker(4, 1);  // splits: hardware 0's dense list follows the idle order 3, 1, 2
  const auto members = index.members(0);
  EXPECT_EQ(std::vector<WorkerId>(members.begin(), members.end()), (std::vector<WorkerId>{3, 1, 2}));
  EXPECT_EQ(index.longest_idle(0), 3);
  index.set_not_idle(3);
  EXPECT_EQ(index.longest_idle(0), 1);
}

// Poisson at 1e-9/s: a mean gap of about 32 years, so only a few arrivals fit in the ~292 years
// of int64 nanoseconds. Times drawn ahead must not report the end of the range early.
// Calls the view and the actions with worker ids out of range at its first arrival and keeps
// each error's message, then serves every query on worker 0.
class BadWorkerIds final : public sched::Scheduler {
 public:
  std::string describe() const override { return "bad_worker_ids"; }
  void on_arrival(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) override {
    if (messages.empty()) {
      const WorkerId n = view.num_workers();
      for (const WorkerId bad : {WorkerId{-1}, std::numeric_limits<WorkerId>::min(), n}) {
        const auto keep = [&](auto&& call) {
          try {
            call();
            messages.push_back("no error");
          } catch (const ValueError& e) {
            messages.push_back(e.what());
          }
        };
        keep([&] { (void)view.status(bad); });
        keep([&] { (void)view.models(bad); });
        keep([&] { (void)view.max_batch(bad, 0); });
        keep([&] { (void)view.model_for(bad, query); });
        const sched::QueryId id = query.id;
        keep([&] { actions.dispatch(bad, 0, {&id, 1}); });  // the one-query path, then the checks
      }
    }
    if (view.status(0) == sched::WorkerStatus::Idle) {
      const sched::QueryId id = query.id;
      actions.dispatch(0, 0, {&id, 1});
    } else {
      actions.enqueue_to_worker(0, query.id);
    }
  }
  void on_batch_done(const sched::BatchDone& done, const sched::ClusterView& view, sched::Actions& actions) override {
    const auto& queue = view.worker_queue(done.worker);
    if (queue.empty()) return;
    const sched::QueryId id = queue.front();
    actions.dispatch(done.worker, 0, {&id, 1});
  }
  std::vector<std::string> messages;
};

TEST(WorkerIdCheck, NegativeAndTooLargeIdsRaiseNamingTheIdAndNothingChanges) {
  const auto spec = testing::replay_spec({0.0, 0.001, 0.002}, {{"fast", 2, {}, {}}});
  BadWorkerIds policy;
  const auto r = sim::simulate(spec, policy);
  ASSERT_EQ(policy.messages.size(), 15u);
  const std::vector<std::string> ids = {"-1", std::to_string(std::numeric_limits<WorkerId>::min()), "2"};
  for (std::size_t i = 0; i < policy.messages.size(); ++i) {
    const std::string expected = "worker=" + ids[i / 5] + " is not a worker id (0..1)";
    EXPECT_NE(policy.messages[i].find(expected), std::string::npos) << i << ": " << policy.messages[i];
  }
  // The failed calls left the run as it was: every query served on worker 0, in order.
  ASSERT_EQ(r.queries.size_of(), 3u);
  for (std::size_t q = 0; q < 3; ++q) {
    EXPECT_EQ(r.queries.status[q], 0) << q;
    EXPECT_EQ(r.queries.worker[q], 0) << q;
  }
  EXPECT_EQ(r.workers.batches[1], 0);
}

// At the start of the run, asks the cluster state's model_for, the base class's default and the
// models() and max_batch() calls it replaces, for every worker and each query of `probes`.
class ModelChoiceProbe final : public sched::Scheduler {
 public:
  std::string describe() const override { return "model_choice_probe"; }
  void on_start(const sched::ClusterView& view, sched::Actions&) override {
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      for (const sched::Query& q : probes) {
        sched::ModelId two_calls = -1;
        for (const sched::ModelId m : view.models(w)) {
          const double acc = view.profile().accuracy(m);
          if (q.accuracy_floor > 0 && (std::isnan(acc) || acc < q.accuracy_floor)) continue;
          if (q.size <= view.max_batch(w, m)) {
            two_calls = m;
            break;
          }
        }
        answers.push_back({two_calls, view.model_for(w, q), view.sched::ClusterView::model_for_of(w, q)});
      }
    }
  }
  void on_arrival(const sched::Query& query, const sched::ClusterView&, sched::Actions& actions) override {
    actions.drop(query.id, "probe only");
  }
  std::vector<sched::Query> probes;
  std::vector<std::array<sched::ModelId, 3>> answers;  // two calls, model_for, the default
};

TEST(ModelChoice, OneViewCallAnswersLikeModelsAndMaxBatch) {
  auto spec = testing::replay_spec({0.0}, {});
  auto profile = std::make_shared<profile::Profile>(*spec.profile);  // "m": accuracy 0.8, batches to 100
  for (const std::int64_t b : {1, 4}) {
    profile->set_latency("fast", "small", b, profile::LatencyDistribution::from_samples({0.002}));
  }
  profile->set_accuracy("small", 0.95);
  profile->set_latency("slow", "unrated", 1, profile::LatencyDistribution::from_samples({0.001}));  // no accuracy
  spec.profile = profile;
  spec.workers = {{"fast", 1, {"small", "m"}}, {"fast", 1, {"small"}}, {"slow", 1, {"unrated"}}, {"slow", 1, {"m"}}};
  ModelChoiceProbe policy;
  for (const std::int32_t size : {1, 4, 5, 100, 101}) {
    for (const double floor : {0.0, 0.5, 0.8, 0.9, 0.99}) {
      sched::Query q;
      q.size = size;
      q.accuracy_floor = workload::stored_accuracy_floor(floor);  // as the workload stores it
      policy.probes.push_back(q);
    }
  }
  sim::simulate(spec, policy);
  ASSERT_EQ(policy.answers.size(), 4u * policy.probes.size());
  std::vector<sched::ModelId> chosen;
  for (const auto& [two_calls, one_call, fallback] : policy.answers) {
    EXPECT_EQ(one_call, two_calls);
    EXPECT_EQ(fallback, two_calls);
    chosen.push_back(one_call);
  }
  const sched::ModelId m = profile->model_index("m"), small = profile->model_index("small"),
                       unrated = profile->model_index("unrated");
  const auto answer = [&](WorkerId w, std::size_t size_i, std::size_t floor_i) {
    return chosen[static_cast<std::size_t>(w) * policy.probes.size() + size_i * 5 + floor_i];
  };
  EXPECT_EQ(answer(0, 0, 0), small);  // the first loaded model that can
  EXPECT_EQ(answer(0, 2, 0), m);      // 5 items: beyond "small"'s profile
  EXPECT_EQ(answer(0, 2, 3), -1);     // 5 items at a 0.9 floor: neither
  EXPECT_EQ(answer(1, 2, 0), -1);     // a worker with no model able to serve
  EXPECT_EQ(answer(2, 0, 0), unrated);
  EXPECT_EQ(answer(2, 0, 1), -1);  // no known accuracy meets a floor above 0
  EXPECT_EQ(answer(3, 3, 2), m);   // the floor met exactly, the profile's largest batch
  EXPECT_EQ(answer(3, 4, 0), -1);
}

// Loads and unloads during a run: the usual model choice follows the worker's first loaded model.
class LoadThenProbe final : public sched::Scheduler {
 public:
  std::string describe() const override { return "load_then_probe"; }
  void on_start(const sched::ClusterView& view, sched::Actions& actions) override {
    small = view.profile().model_index("small");
    actions.unload_model(0, small);                            // worker 0: {small, m} -> {m}
    actions.unload_model(1, view.profile().model_index("m"));  // worker 1: {m} -> {}
    actions.load_model(1, small);                              // -> {small} once loaded
    probe(view);
  }
  void on_arrival(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) override {
    probe(view);
    actions.drop(query.id, "probe only");
  }
  void probe(const sched::ClusterView& view) {
    sched::Query q;
    q.size = 1;
    answers.push_back({view.model_for(0, q), view.model_for(1, q)});
  }
  sched::ModelId small = -1;
  std::vector<std::array<sched::ModelId, 2>> answers;  // workers 0 and 1
};

TEST(ModelChoice, FollowsLoadsAndUnloads) {
  auto spec = testing::replay_spec({5.0}, {});
  auto profile = std::make_shared<profile::Profile>(*spec.profile);
  profile->set_latency("fast", "small", 1, profile::LatencyDistribution::from_samples({0.002}));
  spec.profile = profile;
  spec.workers = {{"fast", 1, {"small", "m"}}, {"fast", 1, {"m"}}};
  LoadThenProbe policy;
  sim::simulate(spec, policy);
  const sched::ModelId m = profile->model_index("m");
  ASSERT_EQ(policy.answers.size(), 2u);
  EXPECT_EQ(policy.answers[0][0], m);
  EXPECT_EQ(policy.answers[0][1], -1);  // no model: "small" still loading
  EXPECT_EQ(policy.answers[1][0], m);
  EXPECT_EQ(policy.answers[1][1], policy.small);
}

// Record rows are appended unwritten: every cell of a completed or dropped query must be
// written when it ends. The first run leaves its freed columns (nonzero cells) for the second's
// rows to reuse, so a cell left unwritten would show.
TEST(RecordRows, EveryCellOfAnEndedQueryIsWritten) {
  std::vector<double> busy(3000, 0.0);
  for (std::size_t i = 0; i < busy.size(); ++i) busy[i] = 0.011 * static_cast<double>(i);
  const auto first = testing::run(testing::replay_spec(busy, {{"fast", 1, {}, {}}}), "fcfs");
  ASSERT_EQ(first.queries.status[0], 0);
  // One worker, at most one query waiting: of 5 arrivals at once 1 runs, 1 waits, 3 are dropped.
  const auto r = testing::run(testing::replay_spec({0, 0, 0, 0, 0}, {{"fast", 1, {}, {}}}), "fcfs(max_queue=1)");
  const auto& q = r.queries;
  ASSERT_EQ(q.size_of(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    if (i < 2) {
      EXPECT_EQ(q.status[i], 0) << i;
      EXPECT_EQ(q.drop_reason[i], -1) << i;
      EXPECT_EQ(q.worker[i], 0) << i;
      EXPECT_EQ(q.model[i], 0) << i;
      EXPECT_EQ(q.batch_items[i], 1) << i;
      EXPECT_EQ(q.batch_queries[i], 1) << i;
      EXPECT_FLOAT_EQ(q.accuracy[i], 0.8f) << i;
      EXPECT_GT(q.cost[i], 0.f) << i;
      EXPECT_EQ(q.finish[i], millis_to_nanos(11.0 * static_cast<double>(i + 1))) << i;
    } else {
      EXPECT_EQ(q.status[i], 1) << i;
      EXPECT_EQ(r.drop_reasons.at(static_cast<std::size_t>(q.drop_reason[i])), "queue full (max_queue)") << i;
      EXPECT_EQ(q.dispatch[i], -1) << i;
      EXPECT_EQ(q.start[i], -1) << i;
      EXPECT_EQ(q.finish[i], 0) << i;
      EXPECT_EQ(q.worker[i], -1) << i;
      EXPECT_EQ(q.model[i], -1) << i;
      EXPECT_EQ(q.batch_items[i], 0) << i;
      EXPECT_EQ(q.batch_queries[i], 0) << i;
      EXPECT_TRUE(std::isnan(q.accuracy[i])) << i;
      EXPECT_EQ(q.cost[i], 0.f) << i;
    }
  }
}

TEST(ArrivalBlocks, TheEndOfTheTimeRangeIsReportedAtTheArrivalThatCrossesIt) {
  const workload::Poisson p(1e-9);
  auto cursor = p.start(Rng(1, workload::kArrivalStream));
  std::vector<Nanos> times;
  for (;;) {
    try {
      times.push_back(*cursor->next());
    } catch (const RuntimeError&) {
      break;
    }
    ASSERT_LT(times.size(), 1000u);
  }
  ASSERT_GT(times.size(), 1u);
  const auto n = static_cast<std::int64_t>(times.size());
  EXPECT_EQ(workload::generate_arrivals(p, 1, n), times);
  EXPECT_THROW(workload::generate_arrivals(p, 1, n + 1), RuntimeError);
  EXPECT_THROW(cursor->next(), RuntimeError);  // and again, once it has ended
}

TEST(ArrivalBlocks, BlocksGiveTheSameTimesAcrossTheirBoundaries) {
  const workload::Poisson p(1000.0);
  const auto bulk = workload::generate_arrivals(p, 3, 1000);
  for (const std::int64_t n : {1, 127, 128, 129, 257}) {
    EXPECT_EQ(workload::generate_arrivals(p, 3, n), std::vector<Nanos>(bulk.begin(), bulk.begin() + n));
  }
}

}  // namespace
}  // namespace servelab
