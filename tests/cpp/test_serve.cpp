#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/catalogue/executors.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/serve/executor.hpp"
#include "servelab/serve/executor_registry.hpp"
#include "servelab/serve/server.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::serve {
namespace {

using cluster::QueryStatus;
using cluster::RunResult;
using cluster::RunSpec;
using profile::LatencyDistribution;
using profile::Profile;
using sched::Scheduler;
using SteadyClock = std::chrono::steady_clock;

constexpr Nanos kMs = kNanosPerMilli;
constexpr Nanos kMinServiceNs = 3 * kMs;  // the smallest latency sample of the test profile

// One hardware, two models: "small" takes 3..6 ms for a batch of 1 and 6..12 ms for 8 items.
std::shared_ptr<Profile> make_profile() {
  auto p = std::make_shared<Profile>();
  p->set_price("cpu", 0.36);
  p->set_accuracy("small", 0.7);
  p->set_accuracy("big", 0.9);
  p->set_latency("cpu", "small", 1, LatencyDistribution::from_samples({0.003, 0.004, 0.0045, 0.005, 0.006}));
  p->set_latency("cpu", "small", 8, LatencyDistribution::from_samples({0.006, 0.008, 0.009, 0.010, 0.012}));
  p->set_latency("cpu", "big", 1, LatencyDistribution::from_samples({0.008, 0.010, 0.012}));
  return p;
}

RunSpec make_spec(double rate, double seconds, std::int32_t workers, std::vector<std::string> models = {"small"}) {
  RunSpec spec;
  spec.profile = make_profile();
  spec.workers = {{"cpu", workers, std::move(models)}};
  workload::Application app{"app", 1.0, 50 * kMs, nullptr, 0.0};
  spec.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(rate),
                                                       std::vector<workload::Application>{app},
                                                       workload::kUnlimitedCount, seconds_to_nanos(seconds));
  spec.seed = 7;
  return spec;
}

std::shared_ptr<Scheduler> make_scheduler(const std::string& spec) { return catalogue::schedulers().make(spec); }

// OS threads of this process (Linux), to show that serve() leaves none behind.
std::ptrdiff_t thread_count() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/task", ec);
  if (ec) return -1;
  return std::distance(it, std::filesystem::directory_iterator{});
}

Nanos percentile(std::vector<Nanos> v, double q) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

std::vector<Nanos> completed_latencies(const RunResult& r) {
  std::vector<Nanos> out;
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
    if (r.queries.status[i] == static_cast<std::int8_t>(QueryStatus::Completed)) {
      out.push_back(r.queries.finish[i] - r.queries.arrival[i]);
    }
  }
  return out;
}

// The conformance rules every run must keep.
void expect_consistent(const RunResult& r, Nanos min_service) {
  const auto& q = r.queries;
  ASSERT_GT(q.size_of(), 0u);
  std::vector<std::vector<std::pair<Nanos, Nanos>>> batches(r.workers.hardware.size());
  std::int64_t completed = 0;
  for (std::size_t i = 0; i < q.size_of(); ++i) {
    // Every query ended exactly once: completed, or dropped with a reason.
    ASSERT_TRUE(q.status[i] == 0 || q.status[i] == 1) << "query " << i;
    if (q.status[i] == static_cast<std::int8_t>(QueryStatus::Dropped)) {
      EXPECT_GE(q.drop_reason[i], 0) << "query " << i;
      EXPECT_GE(q.finish[i], q.arrival[i]) << "query " << i;
      continue;
    }
    ++completed;
    EXPECT_LE(q.arrival[i], q.dispatch[i]) << "query " << i;
    EXPECT_LE(q.dispatch[i], q.start[i]) << "query " << i;
    EXPECT_LE(q.start[i], q.finish[i]) << "query " << i;
    EXPECT_GE(q.finish[i] - q.start[i], min_service) << "query " << i;
    EXPECT_LE(q.finish[i], r.duration) << "query " << i;
    ASSERT_GE(q.worker[i], 0);
    batches[q.worker[i]].emplace_back(q.start[i], q.finish[i]);
  }
  EXPECT_GT(completed, 0);
  for (std::size_t i = 1; i < q.size_of(); ++i) EXPECT_LE(q.arrival[i - 1], q.arrival[i]);
  // No worker runs two batches at once: its distinct [start, finish) intervals do not overlap.
  std::int64_t batch_total = 0;
  for (auto& b : batches) {
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    batch_total += static_cast<std::int64_t>(b.size());
    for (std::size_t k = 1; k < b.size(); ++k) EXPECT_LE(b[k - 1].second, b[k].first);
  }
  std::int64_t counted = 0;
  for (const auto n : r.workers.batches) counted += n;
  EXPECT_EQ(counted, batch_total);
}

// The wall-clock precision checks measure how promptly this process is scheduled, which other
// work on the machine spoils: they skip, saying why, when the 1-minute load average is over 1.5
// per core (a test run on an otherwise idle machine, builds just finished included, stays under).
std::optional<std::string> machine_too_busy_for_timing() {
  double load = 0;
  std::ifstream in("/proc/loadavg");
  if (!(in >> load)) return std::nullopt;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (load <= 1.5 * cores) return std::nullopt;
  return str("load average ", load, " on ", cores, " cores: wall-clock precision cannot be measured now");
}

#define SKIP_IF_MACHINE_TOO_BUSY_FOR_TIMING()                                 \
  do {                                                                        \
    if (const auto why = machine_too_busy_for_timing()) GTEST_SKIP() << *why; \
  } while (0)

TEST(WaitUntilPrecise, NeverEarlyAndTypicallyWithinTensOfMicroseconds) {
  SKIP_IF_MACHINE_TOO_BUSY_FOR_TIMING();
  std::vector<Nanos> late;
  for (int i = 0; i < 300; ++i) {
    const auto deadline = SteadyClock::now() + std::chrono::microseconds(1000 + 7 * (i % 50));
    const Nanos overshoot = wait_until_precise(deadline);
    late.push_back((SteadyClock::now() - deadline).count());
    EXPECT_GE(overshoot, 0);
  }
  const Nanos median = percentile(late, 0.5), p99 = percentile(late, 0.99);
  std::printf("wait_until_precise overshoot: median %.1f us, p99 %.1f us\n", median / 1e3, p99 / 1e3);
  RecordProperty("overshoot_median_us", static_cast<int>(median / 1000));
  RecordProperty("overshoot_p99_us", static_cast<int>(p99 / 1000));
  EXPECT_LT(median, 500 * kNanosPerMicro);  // a loose bound: shared CI machines are noisy
}

TEST(WaitUntilPrecise, StopRequestEndsTheWaitEarly) {
  std::stop_source source;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    source.request_stop();
  });
  const auto begin = SteadyClock::now();
  const Nanos overshoot = wait_until_precise(begin + std::chrono::seconds(10), source.get_token());
  EXPECT_LT(overshoot, 0);
  EXPECT_LT(SteadyClock::now() - begin, std::chrono::seconds(2));
  EXPECT_THROW(wait_until_precise(begin, {}, -1), ValueError);
}

TEST(EmulatedExecutor, SamplesTheSimulatorsServiceStream) {
  const auto profile = make_profile();
  EmulatedExecutor executor(profile, std::nullopt);
  Rng rng = Rng(7, "service").derive("worker0"), mirror = Rng(7, "service").derive("worker0");
  const ConfigKnobs config;
  const std::vector<workload::QueryId> ids{0, 1, 2};
  for (int i = 0; i < 20; ++i) {
    const ExecRequest request{0, 0, 0, 3, ids, config, rng, {}};
    EXPECT_EQ(executor.service_time(request), profile->sample_ns(0, 0, 3, mirror));
  }
  EXPECT_EQ(executor.describe(), "emulated(service='sample')");
}

TEST(EmulatedExecutor, FixedStatisticWaitsTheDecisionTableValue) {
  const auto profile = make_profile();
  EmulatedExecutor executor(profile, profile::Statistic::P50);
  Rng rng(1, "service");
  const ConfigKnobs config;
  const std::vector<workload::QueryId> ids{4};
  const ExecRequest request{0, 0, 0, 1, ids, config, rng, {}};
  const Nanos expected = seconds_to_nanos(profile->latency(0, 0, 1, profile::Statistic::P50));
  EXPECT_EQ(expected, 4500 * kNanosPerMicro);
  EXPECT_EQ(executor.service_time(request), expected);
  // Between measured batch sizes the decision latency is interpolated, as the policies see it.
  const ExecRequest four{0, 0, 0, 4, ids, config, rng, {}};
  EXPECT_EQ(executor.service_time(four), seconds_to_nanos(profile->latency(0, 0, 4, profile::Statistic::P50)));
  const auto begin = SteadyClock::now();
  executor.run(request);
  EXPECT_GE((SteadyClock::now() - begin).count(), expected);
  const ExecRequest too_big{0, 0, 1, 2, ids, config, rng, {}};  // "big" has batch 1 only
  try {
    executor.service_time(too_big);
    FAIL() << "no exception";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("batch=2"), std::string::npos) << e.what();
  }
}

TEST(Serve, FcfsKeepsTheConformanceRules) {
  SKIP_IF_MACHINE_TOO_BUSY_FOR_TIMING();
  const auto threads_before = thread_count();
  auto spec = make_spec(300, 0.6, 3);
  auto scheduler = make_scheduler("fcfs");
  const auto begin = SteadyClock::now();
  const RunResult r = serve(spec, *scheduler);
  const double wall_s = std::chrono::duration<double>(SteadyClock::now() - begin).count();
  EXPECT_EQ(r.world, "serve");
  EXPECT_EQ(r.scheduler, scheduler->describe());
  EXPECT_EQ(r.seed, 7u);
  // Arrivals are released at their workload times: the run takes about the workload's duration.
  EXPECT_GE(wall_s, 0.5);
  EXPECT_LT(wall_s, 3.0);
  expect_consistent(r, kMinServiceNs);
  // The same queries as the workload generates, with the same arrival times.
  const auto queries = spec.workload->generate(spec.seed);
  ASSERT_EQ(r.queries.size_of(), queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) EXPECT_EQ(r.queries.arrival[i], queries[i].arrival);
  // Most queries find an idle worker and are dispatched as soon as they arrive.
  std::vector<Nanos> wait;
  for (std::size_t i = 0; i < queries.size(); ++i) wait.push_back(r.queries.dispatch[i] - r.queries.arrival[i]);
  EXPECT_LT(percentile(wait, 0.5), 1 * kMs);
  if (threads_before > 0) {
    EXPECT_EQ(thread_count(), threads_before);
  }
}

TEST(Serve, RegistryPoliciesWithQueuesAndTimersKeepTheRules) {
  for (const char* name : {"batching(max_batch=8)", "edf", "jsq", "least_finish_time"}) {
    SCOPED_TRACE(name);
    auto spec = make_spec(400, 0.4, 2);
    auto scheduler = make_scheduler(name);
    const RunResult r = serve(spec, *scheduler);
    expect_consistent(r, kMinServiceNs);
  }
}

TEST(Serve, AgreesWithTheSimulatorOnLatencyPercentiles) {
  SKIP_IF_MACHINE_TOO_BUSY_FOR_TIMING();
  // Moderate load: 200 q/s on 2 workers of ~4.5 ms each (utilisation ~0.45), ~1.5 s of wall time.
  auto spec = make_spec(200, 1.5, 2);
  auto sim_policy = make_scheduler("fcfs");
  const RunResult simulated = sim::simulate(spec, *sim_policy);
  const auto a = completed_latencies(simulated);
  ASSERT_EQ(a.size(), simulated.queries.size_of());
  const Nanos p50_sim = percentile(a, 0.5), p99_sim = percentile(a, 0.99);
  // |p50 diff| <= max(2 ms, 10%); |p99 diff| <= max(5 ms, 25%). The p99 is two or three queries,
  // so one scheduling stall of a loaded machine moves it: a second run is allowed for the tail
  // (a real disagreement repeats).
  const Nanos p50_tolerance = std::max<Nanos>(2 * kMs, p50_sim / 10);
  const Nanos p99_tolerance = std::max<Nanos>(5 * kMs, p99_sim / 4);
  Nanos p50_serve = 0, p99_serve = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto serve_policy = make_scheduler("fcfs");
    const RunResult served = serve(spec, *serve_policy);
    const auto b = completed_latencies(served);
    ASSERT_EQ(b.size(), served.queries.size_of());
    p50_serve = percentile(b, 0.5), p99_serve = percentile(b, 0.99);
    std::printf("latency sim vs serve: p50 %.3f vs %.3f ms, p99 %.3f vs %.3f ms\n", p50_sim / 1e6, p50_serve / 1e6,
                p99_sim / 1e6, p99_serve / 1e6);
    if (std::abs(p99_serve - p99_sim) <= p99_tolerance) break;
  }
  RecordProperty("p50_diff_us", static_cast<int>((p50_serve - p50_sim) / 1000));
  RecordProperty("p99_diff_us", static_cast<int>((p99_serve - p99_sim) / 1000));
  EXPECT_LE(std::abs(p50_serve - p50_sim), p50_tolerance);
  EXPECT_LE(std::abs(p99_serve - p99_sim), p99_tolerance);
}

TEST(Serve, FixedServiceTimesAreWaitedPrecisely) {
  SKIP_IF_MACHINE_TOO_BUSY_FOR_TIMING();
  auto spec = make_spec(150, 0.5, 2);
  spec.service_statistic = profile::Statistic::Mean;
  auto scheduler = make_scheduler("fcfs");
  const RunResult r = serve(spec, *scheduler);
  const Nanos mean = seconds_to_nanos(spec.profile->latency(0, 0, 1, profile::Statistic::Mean));
  std::vector<Nanos> late;
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
    if (r.queries.status[i] != 0) continue;
    ASSERT_EQ(r.queries.batch_items[i], 1);
    late.push_back(r.queries.finish[i] - r.queries.start[i] - mean);
  }
  ASSERT_FALSE(late.empty());
  std::printf("batch time - fixed service time: median %.1f us, p99 %.1f us (%zu batches)\n",
              percentile(late, 0.5) / 1e3, percentile(late, 0.99) / 1e3, late.size());
  EXPECT_GE(*std::min_element(late.begin(), late.end()), 0);
  EXPECT_LT(percentile(late, 0.5), 1 * kMs);
}

// Delegates to fcfs, and throws from on_arrival at the `fail_at`-th arrival.
class FailingScheduler final : public Scheduler {
 public:
  explicit FailingScheduler(int fail_at) : fail_at_(fail_at), inner_(make_scheduler("fcfs")) {}
  std::string describe() const override { return "failing"; }
  void on_arrival(const sched::Query& q, const sched::ClusterView& v, sched::Actions& a) override {
    if (++arrivals_ == fail_at_) throw std::logic_error("policy bug");
    inner_->on_arrival(q, v, a);
  }
  void on_batch_done(const sched::BatchDone& d, const sched::ClusterView& v, sched::Actions& a) override {
    inner_->on_batch_done(d, v, a);
  }

 private:
  int fail_at_, arrivals_ = 0;
  std::shared_ptr<Scheduler> inner_;
};

TEST(Serve, AnExceptionFromAHookPropagatesAndJoinsEveryThread) {
  const auto threads_before = thread_count();
  auto spec = make_spec(500, 5.0, 4);
  spec.service_statistic = profile::Statistic::Mean;
  FailingScheduler scheduler(20);
  const auto begin = SteadyClock::now();
  try {
    serve(spec, scheduler);
    FAIL() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "policy bug");
  }
  EXPECT_LT(SteadyClock::now() - begin, std::chrono::seconds(2));  // not the workload's 5 s
  if (threads_before > 0) {
    EXPECT_EQ(thread_count(), threads_before);
  }
}

// Counts its batches; fails on the `fail_at`-th when fail_at > 0. Reads the "threads" knob.
class ProbeExecutor final : public Executor {
 public:
  ProbeExecutor(std::atomic<int>& runs, std::atomic<std::int64_t>& knob, int fail_at)
      : runs_(runs), knob_(knob), fail_at_(fail_at) {}
  void run(const ExecRequest& request) override {
    const auto it = request.config.find("threads");
    knob_ = it == request.config.end() ? -1 : it->second;
    if (++runs_ == fail_at_) throw RuntimeError("device lost");
    wait_until_precise(SteadyClock::now() + std::chrono::milliseconds(3), request.stop);
  }
  std::vector<std::string> knobs() const override { return {"threads"}; }
  std::string describe() const override { return "probe"; }

 private:
  std::atomic<int>& runs_;
  std::atomic<std::int64_t>& knob_;
  int fail_at_;
};

TEST(Serve, UsesTheExecutorFactoryAndPassesKnobs) {
  auto spec = make_spec(200, 0.3, 2);
  spec.workers[0].config = {{"threads", 3}};
  std::atomic<int> runs = 0, made = 0;
  std::atomic<std::int64_t> knob = 0;
  ServeOptions options;
  options.executor = [&](sched::WorkerId, sched::HardwareId, const RunSpec&) {
    ++made;
    return std::make_unique<ProbeExecutor>(runs, knob, 0);
  };
  auto scheduler = make_scheduler("fcfs");
  const RunResult r = serve(spec, *scheduler, options);
  EXPECT_EQ(made, 2);
  std::int64_t batches = 0;
  for (const auto n : r.workers.batches) batches += n;
  EXPECT_EQ(runs, batches);
  EXPECT_GT(batches, 0);
  EXPECT_EQ(knob, 3);
  expect_consistent(r, 3 * kMs);
}

TEST(Serve, AnExecutorErrorDropsItsBatchAndTheRunGoesOn) {
  const auto threads_before = thread_count();
  auto spec = make_spec(200, 0.5, 2);
  std::atomic<int> runs = 0;
  std::atomic<std::int64_t> knob = 0;
  ServeOptions options;
  options.executor = [&](sched::WorkerId, sched::HardwareId, const RunSpec&) {
    return std::make_unique<ProbeExecutor>(runs, knob, 5);
  };
  auto scheduler = make_scheduler("fcfs");
  const RunResult r = serve(spec, *scheduler, options);
  EXPECT_EQ(knob, -1);  // "threads" was never set
  const auto& q = r.queries;
  const auto reason = std::find(r.drop_reasons.begin(), r.drop_reasons.end(), "executor failed: probe: device lost");
  ASSERT_NE(reason, r.drop_reasons.end());
  const auto reason_index = static_cast<std::int8_t>(reason - r.drop_reasons.begin());
  std::int64_t failed = 0, completed = 0;
  for (std::size_t i = 0; i < q.size_of(); ++i) {
    if (q.drop_reason[i] == reason_index) {
      ++failed;
      EXPECT_EQ(q.status[i], static_cast<std::int8_t>(QueryStatus::Dropped));
      EXPECT_EQ(q.worker[i], -1);
      EXPECT_EQ(q.start[i], -1);
    }
    completed += q.status[i] == static_cast<std::int8_t>(QueryStatus::Completed);
  }
  EXPECT_GE(failed, 1);              // the fifth batch's queries
  EXPECT_GT(completed, 4 * failed);  // and the rest were served
  std::int64_t batches = 0;          // the completed ones: the records show no other
  for (const auto b : r.workers.batches) batches += b;
  EXPECT_EQ(runs, batches + 1);
  if (threads_before > 0) {
    EXPECT_EQ(thread_count(), threads_before);
  }
  options.executor = [](sched::WorkerId, sched::HardwareId, const RunSpec&) { return std::unique_ptr<Executor>(); };
  try {
    serve(spec, *scheduler, options);
    FAIL() << "no exception";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("worker=0"), std::string::npos) << e.what();
  }
}

// The executor's own measure of each batch, reported through ExecReport.
class ReportingExecutor final : public Executor {
 public:
  void run(const ExecRequest& request) override {
    std::int64_t items = 0;
    for (const auto n : request.sizes) items += n;
    EXPECT_EQ(items, request.items);
    EXPECT_EQ(request.sizes.size(), request.queries.size());
    if (request.report) request.report->compute = 1000 * request.items;
  }
  std::string describe() const override { return "reporting"; }
};

class ReportingBuilder final : public ExecutorBuilder {
 public:
  std::unique_ptr<Executor> build(const ExecutorContext&) const override {
    return std::make_unique<ReportingExecutor>();
  }
  std::string describe() const override { return "reporting"; }
};

TEST(Serve, RecordsEachBatchsExecTimeAsAColumn) {
  auto spec = make_spec(300, 0.3, 2);
  ServeOptions options;
  options.executor = executors_by_group({std::make_shared<ReportingBuilder>()});
  auto scheduler = make_scheduler("fcfs");
  const RunResult r = serve(spec, *scheduler, options);
  // exec_ns, then the loop's stage stamps (server.hpp).
  ASSERT_EQ(r.world_columns.size(), 3u);
  EXPECT_EQ(r.world_columns[0].first, "exec_ns");
  EXPECT_EQ(r.world_columns[1].first, "taken_ns");
  EXPECT_EQ(r.world_columns[2].first, "noticed_ns");
  const auto& exec = r.world_columns[0].second;
  const auto& taken = r.world_columns[1].second;
  const auto& noticed = r.world_columns[2].second;
  ASSERT_EQ(exec.size(), r.queries.size_of());
  ASSERT_EQ(taken.size(), r.queries.size_of());
  ASSERT_EQ(noticed.size(), r.queries.size_of());
  for (std::size_t i = 0; i < exec.size(); ++i) {
    // Every arrival is taken up at or after its time, and before its batch is dispatched.
    EXPECT_GE(taken[i], r.queries.arrival[i]) << "query " << i;
    if (r.queries.status[i] == static_cast<std::int8_t>(QueryStatus::Completed)) {
      EXPECT_EQ(exec[i], 1000 * r.queries.batch_items[i]) << "query " << i;
      EXPECT_LE(taken[i], r.queries.dispatch[i]) << "query " << i;
      EXPECT_GE(noticed[i], r.queries.finish[i]) << "query " << i;
    } else {
      EXPECT_EQ(exec[i], -1) << "query " << i;
    }
  }
}

TEST(ExecutorRegistry, BuildsTheServeEntriesFromSpecs) {
  const auto& registry = catalogue::executors();
  EXPECT_TRUE(registry.contains("emulated"));
  EXPECT_TRUE(registry.contains("constant"));
  EXPECT_EQ(registry.make("constant(latency_ms=2)")->describe(), "constant(latency_ms=2)");
  EXPECT_THROW(registry.make("constant(latency_ms=-1)"), ValueError);
  EXPECT_THROW(registry.make("emulated(service='p42')"), ValueError);
  EXPECT_THROW(registry.make("nope"), KeyError);
  // Emulated needs a run's profile: outside a run it says so.
  EXPECT_THROW(registry.make("emulated")->build(ExecutorContext{}), ValueError);

  // A constant executor by group: every batch takes the constant (20 ms), not the profile's 3..12 ms.
  auto spec = make_spec(30, 0.3, 1);
  ServeOptions options;
  options.executor = executors_by_group({registry.make("constant(latency_ms=20)")});
  auto scheduler = make_scheduler("fcfs");
  const RunResult r = serve(spec, *scheduler, options);
  expect_consistent(r, 20 * kMs);
  // One builder per worker group, no more, no less.
  options.executor = executors_by_group({nullptr, nullptr});
  EXPECT_THROW(serve(spec, *scheduler, options), ValueError);
}

// fcfs, plus one worker added at the start that is ready after 100 ms.
class ScaleOutScheduler final : public Scheduler {
 public:
  ScaleOutScheduler() : inner_(make_scheduler("fcfs")) {}
  std::string describe() const override { return "scale_out"; }
  void on_start(const sched::ClusterView& v, sched::Actions& a) override {
    const std::vector<sched::ModelId> models{0};
    added_ = a.add_worker("cpu", models, 100 * kMs);
    EXPECT_EQ(v.status(added_), sched::WorkerStatus::Starting);
    inner_->on_start(v, a);
  }
  void on_arrival(const sched::Query& q, const sched::ClusterView& v, sched::Actions& a) override {
    inner_->on_arrival(q, v, a);
  }
  void on_batch_done(const sched::BatchDone& d, const sched::ClusterView& v, sched::Actions& a) override {
    inner_->on_batch_done(d, v, a);
  }
  void on_worker_ready(sched::WorkerId w, const sched::ClusterView& v, sched::Actions& a) override {
    ready_at_ = v.now();
    inner_->on_worker_ready(w, v, a);
  }
  sched::WorkerId added_ = -1;
  Nanos ready_at_ = -1;

 private:
  std::shared_ptr<Scheduler> inner_;
};

TEST(Serve, AddWorkerAtRunTimeGetsAThreadAndServes) {
  // 400 q/s of ~4.5 ms keep one worker nearly saturated, so the added one gets work.
  auto spec = make_spec(400, 0.6, 1);
  ScaleOutScheduler scheduler;
  const RunResult r = serve(spec, scheduler);
  ASSERT_EQ(scheduler.added_, 1);
  ASSERT_EQ(r.workers.batches.size(), 2u);
  EXPECT_GT(r.workers.batches[1], 0);
  EXPECT_GE(scheduler.ready_at_, 100 * kMs);
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
    if (r.queries.worker[i] == 1) {
      EXPECT_GE(r.queries.start[i], 100 * kMs);
    }
  }
  expect_consistent(r, kMinServiceNs);
}

TEST(Serve, DrainLimitCutsOffAndAbandonsRunningBatches) {
  const auto threads_before = thread_count();
  auto spec = make_spec(100, 0.05, 1, {"big"});
  // Each batch is emulated for 30 s: only a stop request ends it.
  auto profile = std::make_shared<Profile>(*spec.profile);
  profile->set_latency("cpu", "big", 1, LatencyDistribution::from_samples({30.0}));
  spec.profile = profile;
  spec.drain_limit = 50 * kMs;
  auto scheduler = make_scheduler("fcfs");
  const auto begin = SteadyClock::now();
  const RunResult r = serve(spec, *scheduler);
  EXPECT_LT(SteadyClock::now() - begin, std::chrono::seconds(2));
  ASSERT_GT(r.queries.size_of(), 0u);
  ASSERT_EQ(r.drop_reasons, std::vector<std::string>{"cut off at end of run"});
  Nanos last_arrival = 0;
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
    EXPECT_EQ(r.queries.status[i], static_cast<std::int8_t>(QueryStatus::Dropped));
    EXPECT_EQ(r.queries.start[i], -1);
    last_arrival = std::max(last_arrival, r.queries.arrival[i]);
  }
  EXPECT_GE(r.duration, last_arrival + spec.drain_limit);
  if (threads_before > 0) {
    EXPECT_EQ(thread_count(), threads_before);
  }
}

TEST(Serve, InvalidSpecIsRejectedBeforeAnyThreadStarts) {
  auto spec = make_spec(100, 0.1, 1);
  spec.workers[0].count = 0;
  auto scheduler = make_scheduler("fcfs");
  EXPECT_THROW(serve(spec, *scheduler), ValueError);
}

}  // namespace
}  // namespace servelab::serve
