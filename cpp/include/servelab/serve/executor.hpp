// Executors run one batch of a model on one worker of the real serving loop.
//
// The server gives every worker its own executor (ServeOptions::executor chooses which, per
// worker) and calls run() only from that worker's thread, one batch at a time, so an executor's
// own state needs no locking. Executors never see the cluster state or the scheduler: everything
// a batch needs is in the ExecRequest. Backends that run real models (LibTorch, oneDNN, CUDA)
// implement the same interface; EmulatedExecutor only waits the profiled latency, the way the
// Kairos artifact's servers emulate inference, to exercise the real loop without models.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/cluster/service_times.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/core/time.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/sched/scheduler.hpp"
#include "servelab/serve/query_inputs.hpp"
#include "servelab/serve/query_outputs.hpp"

namespace servelab::serve {

// Thrown by an executor whose worker can run no more batches (a remote worker process that died
// or whose connection broke): the batch fails with this message, and the serving loop takes the
// worker out of the cluster, as after a batch timeout, so that schedulers stop choosing it.
class WorkerLost : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

using ConfigKnobs = std::map<std::string, std::int64_t, std::less<>>;

// What run() may report about the batch it ran (the serving loop records it per query as exec_ns).
struct ExecReport {
  // The executor's own measure of the batch in ns (e.g. the model's forward pass, without making
  // the inputs); -1: not measured, the loop records run()'s wall time instead.
  Nanos compute = -1;
  // Time the batch spent travelling to another process and back (the round trip less the worker
  // process's own time); -1: the batch ran in this process. Recorded per query as transport_ns.
  Nanos transport = -1;
};

// One batch to run. References stay valid until run() returns.
struct ExecRequest {
  sched::WorkerId worker = -1;
  sched::HardwareId hardware = -1;
  sched::ModelId model = -1;
  std::int64_t items = 0;                      // total items of the batch
  std::span<const workload::QueryId> queries;  // the batch's queries
  // The worker's knobs that Executor::knobs() names, as they were when the batch was dispatched
  // (a knob that was never set is absent).
  const ConfigKnobs& config;
  // The worker's service stream, Rng(seed, "service").derive("worker<i>"): the simulator draws
  // the same worker's service times from it, so one dispatch sequence gives one set of times.
  Rng& rng;
  // Requested when the run ends or stops while the batch runs: return early if possible.
  std::stop_token stop;
  // Items of each query, parallel to `queries` (sums to `items`); empty: one item per query.
  std::span<const std::int32_t> sizes = {};
  // Where run() may report its own timing; null when nobody reads it.
  ExecReport* report = nullptr;
  // The run's user-supplied per-query inputs (serve(inputs=...)); null: the executor derives its own.
  const QueryInputs* inputs = nullptr;
  // Where run() writes each query's output (put_batch_rows), in a serving session whose
  // submitters read them; null: nobody reads outputs, write none.
  QueryOutputs* outputs = nullptr;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Runs the batch and returns when it is done. An exception (other than Interrupted) fails the
  // batch only: serve() records its queries as dropped with the message as the reason and goes on.
  // Should return early once request.stop is requested (the batch is abandoned); a backend that
  // cannot stop mid-batch finishes it, and serve() waits.
  virtual void run(const ExecRequest& request) = 0;
  // The ClusterView::config knobs run() reads (e.g. "intra_op_threads", "max_batch_items"), which a
  // scheduler may change at run time with Actions::set_config; fixed per executor.
  virtual std::vector<std::string> knobs() const { return {}; }
  // Bytes run() allocates per item of a batch (its inputs), so that a batch too large for memory
  // can be refused before anything is made for it; 0: not known.
  virtual double bytes_per_item() const { return 0; }
  // e.g. "emulated(service='sample')".
  virtual std::string describe() const = 0;
};

// How long before a deadline wait_until_precise() stops sleeping and starts spinning: a little
// more than a typical timed wake-up's lateness on Linux (timer slack 50 us plus scheduling).
inline constexpr Nanos kDefaultSpin = 200 * kNanosPerMicro;

// Sleeps until `spin` before `deadline`, then yields in a loop until it: wake-ups land within a
// few microseconds of the deadline instead of the tens to hundreds a plain sleep gives. Returns
// how late it returned in ns (>= 0), or a negative value when `stop` ended the wait early.
Nanos wait_until_precise(std::chrono::steady_clock::time_point deadline, std::stop_token stop = {},
                         Nanos spin = kDefaultSpin);

// Waits the profiled latency of the batch: sampled from the profile's distribution exactly like
// the simulator (profile.sample_ns with the worker's service stream), or the fixed statistic when
// `service` is set (RunSpec::service_statistic), via the same decision table.
class EmulatedExecutor final : public Executor {
 public:
  EmulatedExecutor(std::shared_ptr<const profile::Profile> profile, std::optional<profile::Statistic> service,
                   Nanos spin = kDefaultSpin);
  void run(const ExecRequest& request) override;
  std::string describe() const override;
  // The latency run() waits for this request (draws from request.rng when sampling).
  Nanos service_time(const ExecRequest& request);

 private:
  cluster::ServiceTimes times_;  // the simulator's service times, so both worlds agree
  Nanos spin_;
};

// Builds the executor of one worker. Called on the controller thread when the worker's thread
// starts (at the start of the run, or when add_worker adds it); must not return null.
using ExecutorFactory = std::function<std::unique_ptr<Executor>(sched::WorkerId worker, sched::HardwareId hardware,
                                                                const cluster::RunSpec& spec)>;

// The default: an EmulatedExecutor for every worker, following spec.service_statistic.
ExecutorFactory emulated_executors(Nanos spin = kDefaultSpin);

// Waits a constant latency per batch, whatever its size (0: returns at once): the serving loop's
// own overhead, measured without a model.
class ConstantExecutor final : public Executor {
 public:
  explicit ConstantExecutor(Nanos latency, Nanos spin = kDefaultSpin);
  void run(const ExecRequest& request) override;
  std::string describe() const override;

 private:
  Nanos latency_, spin_;
};

}  // namespace servelab::serve
