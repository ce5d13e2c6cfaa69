// serve_run's `cores` argument: the worker groups' core lists wrapped around the executors, and
// what each worker thread applied, for the run's meta["pinning"].
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <vector>

#include "servelab/serve/affinity.hpp"
#include "servelab/serve/server.hpp"

namespace servelab::bindings {

// Checks the plan against this machine and wraps options.executor; returns the log the worker
// threads fill.
inline std::shared_ptr<serve::PinLog> pin_workers(serve::ServeOptions& options, std::vector<std::vector<int>> cores,
                                                  std::size_t groups, std::shared_ptr<serve::PinLog> log) {
  serve::CorePlan plan{std::move(cores)};
  serve::check_core_plan(plan, groups);
  auto inner = options.executor ? options.executor : serve::emulated_executors();
  options.executor = serve::pinned_executors(std::move(inner), std::move(plan), log);
  return log;
}

// The declared machines' host cores (checked against this host and the spec), for the serving
// loop to pin their instances by; returns `log`, which the worker threads fill.
inline std::shared_ptr<serve::PinLog> pin_machines(serve::ServeOptions& options, std::vector<std::vector<int>> cores,
                                                   const cluster::RunSpec& spec, std::shared_ptr<serve::PinLog> log) {
  serve::MachineCores plan{std::move(cores)};
  serve::check_machine_cores(plan, spec);
  options.machine_cores = std::move(plan);
  options.pin_log = log;
  return log;
}

// One dict per pinned worker that ran a batch (an instance of a pinned machine: one per change of
// its cores): worker, group, machine (-1: pinned by its group), core, cores, at_ns (-1: before its
// first batch), applied, thread_id, error.
inline pybind11::list pin_records(const serve::PinLog& log) {
  pybind11::list out;
  for (const auto& r : log.records()) {
    pybind11::dict d;
    d["worker"] = r.worker;
    d["group"] = r.group;
    d["machine"] = r.machine;
    d["core"] = r.core;
    d["cores"] = r.cores;
    d["at_ns"] = r.at;
    d["applied"] = r.applied;
    d["thread_id"] = r.thread_id;
    d["error"] = r.error;
    out.append(d);
  }
  return out;
}

}  // namespace servelab::bindings
