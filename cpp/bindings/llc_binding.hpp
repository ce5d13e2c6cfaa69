// serve_run's `llc` and `llc_root` arguments: the resctrl probe at the run's start, the executors
// wrapped so each worker thread applies its llc_ways, and the run's meta["llc"].
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/serve/llc_partition.hpp"
#include "servelab/serve/server.hpp"

namespace servelab::bindings {

// The run's LLC partitioning: `partitioner` is null when the option is off or resctrl is
// unsupported here (`unsupported` then says why). Its groups go at the end of the run, whether
// it ends normally or by an exception.
struct LlcSetup {
  std::shared_ptr<serve::LlcPartitioner> partitioner;
  std::string unsupported;
  std::vector<std::string> removal_errors;

  ~LlcSetup() {
    if (partitioner) partitioner->remove_groups();
  }
  void finish() {
    if (partitioner) removal_errors = partitioner->remove_groups();
  }
};

// Checks the options, probes resctrl once and, when it is usable, wraps options.executor.
inline std::unique_ptr<LlcSetup> partition_llc(serve::ServeOptions& options, const cluster::RunSpec& spec,
                                               const std::optional<std::string>& llc,
                                               const std::optional<std::string>& llc_root) {
  if (!llc) {
    if (llc_root) throw ValueError(str("llc_root='", *llc_root, "' needs llc='resctrl'"));
    return nullptr;
  }
  if (*llc != "resctrl") throw ValueError(str("llc='", *llc, "' must be 'resctrl' (None: LLC ways are not applied)"));
  if (llc_root && llc_root->empty()) throw ValueError("llc_root='' must be a folder (default /sys/fs/resctrl)");
  const std::string root = llc_root ? *llc_root : serve::kResctrlRoot;
  auto setup = std::make_unique<LlcSetup>();
  auto support = serve::probe_resctrl(root);
  if (!support.supported) {
    setup->unsupported = support.reason;  // the run goes on without partitions
    return setup;
  }
  setup->partitioner = std::make_shared<serve::LlcPartitioner>(root, std::move(support), serve::first_model(spec));
  auto inner = options.executor ? options.executor : serve::emulated_executors();
  options.executor = serve::llc_partitioned_executors(std::move(inner), setup->partitioner);
  return setup;
}

// "unsupported: <reason>", or a dict: root, cbm_mask, ways, domains, num_closids, groups (created
// during the run), removal_errors and workers (one dict per worker that applied a setting: worker,
// group, mask, ways, thread_id, applied, failed, error).
inline pybind11::object llc_meta(const LlcSetup& setup) {
  if (!setup.partitioner) return pybind11::str("unsupported: " + setup.unsupported);
  const auto& part = *setup.partitioner;
  const auto& s = part.support();
  pybind11::dict out;
  out["root"] = part.root().string();
  out["cbm_mask"] = s.cbm_mask;
  out["ways"] = s.ways;
  out["domains"] = s.domains;
  out["num_closids"] = s.num_closids;
  out["groups"] = part.created_groups();
  out["removal_errors"] = setup.removal_errors;
  pybind11::list workers;
  for (const auto& r : part.records()) {
    pybind11::dict d;
    d["worker"] = r.worker;
    d["group"] = r.group;
    d["mask"] = r.mask;
    d["ways"] = r.ways;
    d["thread_id"] = r.thread_id;
    d["applied"] = r.applied;
    d["failed"] = r.failed;
    d["error"] = r.error;
    workers.append(d);
  }
  out["workers"] = workers;
  return out;
}

}  // namespace servelab::bindings
