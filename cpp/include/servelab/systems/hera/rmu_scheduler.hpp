// A node resource manager (Hera's RMU or PARTIES, rmu.hpp) as a scheduler that runs unchanged in
// the simulator and in the real serving loop. Application 0 of the workload is served by the
// profile's model models[0], every other application by models[1]; the manager reads the lookup
// tables of the Table I models `tables` (by default the same names). Queries go first come first served, per model, to
// an idle worker holding it. Every monitor_s the policy measures each model's p95 latency and arrival rate over the
// window, asks the manager for the next allocation and applies it: add_worker / remove_worker for the worker counts,
// and set_config(worker, "llc_ways", k) for the ways. The core has no LLC action: the ways are a worker setting that an
// executor or world may read (the simulator's service times come from the profile and do not depend on them).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "servelab/sched/scheduler.hpp"

namespace servelab::hera {

struct RmuSchedulerOptions {
  std::string manager = "hera";  // "hera" (Algorithm 3) or "parties"
  std::string models;            // the profile's models for application 0 and the others ("": its first two)
  std::string tables;            // Table I models whose lookup tables the manager reads ("": see register)
  std::string hardware;          // hardware type of the workers it adds ("": worker 0's)
  std::int64_t cores = 0;        // the node's cores (0: the workers the run starts with)
  double monitor_s = 1.0;        // T_monitor
  double lower_slack = 0.8;
  double upper_slack = 1.0;
  double startup_s = 0.0;  // a new worker's start-up time
};

std::shared_ptr<sched::Scheduler> make_rmu_scheduler(RmuSchedulerOptions options);

}  // namespace servelab::hera
