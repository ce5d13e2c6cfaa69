// The simulator's fast paths give what the general ones give: the longest-idle lists built on
// first use, the arrival times drawn ahead in blocks, the one-query dispatch, and the worker-id
// check every view call and action makes.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "servelab/cluster/idle_index.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/workload/arrivals.hpp"
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
  ASSERT_EQ(policy.messages.size(), 12u);
  const std::vector<std::string> ids = {"-1", std::to_string(std::numeric_limits<WorkerId>::min()), "2"};
  for (std::size_t i = 0; i < policy.messages.size(); ++i) {
    const std::string expected = "worker=" + ids[i / 4] + " is not a worker id (0..1)";
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
