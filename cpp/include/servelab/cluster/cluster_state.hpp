// The cluster as both worlds see it: workers, queues, per-query records and the validation of
// every action. The simulator and the real serving loop differ only in their WorldHooks (how time
// passes and how a batch runs); everything a policy can observe or do lives here, once.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/cluster/idle_index.hpp"
#include "servelab/cluster/records.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::cluster {

using sched::BatchDone;
using sched::HardwareId;
using sched::ModelId;
using sched::Query;
using sched::QueryId;
using sched::WorkerId;
using sched::WorkerStatus;

// A batch handed to a world to run.
struct RunningBatch {
  ModelId model = -1;
  // One query is held in the worker's slot itself: most batches are one query, and a separate
  // allocation per worker would be one more cache miss at every dispatch with many workers.
  boost::container::small_vector<QueryId, 1> queries;
  std::int64_t items = 0;
  Nanos dispatched = 0;
};

// How a world makes things happen; ClusterState calls these from inside actions.
class WorldHooks {
 public:
  virtual ~WorldHooks() = default;
  virtual Nanos now() const = 0;
  // A world whose time is a variable it advances itself (the simulator) points `clock_` at it, so
  // the state reads the time on every action without a virtual call; null: the state asks now().
  const Nanos* clock() const { return clock_; }
  // Run the batch; call ClusterState::finish_batch(worker, start, finish) when it is done.
  virtual void start_batch(WorkerId worker, HardwareId hardware, const RunningBatch& batch) = 0;
  virtual void start_timer(Nanos at, std::int64_t tag) = 0;
  // A startup or model load lasting `duration`; call ClusterState::finish_transition(worker) after.
  virtual void start_transition(WorkerId worker, Nanos duration) = 0;
  // The worker's knobs changed (set_config): a world that times batches by their machine's
  // partition re-times them. Default: nothing.
  virtual void config_changed(WorkerId worker) {}

 protected:
  const Nanos* clock_ = nullptr;
};

class ClusterState final : public sched::ClusterView,
                           public sched::Actions,
                           public std::enable_shared_from_this<ClusterState> {
 public:
  // `spec` must be valid (RunSpec::validate()).
  ClusterState(const RunSpec& spec, WorldHooks& hooks);

  // --- the world's side ---
  // A new query; returns its id (= records index). Its where() is "arrived, unplaced".
  // Inline, once per query. The row was appended unwritten (see grow_rows): its other columns are
  // written when the query ends (end_dropped, finish_batch).
  QueryId arrive(const Query& q) {
    if (rows_ == records_.size_of()) grow_rows();
    // The row in a local: the int64 and int8 stores may alias rows_, which would be read again.
    const std::size_t row = rows_;
    const auto id = arrived();
    records_.app[row] = static_cast<std::int16_t>(q.app);
    records_.size[row] = q.size;
    records_.arrival[row] = q.arrival;
    records_.deadline[row] = q.deadline;
    records_.worker[row] = kUnplaced;  // where() while pending
    records_.status[row] = kPending;
    rows_ = row + 1;
    if (stream_ && rows_ >= stream_at_) stream_out();
    return id;
  }
  // After on_arrival: a query the policy left unplaced joins the central queue. Inline: once per
  // arrival, and most policies have placed or dispatched it already.
  void place_if_unplaced(QueryId id) {
    if (where(id) == kUnplaced) join_central(id);
  }
  BatchDone finish_batch(WorkerId worker, Nanos start, Nanos finish);
  // The batch failed (its executor threw): the worker is freed as by finish_batch (its busy time
  // counts, its batch count does not), and the batch's queries end dropped with `reason`.
  BatchDone fail_batch(WorkerId worker, Nanos start, Nanos finish, std::string_view reason);
  // Ends a startup or model load; true if the worker is Idle now (call on_worker_ready).
  bool finish_transition(WorkerId worker);
  // When the worker's running batch was dispatched (the simulator starts it then).
  Nanos batch_dispatched(WorkerId worker) const { return workers_[worker].batch.dispatched; }
  // A hint: the worker's slot will be read soon (its batch is the next event).
  void prefetch_worker(WorkerId worker) const {
    const auto* slot = reinterpret_cast<const char*>(&workers_[worker]);
    __builtin_prefetch(slot);
    __builtin_prefetch(slot + 64);
  }
  // Called as each query ends dropped (by the scheduler, a failed batch or the end of the run),
  // after its record is written: a serving session answers its submitter. Empty: nothing.
  void set_drop_listener(std::function<void(QueryId, std::string_view reason)> listener) {
    drop_listener_ = std::move(listener);
  }
  // Whether nothing is queued, running or loading (the run may end once arrivals have).
  bool quiescent() const;
  bool has_pending_queries() const;
  // Drops everything still pending or running with `reason`, settles worker time, fills metadata.
  RunResult finish(Nanos end, std::string_view reason, std::string world, std::string scheduler);

  // --- ClusterView ---
  Nanos now() const override { return time(); }
  const profile::Profile& profile() const override { return *profile_; }
  profile::Statistic decision_statistic() const override { return decision_; }
  std::uint64_t seed() const override { return seed_; }
  std::int32_t num_apps() const override { return static_cast<std::int32_t>(app_names_.size()); }
  WorkerId num_workers() const override { return worker_count_; }
  HardwareId hardware(WorkerId worker) const override { return at(worker).hardware; }
  WorkerStatus status(WorkerId worker) const override { return at(worker).status; }
  std::span<const WorkerId> idle_workers() const override { return idle_.members(IdleIndex::kAll); }
  std::int32_t idle_count(HardwareId hardware) const override {
    return static_cast<std::int32_t>(idle_.members(hardware).size());
  }
  WorkerId longest_idle(HardwareId hardware) const override { return idle_.longest_idle(hardware); }
  WorkerId nth_idle(HardwareId hardware, std::int32_t i) const override;
  std::uint64_t idle_since(WorkerId worker) const override { return idle_.idle_since(at_checked(worker)); }
  Nanos busy_until(WorkerId worker) const override;
  const std::vector<ModelId>& models(WorkerId worker) const override { return at(worker).models; }
  bool has_model(WorkerId worker, ModelId model) const override;
  std::int64_t config(WorkerId worker, std::string_view key, std::int64_t fallback) const override;
  Nanos last_latency(WorkerId worker) const override { return at(worker).last_latency; }
  sched::MachineId num_machines() const override { return static_cast<sched::MachineId>(machines_.size()); }
  sched::MachineId machine(WorkerId worker) const override { return at(worker).machine; }
  std::span<const WorkerId> instances(sched::MachineId machine) const override {
    const auto& list = machine_at(machine, "instances").instances;
    return {list.data(), list.size()};
  }
  sched::MachineResources machine_resources(sched::MachineId machine) const override {
    return machine_at(machine, "machine_resources").resources;
  }
  sched::MachineResources free_resources(sched::MachineId machine) const override;
  ModelId running_model(WorkerId worker) const override {
    const Worker& w = at(worker);
    return w.status == WorkerStatus::Busy ? w.batch.model : -1;
  }
  // Whether the run declared machines (RunSpec::machines): without, every machine is one worker.
  bool has_declared_machines() const { return declared_machines_ > 0; }
  const sched::QueryQueue& worker_queue(WorkerId worker) const override { return at(worker).queue; }
  Query query(QueryId id) const override;
  Nanos predicted_latency(WorkerId worker, ModelId model, std::int64_t items) const override;
  std::int64_t max_batch(WorkerId worker, ModelId model) const override;

  // --- Actions ---
  void dispatch(WorkerId worker, ModelId model, std::span<const QueryId> queries) override;
  void enqueue(QueryId query) override;
  void enqueue_to_worker(WorkerId worker, QueryId query) override;
  void drop(QueryId query, std::string_view reason) override;
  void set_timer(Nanos at, std::int64_t tag) override;
  WorkerId add_worker(std::string_view hardware, std::span<const ModelId> models, Nanos startup) override;
  void remove_worker(WorkerId worker) override;
  void load_model(WorkerId worker, ModelId model) override;
  void unload_model(WorkerId worker, ModelId model) override;
  void set_config(WorkerId worker, std::string_view key, std::int64_t value) override;
  WorkerId add_instance(sched::MachineId machine, std::span<const ModelId> models) override;

  WorkerId lowest_idle_of(HardwareId hardware, WorkerId from) const override {
    return idle_.lowest_from(hardware, from);
  }
  ModelId model_for_of(WorkerId worker, const Query& query) const override { return model_for_scan(at(worker), query); }

 private:
  // Where a pending query is: >= 0 in that worker's queue, or one of these. Kept in the records'
  // worker column while the query's status is kPending (no separate array), so a query costs
  // only its record; ending a query writes its real worker (or -1) and status over them.
  static constexpr std::int32_t kUnplaced = -1, kCentral = -2, kRunning = -3, kEnded = -4;
  static constexpr std::int8_t kPending = 2;
  std::int32_t where(QueryId id) const {
    return id >= base_ && records_.status[id - base_] == kPending ? records_.worker[id - base_] : kEnded;
  }
  void set_where(QueryId id, std::int32_t w) { records_.worker[id - base_] = w; }
  QueryId arrived() const { return base_ + static_cast<QueryId>(rows_); }
  // The time from the world's clock variable when it has one (no virtual call).
  Nanos time() const { return clock_ ? *clock_ : hooks_.now(); }
  // Appends a block of unwritten rows (records_ then has more rows than rows_, the ones in use,
  // and only those are read; finish() and stream_out() cut it back to rows_).
  void grow_rows();
  // Streamed runs: summarises and frees the records of the ended queries before the oldest
  // pending one (records_ then starts at id base_).
  void stream_out();
  static constexpr std::int64_t kStreamBlock = 1 << 16;

  // The models a worker holds, by id (>= 0): bits in the worker's slot for ids below 64 (no
  // pointer to follow on every dispatch), words behind a pointer for the rest (16 bytes in all,
  // so the bits end the slot's second line and the queue has the third to itself).
  class ModelSet {
   public:
    bool contains(ModelId m) const {
      if (m < 64) return (low_ >> m) & 1;
      const auto word = static_cast<std::size_t>(m - 64) / 64;
      return high_ && word < high_->size() && ((*high_)[word] >> ((m - 64) % 64)) & 1;
    }
    void set(ModelId m, bool on) {
      std::uint64_t* word = &low_;
      if (m >= 64) {
        const auto i = static_cast<std::size_t>(m - 64) / 64;
        if (!high_) high_ = std::make_unique<std::vector<std::uint64_t>>();
        if (i >= high_->size()) high_->resize(i + 1, 0);
        word = &(*high_)[i];
      }
      const std::uint64_t bit = std::uint64_t{1} << (m % 64);
      *word = on ? (*word | bit) : (*word & ~bit);
    }

   private:
    std::uint64_t low_ = 0;
    std::unique_ptr<std::vector<std::uint64_t>> high_;  // null until a model id >= 64
  };

  // What every model choice, batch start and batch end touches comes first, in the first two
  // cache lines of a line-aligned slot (the engine prefetches them at a batch's end): with many
  // workers each of them misses in the cache, and with 100 the slots' hot lines alone take two
  // fifths of a 32 kB first-level cache. The worker's queue, ids and all, is the third line.
  struct alignas(64) Worker {
    HardwareId hardware = 0;
    WorkerStatus status = WorkerStatus::Idle;
    bool removing = false;
    // Machines, in the line's padding (the slot keeps its size and offsets): whether it pays its
    // machine (its first instance) and whether the machine is a declared one (shared price).
    bool pays = true, on_declared = false;
    ModelId loading = -1;
    sched::MachineId machine = -1;
    Nanos busy_until = 0, last_latency = -1, busy = 0;
    std::int64_t batches = 0;
    QueryId batch_first = -1;  // batch.queries[0], here so a one-query batch ends without its vector
    RunningBatch batch;
    ModelSet has_model;  // its bits for ids below 64 end the second line (dispatch checks them)
    sched::QueryQueue queue;
    std::vector<ModelId> models;  // in load order (first_models_ follows every change)
    std::map<std::string, std::int64_t, std::less<>> config;
    Nanos added = 0, stopped = -1;
  };

  // A machine: a declared one (RunSpec::machines) hosting its groups' instances, or the machine
  // of one worker that was not placed on one.
  struct Machine {
    HardwareId hardware = 0;
    sched::MachineResources resources;
    boost::container::small_vector<WorkerId, 1> instances;
    bool declared = false;
    double price_share = 1.0;  // of a batch's time at the price: 1 / its declared instances
  };
  const Machine& machine_at(sched::MachineId machine, std::string_view call) const {
    if (static_cast<std::uint32_t>(machine) >= machines_.size()) [[unlikely]]
      bad_machine(machine, call);
    return machines_[static_cast<std::size_t>(machine)];
  }
  [[noreturn]] void bad_machine(sched::MachineId machine, std::string_view call) const;
  // Memory (MB) the worker's models (and the one it is loading) take on its machine.
  double memory_of(const Worker& w) const;
  // ValueError from `action` when the machine's free memory cannot take `extra_mb` more.
  void check_memory_fits(sched::MachineId machine, double extra_mb, std::string_view action) const;

  // Inline: every action checks its worker id; the message is built out of line.
  const Worker& at(WorkerId worker) const {
    // One unsigned compare covers both ends (a negative id wraps above any count).
    if (static_cast<std::uint32_t>(worker) >= static_cast<std::uint32_t>(worker_count_)) [[unlikely]]
      bad_worker(worker);
    return workers_[worker];
  }
  [[noreturn]] void bad_worker(WorkerId worker) const;
  WorkerId at_checked(WorkerId worker) const { return (void)at(worker), worker; }
  Worker& at(WorkerId worker) { return const_cast<Worker&>(std::as_const(*this).at(worker)); }
  // Inline for the valid case: a pending query, not running; bad_query says what is wrong.
  void check_query(QueryId id, std::string_view action) const {
    if (id >= base_ && id < arrived()) {
      const auto w = where(id);
      if (w != kRunning && w != kEnded) return;
    }
    bad_query(id, action);
  }
  [[noreturn]] void bad_query(QueryId id, std::string_view action) const;
  void unlink(QueryId id);        // removes a pending query from whichever queue holds it
  void join_central(QueryId id);  // an unplaced query joins the back of the central queue
  // A one-query dispatch that passes every check of dispatch(), applied without its loops and
  // error paths; false (nothing changed) when any check fails, and dispatch() then says which.
  // Inline (defined in the .cpp, its only user): dispatch() of one query is this and start().
  [[gnu::always_inline]] inline bool dispatch_one(WorkerId worker, ModelId model, QueryId id);
  // dispatch() of every other batch, with its checks and errors: out of line, so dispatch()
  // itself is the one-query path with nothing to save and restore around it.
  [[gnu::noinline]] void dispatch_checked(WorkerId worker, ModelId model, std::span<const QueryId> queries);
  // Starts the validated batch already in w.batch.queries (`items` in all) on the idle worker.
  [[gnu::always_inline]] inline void start(Worker& w, WorkerId worker, ModelId model, std::int64_t items,
                                           Nanos predicted, Nanos now);
  // finish_batch() of a batch of several queries: writes their records (out of line, so the
  // one-query end keeps its few registers).
  [[gnu::noinline]] void end_rows(const Worker& w, WorkerId worker, Nanos start, Nanos finish, double batch_cost);
  void set_status(WorkerId worker, WorkerStatus status);
  const std::vector<Nanos>& table(HardwareId hardware, ModelId model) const {
    const auto& t = tables_[static_cast<std::size_t>(hardware) * accuracy_.size() + static_cast<std::size_t>(model)];
    return t.empty() ? load_table(hardware, model) : t;
  }
  const std::vector<Nanos>& load_table(HardwareId hardware, ModelId model) const;
  void check_model(ModelId model, std::string_view action) const {
    if (model < 0 || model >= static_cast<ModelId>(accuracy_.size())) [[unlikely]]
      bad_model(model, action);
  }
  [[noreturn]] void bad_model(ModelId model, std::string_view action) const;
  // model_for() in full: every model in order, floors and unloaded tables.
  ModelId model_for_scan(const Worker& w, const Query& query) const;
  // Brings first_models_[worker] up to date with its models (after any change to them).
  void update_first_model(WorkerId worker);
  // Brings queue_lengths_[worker] up to date with its queue (after any change to it).
  void update_queue_length(WorkerId worker) {
    queue_lengths_[worker] = static_cast<std::int64_t>(workers_[worker].queue.size());
  }
  std::int8_t reason_index(std::string_view reason);
  void end_dropped(QueryId id, std::string_view reason);
  // A new worker on `machine` (-1: a machine of its own).
  WorkerId add_worker_now(HardwareId hardware, std::vector<ModelId> models,
                          const std::map<std::string, std::int64_t>& config, sched::MachineId machine = -1);

  std::shared_ptr<const profile::Profile> profile_;
  profile::Statistic decision_;
  WorldHooks& hooks_;
  const Nanos* clock_;  // hooks_.clock()
  std::uint64_t seed_;
  std::vector<Worker> workers_;
  std::vector<Machine> machines_;
  sched::MachineId declared_machines_ = 0;   // machines 0..declared_machines_-1 were declared
  std::vector<FirstModel> first_models_;     // by worker, handed to the view's base (model_for's fast path)
  std::vector<std::int64_t> queue_lengths_;  // by worker, handed to the view's base (worker_queue_length)
  WorkerId worker_count_ = 0;                // workers_.size(), kept: every action checks its worker id against it
  IdleIndex idle_;
  std::deque<QueryId> central_;
  std::int64_t running_ = 0, transitions_ = 0;
  QueryRecords records_;
  std::size_t rows_ = 0;  // records_'s rows in use (the rest are defaults, appended ahead)
  QueryId base_ = 0;      // the id of records_'s first entry (0 unless streamed)
  RecordMode record_mode_;
  std::shared_ptr<StreamSummary> stream_;  // set when streamed
  std::size_t stream_at_ = kStreamBlock, peak_bytes_ = 0;
  std::uint64_t sample_key_ = 0;
  QueryRecords sampled_;
  std::vector<std::int64_t> sampled_ids_;
  std::vector<QueryId> batch_ids_;  // dispatch's duplicate check, reused (no allocation per batch)
  std::vector<std::string> reasons_;
  std::function<void(QueryId, std::string_view)> drop_listener_;  // set_drop_listener
  std::vector<Nanos> app_slo_;
  std::vector<float> app_floor_;
  std::vector<std::string> app_names_;
  std::vector<float> accuracy_;                     // by model
  std::vector<double> price_per_ns_;                // by hardware
  mutable std::vector<std::vector<Nanos>> tables_;  // decision_table() by hardware * models + model, lazily
};

}  // namespace servelab::cluster
