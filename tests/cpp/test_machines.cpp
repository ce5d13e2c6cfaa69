// Machines with co-located instances and interference over time (cluster/interference.hpp):
// progress-rate re-timing checked against an independent event-by-event computation, work
// conservation, determinism, partitions changing mid-batch, where a run left waiting ends, and
// the errors of bad machines and slowdowns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_state.hpp"
#include "servelab/cluster/interference.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "sim_fixture.hpp"

namespace servelab {
namespace {

using testing::replay_spec;
using testing::run;

// Arrivals of a Poisson process at `rate` per second (seeded), sorted.
std::vector<double> poisson_times(int n, double rate, std::uint64_t seed) {
  Rng rng(seed, "test/arrivals");
  std::vector<double> t;
  double now = 0;
  for (int i = 0; i < n; ++i) {
    now += -std::log(1 - rng.uniform()) / rate;
    t.push_back(now);
  }
  return t;
}

// `instances` instances of "fast" on one machine.
cluster::RunSpec one_machine(std::vector<double> times, int instances, const char* interference) {
  auto spec = replay_spec(std::move(times), {{"fast", instances, {}, {}, "box"}});
  spec.machines = {{"box", 1, "", {}}};
  if (interference) spec.interference = catalogue::interference_models().make(interference);
  return spec;
}

struct Finish {
  double start_ns, finish_ns;
  int server;
};

// FCFS on `servers` instances sharing one machine, each running batch slowed by
// 1 + alpha x (other running batches), computed event by event in doubles: the next event is
// the earliest of the next arrival and each running batch's end at the current rates
// (completions before arrivals at equal times, the lowest idle server first).
std::vector<Finish> reference_fcfs(const std::vector<double>& arrivals_s, int servers, double service_ns,
                                   double alpha) {
  std::vector<Finish> out(arrivals_s.size());
  std::vector<double> left(servers, 0);  // work alone still to do, ns
  std::vector<long> job(servers, -1);
  std::deque<long> queue;
  double now = 0;
  std::size_t next = 0;
  auto running = [&] { return std::count_if(job.begin(), job.end(), [](long j) { return j >= 0; }); };
  auto start = [&](int s, long q) {
    job[s] = q;
    left[s] = service_ns;
    out[q].start_ns = now;
    out[q].server = s;
  };
  while (next < arrivals_s.size() || running() > 0) {
    const double slowdown = 1 + alpha * static_cast<double>(std::max<long>(0, running() - 1));
    int first = -1;
    double first_end = INFINITY;
    for (int s = 0; s < servers; ++s) {
      if (job[s] >= 0 && now + left[s] * slowdown < first_end) {
        first = s;
        first_end = now + left[s] * slowdown;
      }
    }
    const double arrival = next < arrivals_s.size() ? arrivals_s[next] * 1e9 : INFINITY;
    const double t = std::min(first_end, arrival);
    for (int s = 0; s < servers; ++s) {
      if (job[s] >= 0) left[s] -= (t - now) / slowdown;
    }
    now = t;
    if (first_end <= arrival) {
      out[job[first]].finish_ns = now;
      job[first] = -1;
      if (!queue.empty()) {
        start(first, queue.front());
        queue.pop_front();
      }
    } else {
      const long q = static_cast<long>(next++);
      int idle = -1;
      for (int s = 0; s < servers && idle < 0; ++s) idle = job[s] < 0 ? s : -1;
      if (idle >= 0 && queue.empty()) {
        start(idle, q);
      } else {
        queue.push_back(q);
      }
    }
  }
  return out;
}

TEST(Machines, LinearSlowdownMatchesAnEventByEventComputation) {
  for (const int instances : {2, 3}) {
    const auto times = poisson_times(2000, 120.0 * instances, 11 + instances);  // 11 ms alone: busy
    const auto r = run(one_machine(times, instances, "per_corunner(slowdown=0.5)"), "fcfs");
    const auto want = reference_fcfs(times, instances, 11e6, 0.5);
    ASSERT_EQ(r.queries.size_of(), times.size());
    int slowed = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
      ASSERT_EQ(r.queries.worker[i], want[i].server) << "query " << i;
      // Each re-timing rounds the end to the nearest ns.
      ASSERT_NEAR(static_cast<double>(r.queries.start[i]), want[i].start_ns, 64) << "query " << i;
      ASSERT_NEAR(static_cast<double>(r.queries.finish[i]), want[i].finish_ns, 64) << "query " << i;
      slowed += r.queries.finish[i] - r.queries.start[i] > millis_to_nanos(11) + 1000;
    }
    EXPECT_GT(slowed, 500) << "the load must make co-runners common";
  }
}

// The work each batch did: the integral of 1 / slowdown over its run, the slowdown following
// the machine's running batches (from the records alone).
TEST(Machines, EveryBatchDoesExactlyItsWorkAlone) {
  const auto times = poisson_times(1500, 250, 5);
  const double alpha = 0.3;
  const auto r = run(one_machine(times, 3, "per_corunner(slowdown=0.3)"), "fcfs");
  std::vector<std::pair<Nanos, int>> edges;
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
    edges.push_back({r.queries.start[i], +1});
    edges.push_back({r.queries.finish[i], -1});
  }
  std::sort(edges.begin(), edges.end());
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
    const Nanos a = r.queries.start[i], b = r.queries.finish[i];
    double work = 0;
    int live = 0;
    Nanos at = edges.front().first;
    for (const auto& [t, step] : edges) {
      const Nanos lo = std::max(a, at), hi = std::min(b, t);
      if (hi > lo && live > 0) work += static_cast<double>(hi - lo) / (1 + alpha * (live - 1));
      live += step;
      at = t;
      if (t >= b) break;
    }
    ASSERT_NEAR(work, 11e6, 200) << "query " << i;
  }
}

TEST(Machines, NoneAndZeroSlowdownGiveTheRecordsOfNoInterference) {
  const auto times = poisson_times(1000, 200, 3);
  auto plain = one_machine(times, 2, nullptr);
  plain.service_statistic.reset();  // sampled service times too
  const auto base = run(plain, "least_finish_time");
  for (const char* model : {"none", "per_corunner(slowdown=0)"}) {
    auto spec = plain;
    spec.interference = catalogue::interference_models().make(model);
    const auto r = run(spec, "least_finish_time");
    EXPECT_EQ(r.queries.start, base.queries.start) << model;
    EXPECT_EQ(r.queries.finish, base.queries.finish) << model;
    EXPECT_EQ(r.queries.worker, base.queries.worker) << model;
  }
}

TEST(Machines, SameSeedSameRecordsUnderSampledTimesAndALoopModel) {
  auto spec = one_machine(poisson_times(800, 150, 9), 3, "per_corunner(slowdown=0.4)");
  spec.service_statistic.reset();
  spec.loop_model = catalogue::loop_models().make("measured_loop(wake_us=[0, 100], notice_us=[10, 50])");
  spec.seed = 4;
  const auto a = run(spec, "fcfs"), b = run(spec, "fcfs");
  EXPECT_EQ(a.queries.start, b.queries.start);
  EXPECT_EQ(a.queries.finish, b.queries.finish);
  spec.seed = 5;
  EXPECT_NE(run(spec, "fcfs").queries.finish, a.queries.finish);
}

// Dispatches query 0 to worker 0 at once and, at 5 ms, gives worker 0 all four cores.
class Repartition final : public sched::Scheduler {
 public:
  std::string describe() const override { return "repartition"; }
  void on_arrival(const sched::Query& q, const sched::ClusterView&, sched::Actions& actions) override {
    const sched::QueryId id = q.id;
    actions.dispatch(0, 0, {&id, 1});
    actions.set_timer(millis_to_nanos(5), 0);
  }
  void on_timer(std::int64_t, const sched::ClusterView& view, sched::Actions& actions) override {
    EXPECT_EQ(view.free_resources(0).cores, 3);
    actions.set_config(0, sched::kCoresKnob, 4);
  }
};

TEST(Machines, APartitionChangedMidBatchRetimesItsRest) {
  // One instance with 4 threads on 1 of 4 cores: 4x slower (cpu_share). After 5 ms (1.25 ms of
  // its 11 ms done) it gets 4 cores: the remaining 9.75 ms run at full speed, ending at 14.75 ms.
  auto spec = replay_spec({0.0}, {{"fast", 1, {}, {{"threads", 4}, {"cores", 1}}, "box"}});
  spec.machines = {{"box", 1, "", {.cores = 4}}};
  spec.interference = catalogue::interference_models().make("cpu_share");
  Repartition policy;
  const auto r = sim::simulate(spec, policy);
  EXPECT_EQ(r.queries.finish[0], 14'750'000);
}

TEST(Machines, CostIsPaidOncePerMachineAndTheViewListsInstances) {
  auto spec = replay_spec({0.0, 0.001}, {{"fast", 3, {}, {}, "box"}, {"fast", 1, {}, {}}});
  spec.machines = {{"box", 2, "", {.cores = 8}}};
  const auto r = run(spec, "fcfs");
  ASSERT_EQ(r.workers.machine.size(), 7u);
  EXPECT_EQ(r.workers.machine, (std::vector<std::int32_t>{0, 0, 0, 1, 1, 1, 2}));
  // Machines 0 and 1 paid from 0 to the end by their first instance; worker 6 is its own machine.
  EXPECT_GT(r.workers.cost[0], 0);
  EXPECT_EQ(r.workers.cost[1], 0);
  EXPECT_EQ(r.workers.cost[2], 0);
  EXPECT_EQ(r.workers.cost[3], r.workers.cost[0]);
  EXPECT_EQ(r.workers.cost[6], r.workers.cost[0]);
}

std::string error_of(const cluster::RunSpec& spec) {
  try {
    spec.validate();
  } catch (const ValueError& e) {
    return e.what();
  } catch (const KeyError& e) {
    return e.what();
  }
  return "";
}

TEST(Machines, BadMachinesNameTheFieldAndValue) {
  auto spec = replay_spec({0.0}, {{"fast", 2, {}, {}, "nowhere"}});
  EXPECT_NE(error_of(spec).find("workers[0].machine='nowhere' is not a machine group (none declared)"),
            std::string::npos)
      << error_of(spec);
  spec.workers[0].machine = "box";
  spec.workers[0].config = {{"cores", 3}};
  spec.machines = {{"box", 1, "", {.cores = 4}}};
  EXPECT_NE(error_of(spec).find("ask for cores=6 in all, more than its cores=4"), std::string::npos) << error_of(spec);
  spec.workers[0].config = {};
  spec.machines[0].resources.memory_mb = -1;
  EXPECT_NE(error_of(spec).find("machines[0].memory_mb=-1 must be a finite number >= 0"), std::string::npos);
  spec.machines[0].resources.memory_mb = 0;
  spec.machines.push_back({"box", 1, "", {}});
  EXPECT_NE(error_of(spec).find("machines[1].name='box' names two machine groups"), std::string::npos);
  spec.machines = {{"box", 1, "", {}}, {"idle", 1, "", {}}};
  EXPECT_NE(error_of(spec).find("hosts no worker group: give it hardware="), std::string::npos);
  spec.machines[1].hardware = "slow";
  EXPECT_EQ(error_of(spec), "");
  spec.workers.push_back({"slow", 1, {}, {}, "box"});
  EXPECT_NE(error_of(spec).find("a machine holds one hardware type"), std::string::npos);
}

TEST(Machines, BadInterferenceModelsAreRefused) {
  const auto& models = catalogue::interference_models();
  EXPECT_THROW(models.make("no_such_model"), KeyError);
  EXPECT_THROW(models.make("per_corunner(slowdown=-0.5)"), ValueError);
  EXPECT_THROW(models.make("measured(table='m:m=-2')"), ValueError);
  EXPECT_THROW(models.make("measured(table='m=2')"), ValueError);
  EXPECT_THROW(models.make("measured(table='m:m=1.4x')"), ValueError);
  EXPECT_THROW(models.make("measured(table='')"), ValueError);
  // A table naming a model the profile lacks fails the run, naming it.
  auto spec = one_machine(poisson_times(50, 400, 1), 2, "measured(table='m:resnet=1.5')");
  try {
    run(spec, "fcfs");
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("names model 'resnet', which the profile lacks"), std::string::npos);
  }
  // cpu_share needs the machine's cores, and cores left for an instance without its own.
  spec.interference = models.make("cpu_share");
  EXPECT_THROW(run(spec, "fcfs"), ValueError);
  spec.machines[0].resources.cores = 2;
  spec.workers[0].count = 1;
  spec.workers.push_back({"fast", 1, {}, {{"cores", 2}}, "box"});
  try {
    run(spec, "fcfs");
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("hold all its 2: give it a 'cores' knob"), std::string::npos) << e.what();
  }
}

// Answers `value` for every batch: a model whose slowdowns the engine must refuse.
class FixedSlowdown final : public cluster::InterferenceModel {
 public:
  explicit FixedSlowdown(double value) : value_(value) {}
  double slowdown(const sched::ClusterView&, sched::WorkerId, std::span<const sched::WorkerId>) const override {
    return value_;
  }
  std::string describe() const override { return "fixed"; }

 private:
  double value_;
};

TEST(Machines, ASlowdownOutsideItsRangeFailsTheRunNamingIt) {
  auto spec = one_machine({0.0, 0.001}, 2, nullptr);
  for (const double bad : {0.0, -1.0, 2e6, std::nan(""), std::numeric_limits<double>::infinity()}) {
    spec.interference = std::make_shared<FixedSlowdown>(bad);
    try {
      run(spec, "fcfs");
      ADD_FAILURE() << "no error for slowdown=" << bad;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("interference model fixed gave slowdown="), std::string::npos) << e.what();
    }
  }
  spec.interference = std::make_shared<FixedSlowdown>(1e6);  // the largest allowed
  EXPECT_NO_THROW(run(spec, "fcfs"));
}

// Serves the first `n` arrivals, each on the lowest idle worker, and leaves the others waiting.
class ServeFirst final : public sched::Scheduler {
 public:
  explicit ServeFirst(sched::QueryId n) : n_(n) {}
  std::string describe() const override { return "serve_first"; }
  void on_arrival(const sched::Query& q, const sched::ClusterView& view, sched::Actions& actions) override {
    if (q.id >= n_) return;
    const sched::QueryId id = q.id;
    actions.dispatch(view.idle_workers().front(), 0, {&id, 1});
  }

 private:
  sched::QueryId n_;
};

// A run that stops with a query left waiting and no event to come ends at the latest machine end
// a re-timing replaced, when that lies beyond its last event, or is cut off at the drain limit
// before it: as when each machine end was a queued event and the replaced ones were skipped.
TEST(Machines, ARunLeftWaitingEndsAtTheLatestReplacedEnd) {
  // Three instances; one co-runner slows a batch 4x, two speed it up (0.5x). A alone from 0 would
  // end at 11 ms; B at 1 ms slows both (A's end: 1 + 10 x 4 = 41 ms); C at 2 ms runs all three at
  // 0.5x (A's end: 2 + 9.75 / 2 = 6.875 ms). They end at 6.875, 10.875 and 11.125 ms; the fourth
  // query, at 3 ms, waits. The replaced 41 ms is the latest.
  auto spec = one_machine({0.0, 0.001, 0.002, 0.003}, 3, "measured(table='m:m=4; m:m+m=0.5')");
  for (const double drain_ms : {100.0, 20.0}) {
    spec.drain_limit = millis_to_nanos(drain_ms);
    ServeFirst policy(3);
    const auto r = sim::simulate(spec, policy);
    EXPECT_EQ(r.queries.finish[0], 6'875'000);
    EXPECT_EQ(r.queries.finish[1], 10'875'000);
    EXPECT_EQ(r.queries.finish[2], 11'125'000);
    const std::string reason = r.drop_reasons.at(static_cast<std::size_t>(r.queries.drop_reason[3]));
    if (drain_ms == 100) {
      EXPECT_EQ(r.duration, 41'000'000);
      EXPECT_EQ(reason, "unserved at end of run");
    } else {  // 41 ms lies beyond 3 + 20 ms
      EXPECT_EQ(r.duration, 23'000'000);
      EXPECT_EQ(reason, "cut off at end of run");
    }
  }
}

TEST(Machines, MeasuredTableGivesTheSetOrTheProductOfPairs) {
  // Two instances: the second batch overlaps the first for its whole 11 ms at 1.5x.
  auto spec = one_machine({0.0, 0.0}, 2, "measured(table='m:m=1.5')");
  const auto r = run(spec, "fcfs");
  EXPECT_EQ(r.queries.finish[0], 16'500'000);
  EXPECT_EQ(r.queries.finish[1], 16'500'000);
}

// Adds an instance on machine 0 at the first arrival; the memory check refuses a second.
class AddInstances final : public sched::Scheduler {
 public:
  std::string describe() const override { return "add_instances"; }
  void on_arrival(const sched::Query&, const sched::ClusterView& view, sched::Actions& actions) override {
    if (added_ >= 0) return;
    const sched::ModelId m = 0;
    added_ = actions.add_instance(0, {&m, 1});
    EXPECT_EQ(view.machine(added_), 0);
    EXPECT_EQ(view.instances(0).size(), 2u);
    EXPECT_DOUBLE_EQ(view.free_resources(0).memory_mb, 100);
    try {
      actions.add_instance(0, {&m, 1});
      ADD_FAILURE() << "no error";
    } catch (const ValueError& e) {
      message_ = e.what();
    }
  }
  sched::WorkerId added_ = -1;
  std::string message_;
};

TEST(Machines, AddInstanceTakesMemoryAndRefusesWhatDoesNotFit) {
  auto spec = replay_spec({0.0}, {{"fast", 1, {"m"}, {}, "box"}});
  auto profile = std::make_shared<profile::Profile>(*spec.profile);
  profile->set_memory_mb("fast", "m", 200);
  spec.profile = profile;
  spec.machines = {{"box", 1, "", {.memory_mb = 500}}};
  AddInstances policy;
  const auto r = sim::simulate(spec, policy);
  EXPECT_EQ(policy.added_, 1);
  EXPECT_NE(policy.message_.find("add_instance: machine=0 has 100 MB of memory_mb free, the models need 200 MB"),
            std::string::npos)
      << policy.message_;
  EXPECT_EQ(r.workers.cost[1], 0);  // the machine is paid by its first instance
}

}  // namespace
}  // namespace servelab
