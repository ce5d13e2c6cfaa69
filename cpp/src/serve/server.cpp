#include "servelab/serve/server.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "servelab/cluster/cluster_state.hpp"
#include "servelab/cluster/world_event.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/serve/added_workers.hpp"
#include "servelab/serve/llc_partition.hpp"
#include "servelab/serve/session.hpp"
#include "submitted_inputs.hpp"
#include "worker_thread.hpp"

namespace servelab::serve {
namespace {

using cluster::ClusterState;
using cluster::RunningBatch;
using sched::HardwareId;
using sched::WorkerId;

// Events in the tie order both worlds share (servelab/cluster/world_event.hpp).
using Kind = cluster::WorldEventKind;
using Pending = cluster::WorldEvent;

constexpr Nanos kNever = std::numeric_limits<Nanos>::max();
// The longest the controller sleeps between check_interrupt() calls.
constexpr Nanos kPollInterval = 20 * kNanosPerMilli;
// ClusterView::config's fallback that marks a knob as never set.
constexpr std::int64_t kUnset = std::numeric_limits<std::int64_t>::min();
// Distinct executor failures kept as drop reasons (the records index reasons with an int8), and
// how much of a message a reason keeps.
constexpr std::size_t kMaxFailureReasons = 16;
constexpr std::size_t kMaxReasonChars = 400;

// "executor failed: <executor>: <the exception's first line>".
std::string failure_message(const std::string& executor, const std::exception_ptr& error) {
  std::string what;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an exception that is not a std::exception";
  }
  what = what.substr(0, what.find('\n'));
  if (what.size() > kMaxReasonChars) what = what.substr(0, kMaxReasonChars) + "...";
  return str("executor failed: ", executor, ": ", what);
}

// The controller. Shared with the ClusterState it creates (through the state's deleter), so a
// Python policy that keeps the view after the run still has a valid clock; actions then fail.
class Server final : public cluster::WorldHooks, public std::enable_shared_from_this<Server> {
 public:
  Server(const cluster::RunSpec& spec, const ServeOptions& options)
      : spec_(spec),
        factory_(options.executor ? options.executor : emulated_executors()),
        spin_(options.spin),
        batch_timeout_(options.batch_timeout),
        inputs_(options.inputs),
        machine_cores_(options.machine_cores),
        pin_log_(options.pin_log),
        session_(options.session) {
    for (const auto& group : spec_.machines) declared_machines_ += group.count;
    if (spin_ < 0) throw ValueError(str("spin=", spin_, " ns must be >= 0"));
    if (batch_timeout_ < 0) {
      throw ValueError(str("batch_timeout=", batch_timeout_, " ns must be >= 0 (0: no timeout)"));
    }
    if (session_) {
      if (inputs_) throw ValueError("a session's inputs come with each submission; ServeOptions::inputs must be empty");
      submitted_ = std::make_shared<SubmittedInputs>();
      outputs_ = std::make_shared<QueryOutputs>();
    }
  }

  cluster::RunResult run(sched::Scheduler& scheduler) {
    try {
      return run_loop(scheduler);
    } catch (const std::exception& e) {  // a failed run still answers every query, with the error
      answer_unended(str("the serving session failed: ", std::string(e.what()).substr(0, kMaxReasonChars)));
      throw;
    } catch (...) {
      answer_unended("the serving session failed");
      throw;
    }
  }

 private:
  cluster::RunResult run_loop(sched::Scheduler& scheduler) {
    // Whatever happens, every worker thread is stopped and joined before run() returns.
    struct Shutdown {
      Server& s;
      ~Shutdown() { s.shut_down(); }
    } shutdown{*this};

    auto self = shared_from_this();
    state_ = std::shared_ptr<ClusterState>(new ClusterState(spec_, *this), [self](ClusterState* p) { delete p; });
    start_threads();
    // A session's arrivals are its submissions: the workload's stream is never read.
    std::unique_ptr<workload::QueryStream> stream;
    std::optional<workload::Query> next;
    if (!session_) {
      stream = spec_.workload->start(spec_.seed);
      next = stream->next();
    } else {
      state_->set_drop_listener([this](workload::QueryId id, std::string_view reason) { answer_dropped(id, reason); });
    }
    bool open = session_ != nullptr;  // a session still taking submissions
    Nanos last_arrival = 0;
    // Time 0 is now, once the threads run: setting up must not make the first arrivals late.
    // (Worker threads read the clock only after a submit, which orders them after this.)
    clock_->restart();
    now_ = clock_->now();
    scheduler.on_start(*state_, *state_);
    if (session_) {
      session_->attach([clock = clock_] { return clock->now(); }, [inbox = inbox_] { inbox->wake(); });
    }
    const char* cut_reason = "unserved at end of run";
    std::vector<Completion> posted;
    for (;;) {
      core::check_interrupt();
      inbox_->take(posted);
      collect(posted);
      enforce_timeouts(posted);
      if (session_) {
        if (session_->aborted()) {
          cut_reason = "session stopped";
          arrive_unheard(next);
          break;
        }
        // Whether it was open is read with the submissions: none can come after a closed take.
        if (open) open = session_->take(submitted_queue_);
        if (!next) next = next_submission();
      }
      const bool have_event = !events_.empty() || in_flight_ > 0;
      if (!next && !open && (!have_event || state_->quiescent())) break;
      const Nanos end = next || open ? kNever : last_arrival + std::min(spec_.drain_limit, kNever - last_arrival);
      const Nanos clock = clock_->now();
      // The earliest due thing: an event (completions are due once posted) or the next arrival.
      const bool event_due = !events_.empty() && events_.top().time <= clock;
      // An arrival goes after events of the same time (completions free workers first).
      const bool arrival_due = next && next->arrival <= clock && (!event_due || next->arrival < events_.top().time);
      if (arrival_due) {
        now_ = std::max(now_, clock);
        last_arrival = next->arrival;
        const auto id = state_->arrive(*next);
        next->id = id;
        exec_.resize(static_cast<std::size_t>(id) + 1, -1);
        taken_.resize(exec_.size(), -1);
        noticed_.resize(exec_.size(), -1);
        taken_[static_cast<std::size_t>(id)] = clock;
        if (remote_batches_) transport_.resize(exec_.size(), -1);
        if (session_) admit(*next);
        scheduler.on_arrival(*next, *state_, *state_);
        state_->place_if_unplaced(id);
        next = session_ ? next_submission() : stream->next();
        continue;
      }
      if (event_due && events_.top().time <= end) {
        const Pending e = events_.top();
        events_.pop();
        now_ = std::max(now_, clock);
        handle(e, scheduler);
        continue;
      }
      if (clock >= end) {
        now_ = std::max(now_, end);
        cut_reason = "cut off at end of run";
        break;
      }
      // Nothing due: sleep until the next arrival, timer or the end, a completion, or the next poll;
      // the last stretch before a deadline is spun (as in wait_until_precise) so that arrivals and
      // timers are taken up within microseconds, not a timed wake-up's tens of microseconds.
      Nanos wake = std::min(end, next ? next->arrival : kNever);
      if (!events_.empty()) wake = std::min(wake, events_.top().time);
      if (const Nanos deadline = next_deadline(); deadline < wake) wake = deadline;
      const Nanos left = wake - clock;  // > 0: nothing is due
      if (left <= spin_) {
        std::this_thread::yield();
      } else {
        inbox_->wait_until(clock_->at(clock + std::min(left - spin_, kPollInterval)), posted);
      }
    }
    auto result = state_->finish(now_, cut_reason, "serve", scheduler.describe());
    exec_.resize(result.queries.size_of(), -1);
    for (std::size_t id = 0; id < exec_.size(); ++id) {
      if (result.queries.status[id] != static_cast<std::int8_t>(cluster::QueryStatus::Completed)) exec_[id] = -1;
    }
    result.world_columns.emplace_back("exec_ns", std::move(exec_));
    // The loop's own stages (calibrate): when the controller took up each arrival, and when it
    // took up the end of each query's batch (-1: never).
    taken_.resize(result.queries.size_of(), -1);
    noticed_.resize(result.queries.size_of(), -1);
    result.world_columns.emplace_back("taken_ns", std::move(taken_));
    result.world_columns.emplace_back("noticed_ns", std::move(noticed_));
    // Only runs with batches served in other processes gain the column (in-process records are
    // unchanged).
    if (remote_batches_) {
      transport_.resize(result.queries.size_of(), -1);
      for (std::size_t id = 0; id < transport_.size(); ++id) {
        if (result.queries.status[id] != static_cast<std::int8_t>(cluster::QueryStatus::Completed)) transport_[id] = -1;
      }
      result.world_columns.emplace_back("transport_ns", std::move(transport_));
    }
    return result;
  }

 public:
  Nanos now() const override { return now_; }

  void start_batch(WorkerId worker, HardwareId, const RunningBatch& batch) override {
    check_running("dispatch");
    start_threads();
    slot(worker);
    running_[worker].assign(batch.queries.begin(), batch.queries.end());
    running_model_[worker] = batch.model;
    if (!out_of_service_[worker].empty()) {
      // As a remote worker whose connection is lost: every later batch fails at once, one reason.
      failures_[worker] = out_of_service_[worker];
      started_[worker] = now_;
      exec_by_worker_[worker] = 0;
      transport_by_worker_[worker] = -1;
      events_.push({now_, Kind::BatchDone, seq_++, worker});
      return;
    }
    WorkerThread& thread = *threads_[worker];
    Job job{batch.model, batch.items, {batch.queries.begin(), batch.queries.end()}, {}, {}, {}, -1, -1, 0, {}, {}};
    job.sizes.reserve(batch.queries.size());
    for (const auto id : batch.queries) job.sizes.push_back(state_->query(id).size);
    if (session_) {
      job.outputs = outputs_;
      // Submitted inputs where any query has one; else the executor derives its own, as in serve().
      for (const auto id : batch.queries) {
        if (submitted_->contains(id)) {
          job.inputs = submitted_;
          break;
        }
      }
    }
    const sched::MachineId machine = state_->machine(worker);
    const bool declared = machine < declared_machines_;
    std::optional<LlcShare> share;
    for (const auto& key : thread.knobs()) {
      if (key == kLlcFirstWayKnob || key == kLlcShareWaysKnob) {  // its model's partition on its machine
        if (!declared) continue;
        if (!share) share = instance_llc_share(*state_, spec_, worker);
        // Only where ways are in play: the instance's knob is set or its model holds some.
        if (share->ways > 0 || state_->config(worker, sched::kLlcWaysKnob, kUnset) != kUnset) {
          job.config.emplace(key, key == kLlcFirstWayKnob ? share->first : share->ways);
        }
        continue;
      }
      const std::int64_t value = state_->config(worker, key, kUnset);
      if (value != kUnset) job.config.emplace(key, value);
    }
    if (declared && static_cast<std::size_t>(machine) < machine_cores_.by_machine.size()) {
      job.cpus = instance_cores(*state_, worker, machine_cores_.by_machine[static_cast<std::size_t>(machine)]);
      job.machine = machine;
      if (const auto slot = spec_.group_of(worker)) job.group = static_cast<int>(slot->group);
      job.dispatched = now_;
    }
    awaiting_[worker] = 1;
    dispatched_[worker] = clock_->now();
    if (batch_timeout_ > 0) deadlines_.push({dispatched_[worker] + batch_timeout_, worker, ++batch_no_[worker]});
    ++in_flight_;
    thread.submit(std::move(job));
  }
  void start_timer(Nanos at, std::int64_t tag) override {
    check_running("set_timer");
    events_.push({at, Kind::Timer, seq_++, tag});
  }
  void start_transition(WorkerId worker, Nanos duration) override {
    check_running("add_worker/load_model");
    start_threads();  // add_worker: the new worker gets its thread now, ready when its startup ends
    events_.push({now_ + duration, Kind::TransitionDone, seq_++, worker});
  }

 private:
  void check_running(const char* action) const {
    if (ended_) throw RuntimeError(str(action, ": the serving run has ended (now=", now_, " ns)"));
  }

  // Gives every worker of the cluster that has no thread yet its executor and thread.
  void start_threads() {
    while (static_cast<WorkerId>(threads_.size()) < state_->num_workers()) {
      const auto w = static_cast<WorkerId>(threads_.size());
      const HardwareId hw = state_->hardware(w);
      std::unique_ptr<Executor> executor;
      if (spec_.group_of(w)) {
        executor = factory_(w, hw, spec_);
      } else {  // added during the run: the factory learns which group's executor it takes
        const AddedWorkerGroupScope scope(choose_added_worker_group(spec_, *state_, w));
        executor = factory_(w, hw, spec_);
      }
      threads_.push_back(std::make_unique<WorkerThread>(
          w, hw, std::move(executor), cluster::service_stream(spec_.seed, w), clock_, inbox_, inputs_, pin_log_));
    }
  }

  // Sizes the per-worker slots for `worker`.
  void slot(WorkerId worker) {
    const auto n = std::max(started_.size(), static_cast<std::size_t>(worker) + 1);
    started_.resize(n, 0);
    exec_by_worker_.resize(n, 0);
    transport_by_worker_.resize(n, -1);
    failures_.resize(n);
    running_.resize(n);
    running_model_.resize(n, -1);
    out_of_service_.resize(n);
    awaiting_.resize(n, 0);
    dispatched_.resize(n, 0);
    batch_no_.resize(n, 0);
  }

  // Turns posted completions into events at their finish times. A failed batch becomes a drop
  // reason for its queries (see handle()); only Ctrl-C stops the run.
  void collect(std::vector<Completion>& posted) {
    for (auto& c : posted) {
      slot(c.worker);
      // A batch that returned after its timeout: its queries are recorded already.
      if (!out_of_service_[c.worker].empty()) continue;
      awaiting_[c.worker] = 0;
      if (c.error) {
        try {
          std::rethrow_exception(c.error);
        } catch (const Interrupted&) {
          throw;
        } catch (const WorkerLost&) {  // the worker can serve no more: it leaves the cluster (handle())
          failures_[c.worker] = failure_reason(failure_message(threads_[c.worker]->executor_name(), c.error));
          out_of_service_[c.worker] = failures_[c.worker];
        } catch (...) {
          failures_[c.worker] = failure_reason(failure_message(threads_[c.worker]->executor_name(), c.error));
        }
      }
      started_[c.worker] = c.start;
      exec_by_worker_[c.worker] = c.exec;
      transport_by_worker_[c.worker] = c.transport;
      if (c.transport >= 0 && !remote_batches_) {
        remote_batches_ = true;
        transport_.assign(exec_.size(), -1);
      }
      events_.push({c.finish, Kind::BatchDone, seq_++, c.worker});
      --in_flight_;
    }
    posted.clear();
  }

  // The watchdog: fails every batch still running past its deadline (see server.hpp).
  void enforce_timeouts(std::vector<Completion>& posted) {
    if (next_deadline() > clock_->now()) return;
    const Nanos clock = clock_->now();
    // What was posted until now returned before the watchdog looked: it counts as returned.
    inbox_->take(posted);
    collect(posted);
    while (!deadlines_.empty() && deadlines_.top().at <= clock) {
      const Deadline d = deadlines_.top();
      deadlines_.pop();
      if (awaiting_[d.worker] && batch_no_[d.worker] == d.batch) time_out(d.worker, d.at);
    }
  }

  // The earliest deadline of a batch still running (kNever: none); forgets those that returned.
  Nanos next_deadline() {
    while (!deadlines_.empty()) {
      const Deadline& d = deadlines_.top();
      if (awaiting_[d.worker] && batch_no_[d.worker] == d.batch) return d.at;
      deadlines_.pop();
    }
    return kNever;
  }

  // The batch of `worker` ran past its deadline `at`: it fails at `at`, the worker's thread is
  // abandoned (it owns all it touches) and the worker is out of service for the rest of the run.
  void time_out(WorkerId worker, Nanos at) {
    auto& thread = threads_[worker];
    out_of_service_[worker] =
        failure_reason(str("executor failed: ", thread->executor_name(), ": worker ", worker,
                           " ran a batch past batch_timeout_ms=", static_cast<double>(batch_timeout_) / 1e6,
                           "; the worker is out of service for the rest of the run"));
    WorkerThread::abandon(std::move(thread));
    awaiting_[worker] = 0;
    --in_flight_;
    failures_[worker] = out_of_service_[worker];
    started_[worker] = dispatched_[worker];
    exec_by_worker_[worker] = at - dispatched_[worker];
    transport_by_worker_[worker] = -1;
    events_.push({at, Kind::BatchDone, seq_++, worker});
  }

  void handle(const Pending& e, sched::Scheduler& scheduler) {
    if (e.kind != Kind::BatchDone) return cluster::deliver(e, 0, *state_, scheduler);
    const auto worker = static_cast<WorkerId>(e.payload);
    for (const auto id : running_[worker]) {
      exec_[id] = exec_by_worker_[worker];
      noticed_[id] = now_;
    }
    if (remote_batches_) {
      for (const auto id : running_[worker]) transport_[static_cast<std::size_t>(id)] = transport_by_worker_[worker];
    }
    if (failures_[worker].empty()) {
      if (!session_) return cluster::deliver(e, started_[worker], *state_, scheduler);
      // The hook may hand the worker its next batch: its queries are answered from a copy.
      std::vector<workload::QueryId> done(running_[worker]);
      const Nanos start = started_[worker];
      const sched::ModelId model = running_model_[worker];
      cluster::deliver(e, start, *state_, scheduler);
      for (const auto id : done) answer_completed(id, start, e.time, worker, model);
      return;
    }
    // The scheduler learns the worker is free like after any batch; the queries end dropped.
    const auto done = state_->fail_batch(worker, started_[worker], e.time, failures_[worker]);
    failures_[worker].clear();
    // A worker out of service leaves the cluster as if the scheduler had removed it: its queued
    // queries go back to the central queue and no scheduler chooses it again.
    if (!out_of_service_[worker].empty() && state_->status(worker) == sched::WorkerStatus::Idle) {
      state_->remove_worker(worker);
    }
    scheduler.on_batch_done(done, *state_, *state_);
  }

  // --- the session's side ---

  // The next submission as a query (its id set by arrive()); the submission waits in current_.
  std::optional<workload::Query> next_submission() {
    if (submitted_queue_.empty()) return std::nullopt;
    current_ = std::move(submitted_queue_.front());
    submitted_queue_.pop_front();
    const auto& app = spec_.workload->apps()[static_cast<std::size_t>(current_.app)];
    workload::Query q;
    q.app = current_.app;
    q.size = current_.size;
    q.arrival = current_.arrival;
    q.deadline = current_.arrival + (current_.slo > 0 ? current_.slo : app.slo);
    q.accuracy_floor =
        workload::stored_accuracy_floor(current_.accuracy_floor >= 0 ? current_.accuracy_floor : app.accuracy_floor);
    return q;
  }

  // The current submission has arrived as query q: its input and its submitter are kept by id.
  void admit(const workload::Query& q) {
    if (current_.input) submitted_->add(q.id, std::move(*current_.input));
    asked_.emplace(q.id, Asked{std::move(current_.done), q.app, q.arrival, q.deadline});
    current_ = {};
  }

  // Aborted: the submissions taken but not arrived (`next` the first, taken from the queue) arrive
  // unheard by the scheduler, so the end of the run drops them with the rest (and their
  // submitters learn it).
  void arrive_unheard(std::optional<workload::Query>& next) {
    if (next) {
      next->id = state_->arrive(*next);
      admit(*next);
      next.reset();
    }
    session_->take(submitted_queue_);
    while (auto q = next_submission()) {
      q->id = state_->arrive(*q);
      admit(*q);
    }
  }

  void answer_completed(workload::QueryId id, Nanos start, Nanos finish, WorkerId worker, sched::ModelId model) {
    Outcome o;
    o.status = cluster::QueryStatus::Completed;
    o.start = start;
    o.finish = finish;
    o.worker = worker;
    o.model = model;
    o.output = outputs_->take(id);
    answer(id, std::move(o));
  }

  void answer_dropped(workload::QueryId id, std::string_view reason) {
    Outcome o;
    o.reason = reason;
    o.finish = now_;
    outputs_->take(id);  // a failed batch may have written some
    answer(id, std::move(o));
  }

  // Gives query `id`'s outcome to its submitter (once; a query not submitted has none).
  void answer(workload::QueryId id, Outcome&& o) {
    const auto it = asked_.find(id);
    if (it == asked_.end()) return;
    Asked asked = std::move(it->second);
    asked_.erase(it);
    submitted_->remove(id);
    o.id = id;
    o.app = asked.app;
    o.arrival = asked.arrival;
    o.deadline = asked.deadline;
    try {
      asked.done(std::move(o));
    } catch (...) {  // the submitter's error is its own: the loop goes on
    }
  }

  // The run failed: every query not answered yet is answered dropped with `reason`, and so is
  // every submission taken from the channel that never arrived (it has no record: id -1).
  void answer_unended(const std::string& reason) noexcept {
    if (!session_) return;
    while (!asked_.empty()) answer_dropped(asked_.begin()->first, reason);
    if (current_.done) submitted_queue_.push_front(std::move(current_));
    for (auto& submission : submitted_queue_) {
      Outcome o;
      o.app = submission.app;
      o.reason = reason;
      o.arrival = submission.arrival;
      try {
        submission.done(std::move(o));
      } catch (...) {  // the submitter's error is its own
      }
    }
    submitted_queue_.clear();
    current_ = {};
  }

  // `message` as a drop reason; past kMaxFailureReasons distinct ones, a shared reason.
  std::string failure_reason(std::string message) {
    if (failure_reasons_.count(message) || failure_reasons_.size() < kMaxFailureReasons) {
      failure_reasons_.insert(message);
      return message;
    }
    return str("executor failed (more than ", kMaxFailureReasons, " distinct errors; the first are other reasons)");
  }

  void shut_down() {
    ended_ = true;
    if (batch_timeout_ > 0) {  // a batch that ignores the stop gets the grace period, then is left
      for (auto& t : threads_) {
        if (t) t->request_stop();
      }
      const auto grace = std::chrono::nanoseconds(std::min(batch_timeout_, kMaxShutdownGrace));
      const auto deadline = SteadyClock::now() + grace;
      for (auto& t : threads_) {
        if (t && !t->wait_returned(deadline)) WorkerThread::abandon(std::move(t));
      }
    }
    threads_.clear();            // each one stops and joins its thread
    abandoned_worker_threads();  // joins the abandoned threads whose batches have returned since
    state_.reset();              // the state may live on (a Python view), holding this server, not the reverse
  }

  // A running batch's deadline: `batch` tells a later batch of the same worker from this one.
  struct Deadline {
    Nanos at;
    WorkerId worker;
    std::uint64_t batch;
    bool operator>(const Deadline& o) const { return at > o.at; }
  };

  const cluster::RunSpec& spec_;
  ExecutorFactory factory_;
  Nanos spin_;
  Nanos batch_timeout_;                        // 0: none
  std::shared_ptr<const QueryInputs> inputs_;  // shared with the worker threads
  MachineCores machine_cores_;
  std::shared_ptr<PinLog> pin_log_;  // shared with the worker threads
  sched::MachineId declared_machines_ = 0;
  // A session's: its channel, the submissions taken and not arrived yet (current_ the next), each
  // asked query's submitter, the submitted inputs and the executors' outputs (null outside one).
  struct Asked {
    OutcomeCallback done;
    std::int32_t app;
    Nanos arrival, deadline;
  };
  std::shared_ptr<SessionChannel> session_;
  std::deque<Submission> submitted_queue_;
  Submission current_;
  std::unordered_map<workload::QueryId, Asked> asked_;
  std::shared_ptr<SubmittedInputs> submitted_;
  std::shared_ptr<QueryOutputs> outputs_;
  // Shared with the worker threads, so that an abandoned one may outlive the run.
  std::shared_ptr<RunClock> clock_ = std::make_shared<RunClock>();
  Nanos now_ = 0;
  bool ended_ = false;
  std::shared_ptr<ClusterState> state_;
  std::int64_t seq_ = 0, in_flight_ = 0;
  cluster::WorldEventQueue events_;
  std::vector<Nanos> started_;                           // by worker: its current completed batch's start stamp
  std::vector<Nanos> exec_by_worker_;                    // by worker: that batch's exec time
  std::vector<Nanos> transport_by_worker_;               // by worker: that batch's transport time (-1: none)
  std::vector<std::string> failures_;                    // by worker: why that batch failed ("": it did not)
  std::vector<std::vector<workload::QueryId>> running_;  // by worker: the queries of its batch
  std::vector<sched::ModelId> running_model_;            // by worker: the model of that batch
  std::vector<std::string> out_of_service_;              // by worker: why its batches fail at once ("": in service)
  std::vector<char> awaiting_;                           // by worker: its thread runs a batch not yet collected
  std::vector<Nanos> dispatched_;                        // by worker: when its running batch was handed over
  std::vector<std::uint64_t> batch_no_;                  // by worker: batches it was handed (for deadlines_)
  std::priority_queue<Deadline, std::vector<Deadline>, std::greater<>> deadlines_;
  std::set<std::string> failure_reasons_;
  std::vector<Nanos> exec_;     // by query: its batch's exec time, -1 unless completed
  std::vector<Nanos> taken_;    // by query: when the controller took up its arrival
  std::vector<Nanos> noticed_;  // by query: when the controller took up its batch's end (-1: never)
  // By query: its batch's transport time (ExecReport::transport), kept once a batch reported one.
  std::vector<Nanos> transport_;
  bool remote_batches_ = false;
  std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
  std::vector<std::unique_ptr<WorkerThread>> threads_;  // by worker; null once abandoned
};

}  // namespace

cluster::RunResult serve(const cluster::RunSpec& spec, sched::Scheduler& scheduler, const ServeOptions& options) {
  spec.validate();
  cluster::check_run_memory(spec);
  return cluster::with_memory_context(spec, [&] { return std::make_shared<Server>(spec, options)->run(scheduler); });
}

}  // namespace servelab::serve
