// What simulate() and serve() share at the binding level: building a RunSpec from Python
// arguments and handing a RunResult to Python (columns without copying).
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/cluster/records.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::bindings {

cluster::RunSpec make_run_spec(const profile::Profile& profile, std::vector<cluster::WorkerGroup> workers,
                               const workload::Workload& workload, const pybind11::object& seed,
                               const std::string& decision_statistic, const std::string& service, double drain_s,
                               std::vector<cluster::MachineGroup> machines = {});

// {"columns": {...}, "workers": {...}, "meta": {...}}: see python/servelab/results.py.
pybind11::dict result_to_python(cluster::RunResult&& result);

}  // namespace servelab::bindings
