// The indexed decisions (idle index, per-class heaps) choose exactly what the scans they replaced
// chose, and the tie rules of fcfs do what they promise.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "servelab/cluster/idle_index.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/sched/policy_helpers.hpp"
#include "servelab/systems/kairos/cluster_roles.hpp"
#include "sim_fixture.hpp"

namespace servelab {
namespace {

using sched::ClusterView;
using sched::ModelId;
using sched::Query;
using sched::QueryId;
using sched::WorkerId;
using testing::run;

// --- the scans the indexes replaced, kept here as the reference ---

// The per-worker-queue shape of jsq and least_finish_time, choosing by a full scan.
class ScanPerWorker : public sched::Scheduler {
 public:
  explicit ScanPerWorker(bool least_finish) : least_finish_(least_finish) {}
  std::string describe() const override { return least_finish_ ? "scan_lft" : "scan_jsq"; }
  void on_arrival(const Query& q, const ClusterView& view, sched::Actions& actions) override {
    backlog_.resize(view.num_workers(), 0);
    WorkerId best = -1;
    Nanos best_key = std::numeric_limits<Nanos>::max();
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (!sched::is_live(view, w)) continue;
      const ModelId m = sched::pick_model(view, w, q);
      if (m < 0) continue;
      const Nanos key = least_finish_ ? view.busy_until(w) + backlog_[w] + view.predicted_latency(w, m, q.size)
                                      : static_cast<Nanos>(view.worker_queue(w).size()) + (view.is_idle(w) ? 0 : 1);
      if (key < best_key) best = w, best_key = key;
    }
    if (best < 0) return actions.drop(q.id, "no worker can serve it");
    if (view.is_idle(best) && view.worker_queue(best).empty()) return start(best, q.id, view, actions);
    actions.enqueue_to_worker(best, q.id);
    backlog_[best] += latency(best, q, view);
  }
  void on_batch_done(const sched::BatchDone& d, const ClusterView& view, sched::Actions& actions) override {
    if (view.is_idle(d.worker) && !view.worker_queue(d.worker).empty()) {
      const QueryId id = view.worker_queue(d.worker).front();
      backlog_[d.worker] -= latency(d.worker, view.query(id), view);
      start(d.worker, id, view, actions);
    }
  }

 private:
  static Nanos latency(WorkerId w, const Query& q, const ClusterView& view) {
    return view.predicted_latency(w, sched::pick_model(view, w, q), q.size);
  }
  static void start(WorkerId w, QueryId id, const ClusterView& view, sched::Actions& actions) {
    actions.dispatch(w, sched::pick_model(view, w, view.query(id)), {&id, 1});
  }
  bool least_finish_;
  std::vector<Nanos> backlog_;
};

// Kairos's CLKWRK baseline as it was: a scan for the first finish meeting QoS, else the first.
class ScanClockwork : public sched::Scheduler {
 public:
  ScanClockwork(double qos_ms, bool reject_late) : qos_ms_(qos_ms), reject_late_(reject_late) {}
  std::string describe() const override { return "scan_clockwork"; }
  void on_arrival(const Query& q, const ClusterView& view, sched::Actions& actions) override {
    backlog_.resize(view.num_workers(), 0);
    const Nanos target = q.arrival + kairos::qos_target(qos_ms_, q);
    WorkerId best = -1, best_late = -1;
    Nanos best_finish = sched::kNever, best_late_finish = sched::kNever;
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (!sched::is_live(view, w)) continue;
      const ModelId m = sched::pick_model(view, w, q);
      if (m < 0) continue;
      const Nanos finish =
          std::max(view.now(), view.busy_until(w)) + backlog_[w] + view.predicted_latency(w, m, q.size);
      if (finish <= target && finish < best_finish) best = w, best_finish = finish;
      if (finish < best_late_finish) best_late = w, best_late_finish = finish;
    }
    if (best_late < 0) return actions.drop(q.id, "no worker can serve it");
    if (best < 0) {
      if (reject_late_) return actions.drop(q.id, "would miss its QoS on every worker");
      best = best_late;
    }
    if (view.is_idle(best) && view.worker_queue(best).empty()) {
      actions.dispatch(best, sched::pick_model(view, best, q), {&q.id, 1});
    } else {
      actions.enqueue_to_worker(best, q.id);
      backlog_[best] += view.predicted_latency(best, sched::pick_model(view, best, q), q.size);
    }
  }
  void on_batch_done(const sched::BatchDone& d, const ClusterView& view, sched::Actions& actions) override {
    if (!view.is_idle(d.worker) || view.worker_queue(d.worker).empty()) return;
    const Query q = view.query(view.worker_queue(d.worker).front());
    const ModelId m = sched::pick_model(view, d.worker, q);
    backlog_[d.worker] -= view.predicted_latency(d.worker, m, q.size);
    actions.dispatch(d.worker, m, {&q.id, 1});
  }

 private:
  double qos_ms_;
  bool reject_late_;
  std::vector<Nanos> backlog_;
};

// fcfs(prefer=...) as it was: a scan of the idle workers by (preference, id).
class ScanFcfs : public sched::Scheduler {
 public:
  explicit ScanFcfs(std::vector<std::string> prefer) : prefer_(std::move(prefer)) {}
  std::string describe() const override { return "scan_fcfs"; }
  void on_arrival(const Query& q, const ClusterView& view, sched::Actions& actions) override {
    if (view.central_queue().empty()) serve(q, view, actions);
  }
  void on_batch_done(const sched::BatchDone&, const ClusterView& view, sched::Actions& actions) override {
    while (!view.central_queue().empty() && !view.idle_workers().empty()) {
      if (!serve(view.query(view.central_queue().front()), view, actions)) break;
    }
  }

 private:
  bool serve(const Query& q, const ClusterView& view, sched::Actions& actions) {
    WorkerId best = -1;
    ModelId model = -1;
    std::int64_t best_rank = std::numeric_limits<std::int64_t>::max();
    for (const WorkerId w : view.idle_workers()) {
      const ModelId m = sched::pick_model(view, w, q);
      const std::int64_t r = rank(view, w);
      if (m >= 0 && r < best_rank) best = w, model = m, best_rank = r;
    }
    if (best < 0) {
      for (WorkerId w = 0; w < view.num_workers(); ++w) {
        if (sched::pick_model(view, w, q) >= 0) return false;
      }
      actions.drop(q.id, "no worker can serve it");
      return true;
    }
    actions.dispatch(best, model, {&q.id, 1});
    return true;
  }
  std::int64_t rank(const ClusterView& view, WorkerId w) const {
    const auto& name = view.profile().hardware()[view.hardware(w)];
    return (std::find(prefer_.begin(), prefer_.end(), name) - prefer_.begin()) * (std::int64_t{1} << 32) + w;
  }
  std::vector<std::string> prefer_;
};

// Three hardware types with different model sets and accuracies, sampled service, a load that
// builds queues: ties, model mismatches and heterogeneous latencies all occur.
cluster::RunSpec mixed_spec(std::int32_t per_group, double rate) {
  auto p = std::make_shared<profile::Profile>();
  p->set_price("fast", 3.6);
  p->set_price("slow", 0.36);
  p->set_price("mid", 1.0);
  for (std::int64_t b : {1, 8}) {
    const double x = static_cast<double>(b);
    p->set_latency("fast", "big", b, profile::LatencyDistribution::from_samples({(8 + x) / 1e3, (12 + x) / 1e3}));
    p->set_latency("fast", "small", b, profile::LatencyDistribution::from_samples({(4 + x) / 1e3}));
    p->set_latency("slow", "small", b, profile::LatencyDistribution::from_samples({(20 + 3 * x) / 1e3}));
    p->set_latency("mid", "big", b,
                   profile::LatencyDistribution::from_samples({(15 + 2 * x) / 1e3, (17 + 2 * x) / 1e3}));
  }
  p->set_accuracy("big", 0.9);
  p->set_accuracy("small", 0.7);
  std::vector<workload::Application> apps = {
      {"any", 2.0, millis_to_nanos(200), std::make_shared<workload::UniformSize>(1, 8), 0.0},
      {"picky", 1.0, millis_to_nanos(200), std::make_shared<workload::UniformSize>(1, 4), 0.85}};
  cluster::RunSpec spec;
  spec.profile = p;
  spec.workers = {{"slow", per_group, {}, {}},
                  {"fast", per_group, {"small"}, {}},
                  {"mid", per_group, {}, {}},
                  {"fast", per_group, {"big", "small"}, {}}};
  spec.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(rate), apps, 3000);
  spec.seed = 11;
  return spec;
}

void expect_same_records(const cluster::RunResult& a, const cluster::RunResult& b) {
  EXPECT_EQ(a.queries.worker, b.queries.worker);
  EXPECT_EQ(a.queries.model, b.queries.model);
  EXPECT_EQ(a.queries.start, b.queries.start);
  EXPECT_EQ(a.queries.finish, b.queries.finish);
  EXPECT_EQ(a.queries.status, b.queries.status);
}

TEST(IndexedPolicies, FcfsJsqLeastFinishTimeAndClockworkChooseWhatTheScanChose) {
  for (const double rate : {200.0, 900.0}) {
    for (const std::int32_t per_group : {1, 5}) {
      const auto spec = mixed_spec(per_group, rate * per_group);
      ScanPerWorker scan_jsq(false), scan_lft(true);
      expect_same_records(run(spec, "jsq"), sim::simulate(spec, scan_jsq));
      expect_same_records(run(spec, "least_finish_time"), sim::simulate(spec, scan_lft));
      for (const bool reject : {false, true}) {
        ScanClockwork scan_clockwork(60, reject);
        expect_same_records(run(spec, reject ? "clockwork(qos_ms=60, reject_late=True)" : "clockwork(qos_ms=60)"),
                            sim::simulate(spec, scan_clockwork));
      }
      ScanFcfs scan_fcfs({}), scan_fcfs_prefer({"mid", "slow"});
      expect_same_records(run(spec, "fcfs"), sim::simulate(spec, scan_fcfs));
      expect_same_records(run(spec, "fcfs(prefer='mid, slow')"), sim::simulate(spec, scan_fcfs_prefer));
    }
  }
}

// --- the idle index against a plain set ---

TEST(IdleIndex, AgreesWithAnOrderedSetUnderRandomChanges) {
  for (const std::int32_t n : {5, 300, 5000}) {
    cluster::IdleIndex index;
    std::set<WorkerId> all;
    std::map<sched::HardwareId, std::set<WorkerId>> by_hw;
    std::vector<std::uint64_t> since(n, 0);
    for (WorkerId w = 0; w < n; ++w) index.add_worker(w, w % 3);
    Rng rng(3, "test");
    for (int step = 0; step < 20000; ++step) {
      const auto w = static_cast<WorkerId>(rng.engine()() % n);
      if (rng.uniform() < 0.5) {
        index.set_idle(w);
        if (all.insert(w).second) since[w] = step + 1;
        by_hw[w % 3].insert(w);
      } else {
        index.set_not_idle(w);
        all.erase(w);
        by_hw[w % 3].erase(w);
      }
      const auto from = static_cast<WorkerId>(rng.engine()() % n);
      const auto it = all.lower_bound(from);
      ASSERT_EQ(index.lowest_from(cluster::IdleIndex::kAll, from), it == all.end() ? -1 : *it);
      const auto& hw = by_hw[from % 3];
      const auto jt = hw.lower_bound(from);
      ASSERT_EQ(index.lowest_from(from % 3, from), jt == hw.end() ? -1 : *jt);
      ASSERT_EQ(index.members(cluster::IdleIndex::kAll).size(), all.size());
      if (n > 300) continue;  // the reference below is a scan
      WorkerId longest = -1;
      for (const WorkerId x : all) longest = (longest < 0 || since[x] < since[longest]) ? x : longest;
      ASSERT_EQ(index.longest_idle(cluster::IdleIndex::kAll), longest);
    }
  }
}

TEST(IdleIndex, ASecondHardwareTypeSplitsTheGroupsKeepingTheIdleOrder) {
  cluster::IdleIndex index;
  for (WorkerId w = 0; w < 4; ++w) index.add_worker(w, 0);
  for (const WorkerId w : {2, 0, 3}) index.set_idle(w);
  EXPECT_EQ(index.lowest_from(0, 1), 2);  // one type: its group is everyone's
  index.add_worker(4, 1);
  index.set_idle(4);
  EXPECT_EQ(index.members(0).size(), 3u);
  EXPECT_EQ(index.members(1).size(), 1u);
  EXPECT_EQ(index.lowest_from(0, 3), 3);
  EXPECT_EQ(index.lowest_from(1, 0), 4);
  EXPECT_EQ(index.longest_idle(0), 2);
  index.set_not_idle(2);
  EXPECT_EQ(index.longest_idle(0), 0);
  EXPECT_EQ(index.longest_idle(cluster::IdleIndex::kAll), 0);
}

// The view's lowest_idle() (any hardware: the bitset the cluster state hands its base class; one
// type: the state's index) against a scan of idle_workers(), on every arrival of a run that adds
// workers of both hardware types part way through (the index's groups move, the base's pointer
// must follow them).
class CheckLowestIdle : public sched::Scheduler {
 public:
  std::string describe() const override { return "check_lowest_idle"; }
  void on_arrival(const Query& q, const ClusterView& view, sched::Actions& actions) override {
    if (++arrivals_ == 50 || arrivals_ == 120) {
      const ModelId m = 0;
      actions.add_worker(arrivals_ == 50 ? "slow" : "fast", {&m, 1}, millis_to_nanos(5));
    }
    for (WorkerId from = -1; from <= view.num_workers(); ++from) {
      for (sched::HardwareId hw = ClusterView::kAnyHardware; hw < 2; ++hw) {
        WorkerId scan = -1;
        for (const WorkerId w : view.idle_workers()) {
          const bool in = hw == ClusterView::kAnyHardware || view.hardware(w) == hw;
          if (from >= 0 && w >= from && in && (scan < 0 || w < scan)) scan = w;
        }
        ASSERT_EQ(view.lowest_idle(hw, from), scan) << "from=" << from << " hardware=" << hw;
        ++checks;
      }
    }
    const WorkerId w = view.lowest_idle(ClusterView::kAnyHardware, 0);
    if (w >= 0) actions.dispatch(w, 0, {&q.id, 1});
  }
  std::int64_t checks = 0;

 private:
  std::int64_t arrivals_ = 0;
};

TEST(IdleIndex, TheViewsLowestIdleFollowsTheIndexAsWorkersAreAdded) {
  auto spec = testing::replay_spec({}, {{"fast", 3, {}, {}}});
  workload::Application app{"a", 1.0, millis_to_nanos(1000), nullptr, 0.0};
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(150.0), std::vector{app}, 400);
  CheckLowestIdle policy;
  const auto result = sim::simulate(spec, policy);
  EXPECT_EQ(result.workers.hardware.size(), 5u);
  EXPECT_GT(policy.checks, 400 * 5 * 3);
  // Busy and idle both happen: some queries find every worker busy and are cut off unserved.
  const auto served = std::count(result.queries.status.begin(), result.queries.status.end(),
                                 static_cast<std::int8_t>(cluster::QueryStatus::Completed));
  EXPECT_GT(served, 100);
  EXPECT_LT(served, 400);
}

// The view's worker_queue_length() (the lengths the cluster state hands its base class) against
// worker_queue().size(), for every worker after every hook of a run whose queries join worker
// queues, move to the central queue, are dropped from queues and served from them, while a worker
// is added and one with a queue is removed.
class CheckQueueLengths : public sched::Scheduler {
 public:
  std::string describe() const override { return "check_queue_lengths"; }
  void on_arrival(const Query& q, const ClusterView& view, sched::Actions& actions) override {
    check(view);
    ++arrivals_;
    if (arrivals_ == 60) {
      const ModelId m = 0;
      actions.add_worker("fast", {&m, 1}, millis_to_nanos(5));
    }
    if (arrivals_ == 150) actions.remove_worker(1);
    const auto w = static_cast<WorkerId>(pick_() % static_cast<std::uint64_t>(view.num_workers()));
    if (view.status(w) != sched::WorkerStatus::Stopped && (w != 1 || arrivals_ < 150)) {  // 1: removed
      actions.enqueue_to_worker(w, q.id);
      check(view);
    }
    // Now and then a queued query moves to the central queue or is dropped.
    const auto v = static_cast<WorkerId>(pick_() % static_cast<std::uint64_t>(view.num_workers()));
    if (!view.worker_queue(v).empty() && pick_() % 4 == 0) {
      const QueryId moved = view.worker_queue(v).back();
      if (pick_() % 2 == 0) {
        actions.enqueue(moved);
      } else {
        actions.drop(moved, "dropped by the test");
      }
      check(view);
    }
    serve_idle(view, actions);
  }
  void on_batch_done(const sched::BatchDone&, const ClusterView& view, sched::Actions& actions) override {
    check(view);
    serve_idle(view, actions);
  }
  void on_worker_ready(WorkerId, const ClusterView& view, sched::Actions& actions) override {
    check(view);
    serve_idle(view, actions);
  }
  std::int64_t checks = 0, nonzero = 0;

 private:
  void serve_idle(const ClusterView& view, sched::Actions& actions) {
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      if (view.is_idle(w) && view.worker_queue_length(w) > 0) {
        const QueryId id = view.worker_queue(w).front();
        actions.dispatch(w, 0, {&id, 1});
        check(view);
      }
    }
  }
  void check(const ClusterView& view) {
    for (WorkerId w = 0; w < view.num_workers(); ++w) {
      const auto length = static_cast<std::int64_t>(view.worker_queue(w).size());
      ASSERT_EQ(view.worker_queue_length(w), length) << "worker " << w;
      ++checks;
      nonzero += length > 0;
    }
  }
  std::int64_t arrivals_ = 0;
  std::mt19937_64 pick_{3};
};

TEST(QueueLengths, TheViewsWorkerQueueLengthFollowsEveryQueueChange) {
  auto spec = testing::replay_spec({}, {{"fast", 3, {}, {}}});
  workload::Application app{"a", 1.0, millis_to_nanos(1000), nullptr, 0.0};
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(400.0), std::vector{app}, 400);
  CheckQueueLengths policy;
  const auto result = sim::simulate(spec, policy);
  EXPECT_EQ(result.workers.hardware.size(), 4u);
  EXPECT_GT(policy.checks, 400 * 3);
  EXPECT_GT(policy.nonzero, 400);  // queues do build up
  const auto dropped = std::count(result.queries.status.begin(), result.queries.status.end(),
                                  static_cast<std::int8_t>(cluster::QueryStatus::Dropped));
  EXPECT_GT(dropped, 10);
}

// --- fcfs tie rules ---

std::vector<std::int64_t> queries_per_worker(const cluster::RunResult& r, std::size_t workers) {
  std::vector<std::int64_t> n(workers, 0);
  for (const auto w : r.queries.worker) n[w] += 1;
  return n;
}

cluster::RunSpec light_load(std::int32_t workers) {
  auto spec = testing::replay_spec({}, {{"fast", workers, {}, {}}});
  workload::Application app{"a", 1.0, millis_to_nanos(1000), nullptr, 0.0};
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(40.0), std::vector{app}, 2000);
  return spec;
}

TEST(FcfsTieRule, LowestIdLoadsLowIdsAndTheOthersSpreadTheWork) {
  const auto spec = light_load(10);  // ~45% utilisation of one worker: mostly one idle choice
  const auto lowest = queries_per_worker(run(spec, "fcfs"), 10);
  EXPECT_GT(lowest[0], 10 * lowest[9]);
  for (const char* rule : {"fcfs(tie='round_robin')", "fcfs(tie='lru')", "fcfs(tie='random')"}) {
    const auto n = queries_per_worker(run(spec, rule), 10);
    const auto [lo, hi] = std::minmax_element(n.begin(), n.end());
    EXPECT_GT(*lo, 100) << rule;
    EXPECT_LT(*hi, 300) << rule;
  }
  // Round robin with one query at a time visits the workers in order.
  const auto rr = run(testing::replay_spec({0, 1, 2, 3, 4}, {{"fast", 3, {}, {}}}), "fcfs(tie='round_robin')");
  EXPECT_EQ(rr.queries.worker, (std::vector<std::int32_t>{0, 1, 2, 0, 1}));
  // Least recently used: the worker idle the longest, here the one that finished first.
  const auto lru = run(testing::replay_spec({0, 0, 0.1, 0.2}, {{"fast", 3, {}, {}}}), "fcfs(tie='lru')");
  EXPECT_EQ(lru.queries.worker, (std::vector<std::int32_t>{0, 1, 2, 0}));
}

TEST(FcfsTieRule, RandomIsSeededAndLatencyDoesNotDependOnTheRule) {
  const auto spec = light_load(10);
  const auto a = run(spec, "fcfs(tie='random')"), b = run(spec, "fcfs(tie='random')");
  EXPECT_EQ(a.queries.worker, b.queries.worker);
  // Identical workers, fixed service: the rule moves queries between workers, never in time.
  EXPECT_EQ(a.queries.finish, run(spec, "fcfs").queries.finish);
}

TEST(FcfsTieRule, AppliesWithinAPreferenceClassAndBadNamesAreValueErrors) {
  const auto r = run(testing::replay_spec({0, 1, 2}, {{"slow", 2, {}, {}}, {"fast", 2, {}, {}}}),
                     "fcfs(prefer='fast', tie='round_robin')");
  EXPECT_EQ(r.queries.worker, (std::vector<std::int32_t>{2, 3, 2}));
  EXPECT_THROW(run(testing::replay_spec({0}, {{"fast", 1, {}, {}}}), "fcfs(tie='first')"), ValueError);
}

}  // namespace
}  // namespace servelab
