// The one scheduler interface. A policy is written once against it and runs unchanged in the
// simulator (virtual time) and in the real serving loop (wall clock): nothing here says which.
//
// The world calls the hooks one at a time, never concurrently, in time order. A hook reads the
// read-only ClusterView and acts through Actions:
//   - dispatch(worker, model, queries) starts a batch now on an idle worker;
//   - enqueue / enqueue_to_worker park a query in the central queue or a worker's own queue;
//   - drop(query, reason) ends a query without serving it;
//   - set_timer(at, tag) asks for on_timer(tag) at time `at`;
//   - add_worker / remove_worker / load_model / unload_model / set_config change the cluster
//     (autoscalers, model-less serving, parallelism knobs);
//   - add_instance puts a new model instance (worker) on an existing machine (co-location, see
//     machine.hpp); set_config(worker, "cores" / "llc_ways", n) partitions its machine.
// Queues are plain storage: only dispatch() starts work, so a per-worker-queue policy (RAMSIS)
// dispatches from the worker's queue when on_batch_done tells it that the worker is idle.
// An arrival that on_arrival neither dispatches, enqueues nor drops joins the central queue.
// Invalid actions (busy worker, model not loaded, batch beyond the profile, a query that is not
// pending) throw ValueError naming the action, the worker and the query.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "servelab/core/hierarchical_bitset.hpp"
#include "servelab/core/time.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/sched/machine.hpp"
#include "servelab/sched/query_queue.hpp"
#include "servelab/workload/query.hpp"

namespace servelab::sched {

using workload::Query;
using workload::QueryId;
using WorkerId = std::int32_t;
using ModelId = std::int32_t;
using HardwareId = std::int32_t;

enum class WorkerStatus : std::uint8_t {
  Starting,  // added by add_worker, not ready yet (paying already)
  Idle,      // ready for dispatch()
  Busy,      // running a batch
  Loading,   // loading a model
  Stopped,   // removed (its id stays valid; it never comes back)
};
std::string_view worker_status_name(WorkerStatus status);

// What on_batch_done reports.
struct BatchDone {
  WorkerId worker = -1;
  ModelId model = -1;
  std::int64_t items = 0;    // total items of the batch
  std::int32_t queries = 0;  // queries in the batch
  Nanos start = 0, finish = 0;
  Nanos measured() const { return finish - start; }
};

class ClusterView {
 public:
  virtual ~ClusterView() = default;
  virtual Nanos now() const = 0;
  virtual const profile::Profile& profile() const = 0;
  virtual profile::Statistic decision_statistic() const = 0;
  // The run's seed: a policy that randomises draws from Rng(seed(), "scheduler/<name>").
  virtual std::uint64_t seed() const = 0;

  // The workload's applications (a query's app is in 0..num_apps()-1); -1 where the view does
  // not know them. Lets a policy refuse parameters naming an application the run does not have.
  virtual std::int32_t num_apps() const { return -1; }

  // Workers: ids 0..num_workers()-1, stable for the whole run (stopped ones included).
  virtual WorkerId num_workers() const = 0;
  virtual HardwareId hardware(WorkerId worker) const = 0;
  virtual WorkerStatus status(WorkerId worker) const = 0;
  bool is_idle(WorkerId worker) const { return status(worker) == WorkerStatus::Idle; }
  // The idle workers, in no particular order (O(1) to get; changes as actions run).
  virtual std::span<const WorkerId> idle_workers() const = 0;
  // Idle workers for tie rules, of one hardware type or of any (kAnyHardware). The cluster state
  // answers from an index (O(log W) or O(1)); these defaults scan idle_workers().
  static constexpr HardwareId kAnyHardware = -1;
  virtual std::int32_t idle_count(HardwareId hardware) const;
  // The lowest idle worker id >= from, or -1. Of any hardware, from the bitset the view handed
  // over (publish_idle_set), without a virtual call: fcfs asks this on every arrival.
  WorkerId lowest_idle(HardwareId hardware, WorkerId from) const {
    if (hardware == kAnyHardware && idle_set_ && from >= 0) {
      return static_cast<WorkerId>(idle_set_->find_next(static_cast<std::size_t>(from)));
    }
    return lowest_idle_of(hardware, from);
  }
  // The idle worker that has been idle the longest (least recently used), or -1.
  virtual WorkerId longest_idle(HardwareId hardware) const;
  // The i-th idle worker (0 <= i < idle_count) in a fixed but unspecified order.
  virtual WorkerId nth_idle(HardwareId hardware, std::int32_t i) const;
  // Grows each time a worker becomes idle: among idle workers, smaller = idle for longer.
  virtual std::uint64_t idle_since(WorkerId worker) const { return static_cast<std::uint64_t>(worker); }
  // When the worker's current batch or model load is predicted to end (decision statistic);
  // now() for an idle worker.
  virtual Nanos busy_until(WorkerId worker) const = 0;
  virtual const std::vector<ModelId>& models(WorkerId worker) const = 0;
  virtual bool has_model(WorkerId worker, ModelId model) const = 0;
  virtual std::int64_t config(WorkerId worker, std::string_view key, std::int64_t fallback) const = 0;
  // The last completed batch's measured latency on this worker (-1 before the first).
  virtual Nanos last_latency(WorkerId worker) const = 0;

  // Machines (machine.hpp): ids 0..num_machines()-1. The defaults describe a view without
  // declared machines: every worker is a machine of its own, with no resources modelled.
  virtual MachineId num_machines() const { return num_workers(); }
  virtual MachineId machine(WorkerId worker) const { return worker; }
  // The instances (workers) a machine hosts, stopped ones included, in the order they came.
  virtual std::span<const WorkerId> instances(MachineId machine) const;
  virtual MachineResources machine_resources(MachineId machine) const { return {}; }
  // What no instance has taken yet: cores and LLC ways not given by the instances' knobs, memory
  // not held by their loaded models (0 where the machine does not model the resource).
  virtual MachineResources free_resources(MachineId machine) const { return machine_resources(machine); }
  // The model of the worker's running batch, or -1 when it runs none.
  virtual ModelId running_model(WorkerId worker) const { return -1; }
  // How many other instances on the worker's machine run a batch now.
  std::int32_t co_runners(WorkerId worker) const;

  // Queues, oldest first. The central queue is read through a pointer the view gives once: most
  // policies look at it on every arrival and every batch end, and this way without a call.
  const std::deque<QueryId>& central_queue() const { return *central_queue_; }
  virtual const QueryQueue& worker_queue(WorkerId worker) const = 0;
  // worker_queue(worker).size(), from the lengths the view handed over (publish_queue_lengths)
  // without reading the queue: per-worker-queue policies ask it at every batch end, and with
  // thousands of workers the queue itself is one more cache miss there.
  std::int64_t worker_queue_length(WorkerId worker) const {
    if (static_cast<std::uint32_t>(worker) < queue_length_count_) return queue_lengths_[worker];
    return static_cast<std::int64_t>(worker_queue(worker).size());
  }
  virtual Query query(QueryId id) const = 0;  // any query that has arrived

  // The profile's decision latency of `items` on the worker's hardware (ValueError beyond the
  // profile's max batch), and the largest batch the profile covers (0: none).
  virtual Nanos predicted_latency(WorkerId worker, ModelId model, std::int64_t items) const = 0;
  virtual std::int64_t max_batch(WorkerId worker, ModelId model) const = 0;
  // The first model loaded on the worker whose accuracy meets the query's floor (a model without
  // a known accuracy meets only a 0 floor) and whose profile covers the query's size; -1 if none.
  // Most policies ask it once per query (through pick_model): a query without a floor that the
  // worker's first model covers is answered from the table the view handed over
  // (publish_first_models), without a virtual call; anything else asks model_for_of().
  ModelId model_for(WorkerId worker, const Query& query) const {
    if (static_cast<std::uint32_t>(worker) < first_model_count_ && !(query.accuracy_floor > 0)) {
      const FirstModel& first = first_models_[worker];
      if (query.size <= first.max_items) return first.model;
    }
    return model_for_of(worker, query);
  }

  // What a view overrides for the two calls above (policies call those): lowest_idle() of one
  // hardware type (of any too without a published set), and model_for() in full. The defaults
  // scan idle_workers(), and ask models() and max_batch().
  virtual WorkerId lowest_idle_of(HardwareId hardware, WorkerId from) const;
  virtual ModelId model_for_of(WorkerId worker, const Query& query) const;

  // A worker's first model and the largest batch the profile covers for it on the worker's
  // hardware (-1 for both: no model, or the profile covers none).
  struct FirstModel {
    ModelId model = -1;
    std::int32_t max_items = -1;
  };

 protected:
  // `central`: the view's central queue, for as long as the view lives.
  explicit ClusterView(const std::deque<QueryId>& central) : central_queue_(&central) {}
  ClusterView(const ClusterView&) = delete;
  ClusterView& operator=(const ClusterView&) = delete;
  // What a view keeps for the fast paths of lowest_idle(), model_for() and
  // worker_queue_length(), handed over (again whenever it moves or grows): its idle workers as a
  // bitset, each worker's first model and its queue's length by worker id. Null (the default):
  // those calls ask lowest_idle_of(), model_for_of() and worker_queue().
  void publish_idle_set(const core::HierarchicalBitset* idle) { idle_set_ = idle; }
  void publish_first_models(const FirstModel* by_worker, std::size_t workers) {
    first_models_ = by_worker;
    first_model_count_ = static_cast<std::uint32_t>(workers);
  }
  void publish_queue_lengths(const std::int64_t* by_worker, std::size_t workers) {
    queue_lengths_ = by_worker;
    queue_length_count_ = static_cast<std::uint32_t>(workers);
  }

 private:
  const std::deque<QueryId>* central_queue_;
  const core::HierarchicalBitset* idle_set_ = nullptr;
  const FirstModel* first_models_ = nullptr;
  std::uint32_t first_model_count_ = 0;
  const std::int64_t* queue_lengths_ = nullptr;
  std::uint32_t queue_length_count_ = 0;
  mutable WorkerId lone_instance_ = -1;  // instances()'s answer without declared machines
};

class Actions {
 public:
  virtual ~Actions() = default;
  virtual void dispatch(WorkerId worker, ModelId model, std::span<const QueryId> queries) = 0;
  virtual void enqueue(QueryId query) = 0;
  virtual void enqueue_to_worker(WorkerId worker, QueryId query) = 0;
  virtual void drop(QueryId query, std::string_view reason) = 0;
  virtual void set_timer(Nanos at, std::int64_t tag) = 0;  // at >= now
  // A new worker; it pays from now and becomes Idle after `startup` (then on_worker_ready).
  virtual WorkerId add_worker(std::string_view hardware, std::span<const ModelId> models, Nanos startup) = 0;
  // Stops the worker once its current batch ends; its queued queries move to the central queue.
  virtual void remove_worker(WorkerId worker) = 0;
  // Loads a model on an idle worker: Loading for the profile's load time, then on_worker_ready.
  virtual void load_model(WorkerId worker, ModelId model) = 0;
  virtual void unload_model(WorkerId worker, ModelId model) = 0;
  // A named integer knob of the worker (e.g. "intra_op_threads"); executors may read it. The
  // machine knobs "cores" and "llc_ways" must fit what the machine has left (ValueError).
  virtual void set_config(WorkerId worker, std::string_view key, std::int64_t value) = 0;
  // A new instance of `models` on an existing machine (co-location): Loading for the longest of
  // its models' load times, then on_worker_ready; it costs nothing beyond its machine. ValueError
  // when the machine is stopped or its memory cannot hold the models, naming what is missing.
  virtual WorkerId add_instance(MachineId machine, std::span<const ModelId> models);
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // The policy and its parameters, e.g. "fcfs(prefer='g4dn.xlarge')".
  virtual std::string describe() const = 0;
  virtual void on_start(const ClusterView& view, Actions& actions) {}
  virtual void on_arrival(const Query& query, const ClusterView& view, Actions& actions) = 0;
  // The worker just finished a batch and is idle again (unless it is being removed).
  virtual void on_batch_done(const BatchDone& done, const ClusterView& view, Actions& actions) {}
  virtual void on_timer(std::int64_t tag, const ClusterView& view, Actions& actions) {}
  // A worker became Idle after starting up or loading a model.
  virtual void on_worker_ready(WorkerId worker, const ClusterView& view, Actions& actions) {}
};

}  // namespace servelab::sched
