// The serving loop's per-batch timeout: a batch that does not return is dropped at its deadline,
// its worker leaves service for the rest of the run, its thread is abandoned (and joined once the
// batch returns), and every query still ends exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/serve/executor.hpp"
#include "servelab/serve/server.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::serve {
namespace {

using cluster::QueryStatus;
using cluster::RunResult;
using cluster::RunSpec;
using profile::LatencyDistribution;
using SteadyClock = std::chrono::steady_clock;

constexpr Nanos kMs = kNanosPerMilli;
constexpr Nanos kServiceNs = 3 * kMs;

RunSpec make_spec(double rate, double seconds, std::int32_t workers) {
  auto profile = std::make_shared<profile::Profile>();
  profile->set_price("cpu", 0.36);
  profile->set_accuracy("m", 0.7);
  profile->set_latency("cpu", "m", 1, LatencyDistribution::from_samples({0.003}));
  profile->set_latency("cpu", "m", 8, LatencyDistribution::from_samples({0.003}));
  RunSpec spec;
  spec.profile = profile;
  spec.workers = {{"cpu", workers, {"m"}}};
  workload::Application app{"app", 1.0, 50 * kMs, nullptr, 0.0};
  spec.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(rate),
                                                       std::vector<workload::Application>{app},
                                                       workload::kUnlimitedCount, seconds_to_nanos(seconds));
  spec.seed = 11;
  return spec;
}

std::ptrdiff_t thread_count() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/task", ec);
  if (ec) return -1;
  return std::distance(it, std::filesystem::directory_iterator{});
}

// Until the test opens it, a batch that enters it does not return (whatever the stop token says).
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> entered = 0, left = 0;

  void pass() {
    ++entered;
    std::unique_lock lock(mutex);
    cv.wait(lock, [this] { return open; });
    ++left;
  }
  void release() {
    {
      std::lock_guard lock(mutex);
      open = true;
    }
    cv.notify_all();
  }
};

// Worker 0 hangs in the gate on its first batch; every other batch takes kServiceNs.
class HangingExecutor final : public Executor {
 public:
  HangingExecutor(std::shared_ptr<Gate> gate) : gate_(std::move(gate)) {}
  void run(const ExecRequest& request) override {
    if (gate_ && request.worker == 0 && !hung_) {
      hung_ = true;
      gate_->pass();
      return;
    }
    wait_until_precise(SteadyClock::now() + std::chrono::nanoseconds(kServiceNs), request.stop);
  }
  std::string describe() const override { return "hanging(worker=0)"; }

 private:
  std::shared_ptr<Gate> gate_;  // shared: an abandoned thread keeps it
  bool hung_ = false;
};

ServeOptions hanging_options(const std::shared_ptr<Gate>& gate, Nanos timeout) {
  ServeOptions options;
  options.executor = [gate](sched::WorkerId, sched::HardwareId, const RunSpec&) {
    return std::make_unique<HangingExecutor>(gate);
  };
  options.batch_timeout = timeout;
  options.spin = 0;
  return options;
}

// Waits (boundedly) for the process's abandoned threads to return and be joined; how many are left.
std::size_t wait_for_abandoned_threads() {
  const auto give_up = SteadyClock::now() + std::chrono::seconds(20);
  std::size_t left = abandoned_worker_threads();
  while (left > 0 && SteadyClock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    left = abandoned_worker_threads();
  }
  return left;
}

// Every query ended once: completed, or dropped with a reason in range.
void expect_every_query_ended_once(const RunResult& r) {
  const auto& q = r.queries;
  ASSERT_GT(q.size_of(), 0u);
  for (std::size_t i = 0; i < q.size_of(); ++i) {
    if (q.status[i] == static_cast<std::int8_t>(QueryStatus::Completed)) {
      EXPECT_EQ(q.drop_reason[i], -1) << "query " << i;
      EXPECT_LE(q.start[i], q.finish[i]) << "query " << i;
      continue;
    }
    ASSERT_EQ(q.status[i], static_cast<std::int8_t>(QueryStatus::Dropped)) << "query " << i;
    ASSERT_GE(q.drop_reason[i], 0) << "query " << i;
    ASSERT_LT(static_cast<std::size_t>(q.drop_reason[i]), r.drop_reasons.size()) << "query " << i;
  }
}

// The index of the one drop reason that names the timeout; -1 if none.
std::int8_t timeout_reason(const RunResult& r) {
  for (std::size_t k = 0; k < r.drop_reasons.size(); ++k) {
    if (r.drop_reasons[k].find("batch_timeout_ms") != std::string::npos) return static_cast<std::int8_t>(k);
  }
  return -1;
}

void check_timed_out_run(const RunResult& r, const std::string& expected_reason) {
  expect_every_query_ended_once(r);
  const std::int8_t reason = timeout_reason(r);
  ASSERT_GE(reason, 0);
  EXPECT_EQ(r.drop_reasons[reason], expected_reason);
  const auto& q = r.queries;
  std::int64_t timed_out = 0, completed = 0;
  for (std::size_t i = 0; i < q.size_of(); ++i) {
    if (q.status[i] == static_cast<std::int8_t>(QueryStatus::Completed)) {
      ++completed;
      EXPECT_NE(q.worker[i], 0) << "worker 0 served query " << i << " after its timeout";
    }
    if (q.drop_reason[i] == reason) ++timed_out;
  }
  EXPECT_GE(timed_out, 1);  // the hung batch, then what was dispatched to the worker out of service
  EXPECT_GT(completed, 0);  // the other worker served the rest
  EXPECT_EQ(r.workers.batches[0], 0);
  EXPECT_GT(r.workers.batches[1], 0);
}

TEST(BatchTimeout, AHungBatchIsDroppedItsWorkerLeavesServiceAndItsThreadIsJoinedOnceItReturns) {
  ASSERT_EQ(wait_for_abandoned_threads(), 0u);
  const auto threads_before = thread_count();
  auto gate = std::make_shared<Gate>();
  auto spec = make_spec(200, 0.5, 2);
  auto scheduler = catalogue::schedulers().make("fcfs");
  const RunResult r = serve(spec, *scheduler, hanging_options(gate, 50 * kMs));
  check_timed_out_run(r,
                      "executor failed: hanging(worker=0): worker 0 ran a batch past batch_timeout_ms=50; the "
                      "worker is out of service for the rest of the run");
  // The hung batch ended at its deadline, 50 ms after its dispatch (which followed its arrival).
  const auto& q = r.queries;
  const std::int8_t reason = timeout_reason(r);
  const auto first = std::find(q.drop_reason.begin(), q.drop_reason.end(), reason) - q.drop_reason.begin();
  EXPECT_GE(q.finish[first] - q.arrival[first], 50 * kMs);
  // serve() returned with the batch still hung: one thread left running, the run's executor in it.
  EXPECT_EQ(gate->entered, 1);
  EXPECT_EQ(gate->left, 0);
  EXPECT_EQ(abandoned_worker_threads(), 1u);
  gate->release();
  EXPECT_EQ(wait_for_abandoned_threads(), 0u);
  EXPECT_EQ(gate->left, 1);
  if (threads_before > 0) {
    EXPECT_EQ(thread_count(), threads_before);
  }
}

TEST(BatchTimeout, ABatchReturningLateUnderABatchingPolicyIsNotRecordedTwice) {
  ASSERT_EQ(wait_for_abandoned_threads(), 0u);
  const auto threads_before = thread_count();
  auto gate = std::make_shared<Gate>();
  auto spec = make_spec(300, 0.6, 2);
  auto scheduler = catalogue::schedulers().make("batching(max_batch=4)");
  // The hung batch returns 200 ms after it began (long after its 40 ms timeout, before the end of
  // the run): timed from its start, not the test's, so a slow start (a sanitizer build, a busy
  // machine) cannot open the gate before worker 0's first batch reaches it.
  std::jthread opener([gate](std::stop_token stop) {
    while (gate->entered == 0 && !stop.stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    gate->release();
  });
  const RunResult r = serve(spec, *scheduler, hanging_options(gate, 40 * kMs));
  opener.request_stop();
  opener.join();
  check_timed_out_run(r,
                      "executor failed: hanging(worker=0): worker 0 ran a batch past batch_timeout_ms=40; the "
                      "worker is out of service for the rest of the run");
  EXPECT_EQ(gate->left, 1);
  // It returned during the run: the end of the run joined it.
  EXPECT_EQ(abandoned_worker_threads(), 0u);
  if (threads_before > 0) {
    EXPECT_EQ(thread_count(), threads_before);
  }
}

TEST(BatchTimeout, AnExecutorThatHonoursStopReturnsAndIsJoinedByTheEndOfTheRun) {
  ASSERT_EQ(wait_for_abandoned_threads(), 0u);
  const auto threads_before = thread_count();
  auto spec = make_spec(100, 0.3, 2);
  auto profile = std::make_shared<profile::Profile>(*spec.profile);
  profile->set_latency("cpu", "m", 1, LatencyDistribution::from_samples({30.0}));  // 30 s a batch
  profile->set_latency("cpu", "m", 8, LatencyDistribution::from_samples({30.0}));
  spec.profile = profile;
  ServeOptions options;
  options.batch_timeout = 20 * kMs;
  auto scheduler = catalogue::schedulers().make("fcfs");
  const RunResult r = serve(spec, *scheduler, options);
  expect_every_query_ended_once(r);
  // Both workers timed out on their first batch and left the cluster: their two queries end with
  // the timeout reasons, every other one unserved at the end of the run.
  ASSERT_EQ(r.drop_reasons.size(), 3u);
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) {
    EXPECT_EQ(r.queries.status[i], static_cast<std::int8_t>(QueryStatus::Dropped));
  }
  EXPECT_EQ(std::count(r.queries.drop_reason.begin(), r.queries.drop_reason.end(), 0), 1);
  EXPECT_EQ(std::count(r.queries.drop_reason.begin(), r.queries.drop_reason.end(), 1), 1);
  EXPECT_EQ(r.drop_reasons[2], "unserved at end of run");
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(r.drop_reasons[w],
              str("executor failed: emulated(service='sample'): worker ", w,
                  " ran a batch past batch_timeout_ms=20; the worker is out of service for the rest of the run"));
  }
  EXPECT_EQ(wait_for_abandoned_threads(), 0u);
  if (threads_before > 0) {
    EXPECT_EQ(thread_count(), threads_before);
  }
}

TEST(BatchTimeout, TheEndOfTheRunWaitsTheGracePeriodThenLeavesAHungThread) {
  ASSERT_EQ(wait_for_abandoned_threads(), 0u);
  auto gate = std::make_shared<Gate>();
  auto spec = make_spec(100, 0.05, 1);
  spec.drain_limit = 20 * kMs;  // the run is cut off before the 200 ms timeout
  auto scheduler = catalogue::schedulers().make("fcfs");
  const auto begin = SteadyClock::now();
  const RunResult r = serve(spec, *scheduler, hanging_options(gate, 200 * kMs));
  const double wall_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - begin).count();
  std::printf("cut off with a hung batch: serve returned after %.0f ms (workload 50 ms + drain 20 ms + grace 200 ms)\n",
              wall_ms);
  expect_every_query_ended_once(r);
  EXPECT_EQ(timeout_reason(r), -1);
  EXPECT_EQ(r.drop_reasons, std::vector<std::string>{"cut off at end of run"});
  EXPECT_EQ(gate->entered, 1);
  EXPECT_EQ(abandoned_worker_threads(), 1u);
  gate->release();
  EXPECT_EQ(wait_for_abandoned_threads(), 0u);
}

TEST(BatchTimeout, ANegativeTimeoutIsRejected) {
  auto spec = make_spec(100, 0.1, 1);
  ServeOptions options;
  options.batch_timeout = -1;
  auto scheduler = catalogue::schedulers().make("fcfs");
  try {
    serve(spec, *scheduler, options);
    FAIL() << "no exception";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("batch_timeout=-1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace servelab::serve
