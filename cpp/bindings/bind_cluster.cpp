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
                       const py::object& config) {
             // Up to the RunSpec's own limit here; below 1 is left to RunSpec::validate, which names the group.
             const auto n = to_int<std::int32_t>(count, "count", std::numeric_limits<std::int32_t>::min(),
                                                 cluster::kMaxWorkersPerGroup);
             return cluster::WorkerGroup{std::move(hardware), n, std::move(models),
                                         to_int_map<std::int64_t>(config, "config")};
           }),
           py::arg("hardware"), py::arg("count") = 1, py::arg("models") = std::vector<std::string>{},
           py::arg("config") = std::map<std::string, std::int64_t>{},
           "models: names loaded on each worker (empty: every model the profile has on this hardware);\n"
           "config: initial integer knobs (e.g. {'intra_op_threads': 4}).")
      .def_readonly("hardware", &cluster::WorkerGroup::hardware)
      .def_readonly("count", &cluster::WorkerGroup::count)
      .def_readonly("models", &cluster::WorkerGroup::models)
      .def_readonly("config", &cluster::WorkerGroup::config)
      .def("__repr__", [](const cluster::WorkerGroup& g) {
        return str("WorkerGroup(hardware='", g.hardware, "', count=", g.count, ", models=[", g.models.size(),
                   " names])");
      });
}

}  // namespace servelab::bindings
