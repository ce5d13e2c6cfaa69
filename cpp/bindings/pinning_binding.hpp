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
                                                  std::size_t groups) {
  serve::CorePlan plan{std::move(cores)};
  serve::check_core_plan(plan, groups);
  auto log = std::make_shared<serve::PinLog>();
  auto inner = options.executor ? options.executor : serve::emulated_executors();
  options.executor = serve::pinned_executors(std::move(inner), std::move(plan), log);
  return log;
}

// One dict per pinned worker that ran a batch: worker, group, core, applied, thread_id, error.
inline pybind11::list pin_records(const serve::PinLog& log) {
  pybind11::list out;
  for (const auto& r : log.records()) {
    pybind11::dict d;
    d["worker"] = r.worker;
    d["group"] = r.group;
    d["core"] = r.core;
    d["applied"] = r.applied;
    d["thread_id"] = r.thread_id;
    d["error"] = r.error;
    out.append(d);
  }
  return out;
}

}  // namespace servelab::bindings
