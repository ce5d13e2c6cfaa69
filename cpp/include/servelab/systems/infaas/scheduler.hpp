// INFaaS's registered policies: `infaas` (per-query getVariant + model autoscaling) and the
// Clipper+ baseline (fixed pre-loaded variants). See infaas_scheduler.cpp for what each does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "servelab/sched/scheduler.hpp"

namespace servelab::infaas {
// The VM-Autoscaler's settings (Sec. 4.2.3, 5); max_workers = 0 turns it off.
struct VmScaling {
  std::int64_t max_workers = 0;
  double startup_s = 20.0;  // "the time to instantiate VMs (20-30 seconds)"
  double poll_s = 2.0;      // the controller's polling period
  double threshold = 0.8;   // utilisation and overloaded-worker share
  double idle_s = 60.0;     // a started worker idle this long is stopped (our choice)
};

// The periodic Model-Autoscaler (Sec. 4.2.2); period_s = 0 turns it off (per-query scaling only).
struct ModelScaling {
  double period_s = 1.0;  // Sec. 5: "a 1 second polling interval"
  double slack = 1.05;    // Sec. 5: the slack-threshold (minimum headroom)
  double window_s = 5.0;  // the load is measured over this window (our choice)
  // Sec. 4.2.3's last line: requests are dispatched to workers by online bin packing (best fit:
  // the busiest instance of the chosen variant that still meets the deadline) instead of
  // getVariant's least-loaded worker.
  bool best_fit = false;
  // The load is the larger of the window's average and the last period's rate (tried for
  // spikes: see docs/infaas.md, "The fluctuating load"); false: the window's average only.
  bool fast_up = false;
  // More replicas may be placed while an application's loads are under way (pending instances
  // count as running); false: one scaling action at a time.
  bool concurrent_loads = true;
  // The scaling solver by name (scaling_solvers.hpp): "greedy" (Sec. 4.2.2) or "ilp" (Sec. 4.2.1).
  std::string solver = "greedy";
  // Co-location (machines with modelled memory, machines:): the cores one CPU instance takes in
  // constraint (3); GPU and Inferentia instances are bounded by the machine's free memory.
  std::int64_t instance_cores = 4;
  // ... and the most instances one accelerator (a GPU, an Inferentia chip) runs.
  std::int64_t accel_instances = 4;
  // Q_v over the batches within half the SLO (a query may wait for a batch in service as long as
  // its own); false: within the SLO (constraint (2)).
  bool q_wait = false;
};

// Offline applications (Sec. 4.2.3, 6.3.2): their queries wait in the central queue and run
// only on idle workers whose utilisation over the last period is at most max_utilisation and
// whose last online batch did not exceed its profiled latency.
struct OfflineServing {
  std::vector<std::int32_t> apps;  // indices into the workload's applications
  double max_utilisation = 0.4;    // Sec. 5: offline work pauses above 40 %
  // A batch slower than its profiled latency by more than this fraction marks its instance
  // Interfered (and pauses offline work on the worker); our choice, the paper gives none.
  double tolerance = 0.1;
  // ... and by more than this many ms per batch too: on a sub-millisecond model a real
  // executor's call overhead alone exceeds the ratio (0: the ratio alone, as in the simulator).
  double floor_ms = 0.0;
  // The first batch of a variant on a worker after its load is not compared: a real executor
  // loads and warms up on it (the profiler drops it too); false: every batch is compared.
  bool skip_warmup = false;
};

// How many of a worker's queued queries of one model a batch takes (all three policies).
enum class BatchCap {
  // In arrival order up to the variant's max batch, whatever the batch's latency.
  Full,
  // As Full, then shrunk (down to one query) until the batch's predicted latency finishes, by its
  // deadline, every query in it that could still finish in time alone: a batch never makes a
  // query late that a smaller one would serve in time. Queries already past hope do not bind.
  Deadline,
};

// models: the registered models queries may be served by (empty: every model of the profile).
// app_models: by application index, the model (profile model name, or a name prefix ending in '*')
// its queries ask for; its variants are then that application's only candidates (empty: model-less).
std::shared_ptr<sched::Scheduler> make_infaas_scheduler(std::vector<std::string> models = {}, VmScaling vm = {},
                                                        ModelScaling scaling = {}, OfflineServing offline = {},
                                                        std::vector<std::string> app_models = {},
                                                        BatchCap batch_cap = BatchCap::Full);
// app_models: the variant (profile model) pre-selected for each application, by index (empty: none).
std::shared_ptr<sched::Scheduler> make_clipper_plus(std::vector<std::string> app_models = {},
                                                    BatchCap batch_cap = BatchCap::Full);
// SM+: one fixed variant per application scaled horizontally (replicas, then new workers of its
// hardware).
std::shared_ptr<sched::Scheduler> make_sm_plus(double startup_s = 20.0, double idle_s = 60.0,
                                               std::int64_t max_workers = 16, std::vector<std::string> app_models = {},
                                               BatchCap batch_cap = BatchCap::Full);
}  // namespace servelab::infaas
