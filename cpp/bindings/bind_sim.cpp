// servelab._core bindings of a run: WorkerGroup and simulate().
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <vector>

#include "converters.hpp"
#include "long_call.hpp"
#include "run_binding.hpp"
#include "servelab/sim/engine.hpp"

namespace py = pybind11;

namespace servelab::bindings {

void init_sim(py::module_& m) {
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

  m.def(
      "simulate_run",
      [](const profile::Profile& profile, std::vector<cluster::WorkerGroup> workers, const workload::Workload& workload,
         sched::Scheduler& scheduler, const py::object& seed, const std::string& decision_statistic,
         const std::string& service, double drain_s) {
        auto spec = make_run_spec(profile, std::move(workers), workload, seed, decision_statistic, service, drain_s);
        auto result = run_long([&] { return sim::simulate(spec, scheduler); });
        return result_to_python(std::move(result));
      },
      py::arg("profile"), py::arg("workers"), py::arg("workload"), py::arg("scheduler"), py::kw_only(),
      py::arg("seed") = 0, py::arg("decision_statistic") = "mean", py::arg("service") = "sample",
      py::arg("drain_s") = 3600.0,
      "Runs the discrete-event simulator; returns {'columns', 'workers', 'meta'} (see servelab.simulate).\n"
      "Releases the GIL (Python schedulers take it back per hook); Ctrl-C stops it.");
}

}  // namespace servelab::bindings
