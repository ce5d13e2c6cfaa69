// servelab._core bindings of the cluster area: WorkerGroup, what a run's cluster is made of. The
// rest of a run's spec and its result (cluster::RunSpec, cluster::RunResult) cross the boundary as
// arguments and dicts, converted in run_binding.hpp for simulate_run and serve_run alike.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "servelab/cluster/cluster_spec.hpp"

namespace py = pybind11;

namespace servelab::bindings {

void init_cluster(py::module_& m) {
  py::class_<cluster::WorkerGroup>(m, "WorkerGroup", "`count` identical workers of one hardware type.")
      .def(py::init([](std::string hardware, const IntArg& count, std::vector<std::string> models,
                       const py::object& config, std::string machine) {
             // Up to the RunSpec's own limit here; below 1 is left to RunSpec::validate, which names the group.
             const auto n = to_int<std::int32_t>(count, "count", std::numeric_limits<std::int32_t>::min(),
                                                 cluster::kMaxWorkersPerGroup);
             return cluster::WorkerGroup{std::move(hardware), n, std::move(models),
                                         to_int_map<std::int64_t>(config, "config"), std::move(machine)};
           }),
           py::arg("hardware"), py::arg("count") = 1, py::arg("models") = std::vector<std::string>{},
           py::arg("config") = std::map<std::string, std::int64_t>{}, py::arg("machine") = std::string{},
           "models: names loaded on each worker (empty: every model the profile has on this hardware);\n"
           "config: initial integer knobs (e.g. {'intra_op_threads': 4}); machine: a MachineGroup's name\n"
           "(count instances on each of its machines; empty: each worker is a machine of its own).")
      .def_readonly("hardware", &cluster::WorkerGroup::hardware)
      .def_readonly("count", &cluster::WorkerGroup::count)
      .def_readonly("models", &cluster::WorkerGroup::models)
      .def_readonly("config", &cluster::WorkerGroup::config)
      .def_readonly("machine", &cluster::WorkerGroup::machine)
      .def("__repr__", [](const cluster::WorkerGroup& g) {
        return str("WorkerGroup(hardware='", g.hardware, "', count=", g.count, ", models=[", g.models.size(), " names]",
                   g.machine.empty() ? "" : ", machine='" + g.machine + "'", ")");
      });
  py::class_<cluster::MachineGroup>(m, "MachineGroup",
                                    "`count` identical machines that worker groups place instances on (co-location).")
      .def(py::init([](std::string name, const IntArg& count, std::string hardware, const IntArg& cores,
                       double memory_mb, double accel_memory_mb, const IntArg& llc_ways, double memory_bw_gbps) {
             cluster::MachineGroup g;
             g.name = std::move(name);
             g.count = to_int<std::int32_t>(count, "count", std::numeric_limits<std::int32_t>::min(),
                                            cluster::kMaxWorkersPerGroup);
             g.hardware = std::move(hardware);
             g.resources.cores = to_int<std::int32_t>(cores, "cores", std::numeric_limits<std::int32_t>::min(),
                                                      std::numeric_limits<std::int32_t>::max());
             g.resources.memory_mb = memory_mb;
             g.resources.accel_memory_mb = accel_memory_mb;
             g.resources.llc_ways = to_int<std::int32_t>(llc_ways, "llc_ways", std::numeric_limits<std::int32_t>::min(),
                                                         std::numeric_limits<std::int32_t>::max());
             g.resources.memory_bw_gbps = memory_bw_gbps;
             return g;
           }),
           py::arg("name"), py::arg("count") = 1, py::arg("hardware") = std::string{}, py::arg("cores") = 0,
           py::arg("memory_mb") = 0.0, py::arg("accel_memory_mb") = 0.0, py::arg("llc_ways") = 0,
           py::arg("memory_bw_gbps") = 0.0,
           "Resources of 0 are not modelled (no limit). hardware: empty takes its worker groups' (one type per\n"
           "machine).")
      .def_readonly("name", &cluster::MachineGroup::name)
      .def_readonly("count", &cluster::MachineGroup::count)
      .def_readonly("hardware", &cluster::MachineGroup::hardware)
      .def("__repr__", [](const cluster::MachineGroup& g) {
        return str("MachineGroup(name='", g.name, "', count=", g.count, ", cores=", g.resources.cores, ")");
      });
}

}  // namespace servelab::bindings
