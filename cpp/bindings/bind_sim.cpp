// servelab._core bindings of the simulator: simulate_run(), the twin of serve_run().
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "long_call.hpp"
#include "registry_binding.hpp"
#include "run_binding.hpp"
#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/config_model.hpp"
#include "servelab/cluster/loop_model.hpp"
#include "servelab/sim/engine.hpp"

namespace py = pybind11;

namespace servelab::bindings {

void init_sim(py::module_& m) {
  py::class_<cluster::ConfigModel, std::shared_ptr<cluster::ConfigModel>>(
      m, "ConfigModel", "How a worker's set_config knobs scale its simulated service times (make_config_model).")
      .def("describe", &cluster::ConfigModel::describe)
      .def("__repr__", &cluster::ConfigModel::describe);
  bind_registry<cluster::ConfigModel>(m, "config_model", "config_models", &catalogue::config_models);
  py::class_<cluster::LoopModel, std::shared_ptr<cluster::LoopModel>>(
      m, "LoopModel", "The serving loop's own delays, for the simulator (make_loop_model; servelab.calibrate).")
      .def("describe", &cluster::LoopModel::describe)
      .def("__repr__", &cluster::LoopModel::describe);
  bind_registry<cluster::LoopModel>(m, "loop_model", "loop_models", &catalogue::loop_models);
  py::class_<cluster::InterferenceModel, std::shared_ptr<cluster::InterferenceModel>>(
      m, "InterferenceModel",
      "How co-located instances slow each other down, for the simulator (make_interference_model).")
      .def("describe", &cluster::InterferenceModel::describe)
      .def("__repr__", &cluster::InterferenceModel::describe);
  bind_registry<cluster::InterferenceModel>(m, "interference_model", "interference_models",
                                            &catalogue::interference_models);
  m.def(
      "simulate_run",
      [](const profile::Profile& profile, std::vector<cluster::WorkerGroup> workers, const workload::Workload& workload,
         sched::Scheduler& scheduler, const py::object& seed, const std::string& decision_statistic,
         const std::string& service, double drain_s, const std::string& records, const py::object& config_model,
         const py::object& loop_model, std::vector<cluster::MachineGroup> machines, const py::object& interference) {
        auto spec = make_run_spec(profile, std::move(workers), workload, seed, decision_statistic, service, drain_s,
                                  std::move(machines));
        if (!interference.is_none()) {
          spec.interference = product_or_spec(interference, "interference", catalogue::interference_models(),
                                              "an InterferenceModel", "'per_corunner(slowdown=0.2)'");
        }
        spec.records = cluster::parse_record_mode(records);
        if (!config_model.is_none()) {
          spec.config_model = product_or_spec(config_model, "config_model", catalogue::config_models(), "a ConfigModel",
                                              "'rrl_cpu(cores=2)'");
        }
        if (!loop_model.is_none()) {
          spec.loop_model = product_or_spec(loop_model, "loop_model", catalogue::loop_models(), "a LoopModel",
                                            "'fixed_loop(wake_us=40, notice_us=20)'");
        }
        auto result = run_long([&] { return sim::simulate(spec, scheduler); });
        return result_to_python(std::move(result));
      },
      py::arg("profile"), py::arg("workers"), py::arg("workload"), py::arg("scheduler"), py::kw_only(),
      py::arg("seed") = 0, py::arg("decision_statistic") = "mean", py::arg("service") = "sample",
      py::arg("drain_s") = 3600.0, py::arg("records") = "all", py::arg("config_model") = py::none(),
      py::arg("loop_model") = py::none(), py::arg("machines") = std::vector<cluster::MachineGroup>{},
      py::arg("interference") = py::none(),
      "Runs the discrete-event simulator; returns {'columns', 'workers', 'meta'} (see servelab.simulate),\n"
      "and 'streamed' (online summaries) when records is 'none' or 'sample(p)'. config_model: None (profiled\n"
      "service times) or a config model (spec or make_config_model) scaling them by the workers' knobs.\n"
      "loop_model: None (an instantaneous loop) or a loop model (spec or make_loop_model): the serving loop's\n"
      "delays (wake, notice, arrival) added to the simulated world. machines: the MachineGroups worker groups\n"
      "place instances on; interference: None or an interference model (spec or make_interference_model):\n"
      "how instances running at once on one machine slow each other down.\n"
      "Releases the GIL (Python schedulers take it back per hook); Ctrl-C stops it.");
}

}  // namespace servelab::bindings
