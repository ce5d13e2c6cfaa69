// A node resource manager (Hera's RMU or PARTIES, rmu.hpp) as a scheduler that runs unchanged in
// the simulator and in the real serving loop. Application 0 of the workload is served by the
// profile's model models[0], every other application by models[1]; the manager reads the lookup
// tables of the Table I models `tables` (by default the same names). Queries go first come first
// served, per model, to an idle worker holding it. Every monitor_s the policy measures each model's
// p95 latency and arrival rate over the window, asks the manager for the next allocation and
// applies it.
//
// On a machine (worker 0's machine declares cores or LLC ways, as a `machines:` entry of a Hera
// node does): the node is that machine (its cores, llc_ways and
// memory_bw_gbps), a worker is an instance added with add_instance and removed with
// remove_worker, and the partition is the instances' knobs: "cores" = 1 for each live instance
// (an added instance waits for a core that a removed one still busy holds; no query goes to an
// instance without its core), and a model's ways split over its live instances' "llc_ways" (their
// sum is the model's ways; a removed instance gives its ways back at once). Under an interference
// model such as hera_contention the simulated service times follow that partition as it changes.
// The run's starting ways are the instances' llc_ways when the scenario gives every model some,
// else half the ways each.
//
// Without a machine (every worker a machine of its own): add_worker / remove_worker for the
// worker counts, and set_config(worker, "llc_ways", k) with the model's whole k on each of its
// workers, a setting that an executor or world may read (resctrl while serving); the simulator's
// service times come from the profile and do not depend on it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "servelab/sched/scheduler.hpp"
#include "servelab/sched/scheduler_registry.hpp"

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
  double startup_s = 0.0;  // a new worker's start-up time (on a machine: the profile's load time)
};

std::shared_ptr<sched::Scheduler> make_rmu_scheduler(RmuSchedulerOptions options);

// Adds "hera_rmu" and "parties" (register.cpp calls it).
void register_rmu_schedulers(sched::SchedulerRegistry& registry);

}  // namespace servelab::hera
