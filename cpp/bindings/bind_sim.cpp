// servelab._core bindings of the simulator: simulate_run(), the twin of serve_run().
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "long_call.hpp"
#include "run_binding.hpp"
#include "servelab/sim/engine.hpp"

namespace py = pybind11;

namespace servelab::bindings {

void init_sim(py::module_& m) {
  m.def(
      "simulate_run",
      [](const profile::Profile& profile, std::vector<cluster::WorkerGroup> workers, const workload::Workload& workload,
         sched::Scheduler& scheduler, const py::object& seed, const std::string& decision_statistic,
         const std::string& service, double drain_s, const std::string& records) {
        auto spec = make_run_spec(profile, std::move(workers), workload, seed, decision_statistic, service, drain_s);
        spec.records = cluster::parse_record_mode(records);
        auto result = run_long([&] { return sim::simulate(spec, scheduler); });
        return result_to_python(std::move(result));
      },
      py::arg("profile"), py::arg("workers"), py::arg("workload"), py::arg("scheduler"), py::kw_only(),
      py::arg("seed") = 0, py::arg("decision_statistic") = "mean", py::arg("service") = "sample",
      py::arg("drain_s") = 3600.0, py::arg("records") = "all",
      "Runs the discrete-event simulator; returns {'columns', 'workers', 'meta'} (see servelab.simulate),\n"
      "and 'streamed' (online summaries) when records is 'none' or 'sample(p)'.\n"
      "Releases the GIL (Python schedulers take it back per hook); Ctrl-C stops it.");
}

}  // namespace servelab::bindings
