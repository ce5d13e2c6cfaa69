// A serving session: the real serving loop (serve()) fed by requests as they come instead of a
// generated workload. The same cluster state, worker threads, executors and scheduler as serve():
// serve() is the loop fed by the workload's stream, a session the loop fed by submit().
//
// Session starts the loop on a thread of its own (the controller) and returns once the run has
// started (t = 0, the scheduler's on_start done, every initial executor built). submit() may be
// called from any thread: the query arrives at the session clock's time of the call, to the
// application's SLO, and `done` is called once with its Outcome, on the controller's thread, when
// it ends: completed (with the executor's output for it, where the executor writes outputs) or
// dropped (by the scheduler, a failing executor, or the end of the session). Callbacks run on the
// loop's thread: they must be quick and must not call submit() or close() on the same session
// (that would wait on itself); an exception from one is swallowed (the loop goes on).
//
// close() stops taking submissions (submit() then throws RuntimeError), lets what is queued or
// running finish (under the run's drain limit, as serve() after its last arrival), answers every
// query and returns the run's result (records and summaries as serve()'s). abort() ends at once:
// what is queued or running is dropped "session stopped". Every submitted query is answered once,
// whatever happens: if the loop fails (a scheduler hook throws), the queries not ended are
// answered dropped with the error and close() rethrows it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/cluster/records.hpp"
#include "servelab/sched/scheduler.hpp"
#include "servelab/serve/input_array.hpp"
#include "servelab/serve/server.hpp"

namespace servelab::serve {

// How a submitted query ended.
struct Outcome {
  workload::QueryId id = -1;  // its record in the result (-1: the session ended before it arrived)
  std::int32_t app = 0;
  cluster::QueryStatus status = cluster::QueryStatus::Dropped;
  std::string reason;                // why it was dropped ("" when completed)
  std::optional<InputArray> output;  // its rows of the batch's output (completed, and the executor writes outputs)
  Nanos arrival = 0, deadline = 0;   // session clock
  Nanos start = -1, finish = -1;     // its batch's start and end (-1 start: it never ran)
  sched::WorkerId worker = -1;
  sched::ModelId model = -1;
};

using OutcomeCallback = std::function<void(Outcome&&)>;

// One submitted request, as the controller takes it up.
struct Submission {
  std::int32_t app = 0;
  std::int32_t size = 1;            // items
  std::optional<InputArray> input;  // the query's input (executors read it as serve(inputs=...))
  OutcomeCallback done;
  Nanos arrival = 0;
  // The query's own goals (INFaaS's per-query latency and accuracy): its deadline is arrival + slo
  // and its accuracy floor this one; 0 / a negative floor: its application's.
  Nanos slo = 0;
  double accuracy_floor = -1;
};

// The channel between submitters and the controller (ServeOptions::session). Thread-safe.
class SessionChannel {
 public:
  // --- submitters ---
  // Stamps the arrival and queues it; RuntimeError once the session is closed (or not started).
  void submit(Submission submission);
  // No submission is taken after this; the loop drains and ends.
  void close();
  // The loop ends at once, dropping what is queued or running.
  void abort();

  // --- the controller ---
  // The run has started: `now` reads the session clock, `wake` wakes the controller.
  void attach(std::function<Nanos()> now, std::function<void()> wake);
  // Moves the queued submissions to `out`; false once closed (nothing more will come after these).
  bool take(std::deque<Submission>& out);
  bool aborted() const;
  // The loop has ended (or failed with `error`): every submission still queued, and every later
  // one, is answered dropped with `reason`.
  void end(const std::string& reason, std::exception_ptr error = nullptr);

  // --- the session's owner ---
  // Waits until the run started or ended; rethrows the loop's error if it failed to start.
  void wait_started();
  // Waits until the loop ended, at most until `deadline`; true if it did.
  bool wait_ended(std::chrono::steady_clock::time_point deadline);

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Submission> queued_;
  std::function<Nanos()> now_;
  std::function<void()> wake_;
  bool started_ = false, closed_ = false, aborted_ = false, ended_ = false;
  std::string end_reason_;
  std::exception_ptr error_;
};

class Session {
 public:
  // Starts the loop on `spec` with `scheduler` (fresh: schedulers keep per-run state); returns
  // once it runs. Errors from setting up (an invalid spec, an executor that cannot be built, a
  // failing on_start) are thrown here.
  Session(cluster::RunSpec spec, std::shared_ptr<sched::Scheduler> scheduler, ServeOptions options = {});
  // Aborts and joins the loop if it still runs.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Submits one query of application `app` with `size` items (ValueError naming the field and
  // value unless app is one of the spec's applications and 1 <= size <= kMaxQuerySize). `slo`
  // (> 0) and `accuracy_floor` (in [0, 1]) replace its application's for this query; 0 and -1:
  // the application's.
  void submit(std::int32_t app, std::int32_t size, std::optional<InputArray> input, OutcomeCallback done, Nanos slo = 0,
              double accuracy_floor = -1);
  void close() { channel_->close(); }
  void abort() { channel_->abort(); }
  // Waits at most until `deadline` for the loop to end; true if it has.
  bool wait(std::chrono::steady_clock::time_point deadline) { return channel_->wait_ended(deadline); }
  // After the loop ended: its result (once), or its error rethrown.
  cluster::RunResult result();

  const cluster::RunSpec& spec() const { return *spec_; }

 private:
  std::shared_ptr<const cluster::RunSpec> spec_;
  std::shared_ptr<sched::Scheduler> scheduler_;
  std::shared_ptr<SessionChannel> channel_ = std::make_shared<SessionChannel>();
  std::optional<cluster::RunResult> result_;
  std::exception_ptr error_;
  bool taken_ = false;
  std::thread thread_;  // last: started once the rest exists
};

// The largest size (items) one submitted query may carry.
inline constexpr std::int32_t kMaxQuerySize = 1 << 20;

}  // namespace servelab::serve
