// The serving loop's worker side: one thread per worker, and the inbox through which the worker
// threads hand completions to the controller. Worker threads touch only their own slot, their
// executor and the inbox, never the cluster state or the scheduler.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "servelab/core/rng.hpp"
#include "servelab/core/time.hpp"
#include "servelab/serve/executor.hpp"

namespace servelab::serve {

using SteadyClock = std::chrono::steady_clock;

// Nanoseconds since the run's start, readable from any thread.
class RunClock {
 public:
  RunClock() : start_(SteadyClock::now()) {}
  void restart() { start_ = SteadyClock::now(); }
  Nanos now() const { return (SteadyClock::now() - start_).count(); }
  SteadyClock::time_point at(Nanos t) const { return start_ + std::chrono::nanoseconds(t); }

 private:
  SteadyClock::time_point start_;
};

// A batch that ended on a worker thread (or failed: error is set).
struct Completion {
  sched::WorkerId worker = -1;
  Nanos start = 0, finish = 0;
  Nanos exec = 0;  // the executor's own measure (ExecReport::compute), else finish - start
  std::exception_ptr error;
};

// Completions posted by worker threads, taken by the controller.
class Inbox {
 public:
  void post(Completion completion);
  // Waits until something is posted or `deadline`; appends what was posted to `out`.
  void wait_until(SteadyClock::time_point deadline, std::vector<Completion>& out);
  void take(std::vector<Completion>& out);

 private:
  std::mutex mutex_;
  std::condition_variable posted_;
  std::vector<Completion> items_;
};

// What the controller hands a worker thread: a copy of everything the batch needs.
struct Job {
  sched::ModelId model = -1;
  std::int64_t items = 0;
  std::vector<workload::QueryId> queries;
  std::vector<std::int32_t> sizes;  // items of each query
  ConfigKnobs config;
};

class WorkerThread {
 public:
  // Starts the thread. `clock`, `inbox` and `inputs` (null: none) must outlive this object.
  WorkerThread(sched::WorkerId worker, sched::HardwareId hardware, std::unique_ptr<Executor> executor, Rng rng,
               const RunClock& clock, Inbox& inbox, const QueryInputs* inputs = nullptr);
  // Asks the thread to stop (abandoning a running batch if its executor allows) and joins it.
  ~WorkerThread() = default;
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;

  // Controller: hands an idle worker its next batch.
  void submit(Job job);
  // The executor's knobs, read once before the thread started.
  const std::vector<std::string>& knobs() const { return knobs_; }
  // The executor's describe(), for messages.
  const std::string& executor_name() const { return name_; }

 private:
  void loop(std::stop_token stop);

  sched::WorkerId worker_;
  sched::HardwareId hardware_;
  std::unique_ptr<Executor> executor_;
  std::vector<std::string> knobs_;
  std::string name_;
  Rng rng_;
  const RunClock& clock_;
  Inbox& inbox_;
  const QueryInputs* inputs_;
  std::mutex mutex_;
  std::condition_variable_any submitted_;
  std::optional<Job> job_;
  std::jthread thread_;  // last: started once the rest exists, stopped and joined first
};

}  // namespace servelab::serve
