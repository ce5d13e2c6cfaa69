// The serving loop's worker side: one thread per worker, and the inbox through which the worker
// threads hand completions to the controller. Worker threads touch only their own slot, their
// executor and the inbox, never the cluster state or the scheduler.
//
// A worker thread owns (or shares) everything it touches: its executor, its job, the run's clock,
// inbox and inputs. So the controller may abandon a thread whose batch does not return (the batch
// timeout): the thread object moves to a process-wide list and lives on until its batch returns;
// the serving run, and serve() itself, may end before that.
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
#include "servelab/serve/affinity.hpp"
#include "servelab/serve/executor.hpp"
#include "servelab/serve/query_outputs.hpp"

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
  Nanos exec = 0;        // the executor's own measure (ExecReport::compute), else finish - start
  Nanos transport = -1;  // ExecReport::transport: to another process and back; -1: in process
  std::exception_ptr error;
};

// Completions posted by worker threads, taken by the controller; it also wakes for submissions.
class Inbox {
 public:
  void post(Completion completion);
  // Waits until something is posted or `deadline`; appends what was posted to `out`.
  void wait_until(SteadyClock::time_point deadline, std::vector<Completion>& out);
  void take(std::vector<Completion>& out);
  // Ends the controller's current (or next) wait_until early: a session's submission came.
  void wake();

 private:
  std::mutex mutex_;
  std::condition_variable posted_;
  std::vector<Completion> items_;
  bool woken_ = false;
};

// What the controller hands a worker thread: a copy of everything the batch needs.
struct Job {
  sched::ModelId model = -1;
  std::int64_t items = 0;
  std::vector<workload::QueryId> queries;
  std::vector<std::int32_t> sizes;  // items of each query
  ConfigKnobs config;
  // The cores the worker thread runs the batch on (an instance of a pinned machine, see
  // affinity.hpp); empty: its affinity is left as it is. Re-applied only when it changed.
  std::vector<int> cpus;
  sched::MachineId machine = -1;  // the machine those cores are of
  int group = -1;                 // the worker's group (-1: added), for the pin log
  Nanos dispatched = 0;           // run time of the dispatch, for the pin log
  // A session's batch: its queries' submitted inputs (instead of the run's; null: the run's) and
  // where the executor writes their outputs (null: nobody reads them).
  std::shared_ptr<const QueryInputs> inputs;
  std::shared_ptr<QueryOutputs> outputs;
};

class WorkerThread {
 public:
  // Starts the thread. `inputs` may be null (none).
  // `pins` (may be null) records each change of a machine instance's cores (Job::cpus).
  WorkerThread(sched::WorkerId worker, sched::HardwareId hardware, std::unique_ptr<Executor> executor, Rng rng,
               std::shared_ptr<const RunClock> clock, std::shared_ptr<Inbox> inbox,
               std::shared_ptr<const QueryInputs> inputs = nullptr, std::shared_ptr<PinLog> pins = nullptr);
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

  // Asks the running batch to stop (ExecRequest::stop) and the thread to end once it returns; a
  // batch that returns after this posts nothing.
  void request_stop() { thread_.request_stop(); }
  // After request_stop(): waits until the thread has returned or `deadline`; true if it returned
  // (destroying the object then joins at once).
  bool wait_returned(SteadyClock::time_point deadline);

  // Gives up on a thread whose batch has not returned: asks it to stop and keeps it in a
  // process-wide list, which joins and deletes it once its batch returns (see
  // abandoned_worker_threads() in servelab/serve/server.hpp). A thread still running when the
  // process exits is left running (never joined), so exit does not wait for it.
  static void abandon(std::unique_ptr<WorkerThread> thread);

 private:
  void loop(std::stop_token stop);
  // Pins this thread to job.cpus when they differ from what it has; the reason when that fails.
  std::string apply_cpus(const Job& job);

  sched::WorkerId worker_;
  sched::HardwareId hardware_;
  std::unique_ptr<Executor> executor_;
  std::vector<std::string> knobs_;
  std::string name_;
  Rng rng_;
  std::shared_ptr<const RunClock> clock_;
  std::shared_ptr<Inbox> inbox_;
  std::shared_ptr<const QueryInputs> inputs_;
  std::shared_ptr<PinLog> pins_;
  std::vector<int> cpus_;         // the cores this thread is pinned to by apply_cpus (empty: none yet)
  std::vector<int> failed_cpus_;  // the last cores the kernel refused, and why
  std::string pin_error_;
  std::mutex mutex_;
  std::condition_variable_any submitted_;
  std::condition_variable returned_cv_;
  std::optional<Job> job_;
  bool returned_ = false;  // loop() has ended (under mutex_)
  std::jthread thread_;    // last: started once the rest exists, stopped and joined first
};

}  // namespace servelab::serve
