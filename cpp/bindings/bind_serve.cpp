// servelab._core bindings of the real serving loop: serve_run(), the twin of simulate_run().
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "long_call.hpp"
#include "run_binding.hpp"
#include "servelab/serve/server.hpp"

namespace py = pybind11;

namespace servelab::bindings {

void init_serve(py::module_& m) {
  m.def(
      "serve_run",
      [](const profile::Profile& profile, std::vector<cluster::WorkerGroup> workers, const workload::Workload& workload,
         sched::Scheduler& scheduler, const py::object& seed, const std::string& decision_statistic,
         const std::string& service, double drain_s) {
        auto spec = make_run_spec(profile, std::move(workers), workload, seed, decision_statistic, service, drain_s);
        // Worker threads never touch Python; a Python scheduler takes the GIL per hook on this thread.
        auto result = run_long([&] { return serve::serve(spec, scheduler); });
        return result_to_python(std::move(result));
      },
      py::arg("profile"), py::arg("workers"), py::arg("workload"), py::arg("scheduler"), py::kw_only(),
      py::arg("seed") = 0, py::arg("decision_statistic") = "mean", py::arg("service") = "sample",
      py::arg("drain_s") = 3600.0,
      "Runs the real serving loop on the wall clock (one thread per worker, emulated executors that wait\n"
      "the profiled latency); returns {'columns', 'workers', 'meta'} like simulate_run, with\n"
      "meta['world'] == 'serve'. Takes the workload's duration in wall time. Releases the GIL (Python\n"
      "schedulers take it back per hook); Ctrl-C stops it and joins every worker thread.");
}

}  // namespace servelab::bindings
