// servelab._core bindings of the real serving loop: serve_run(), the twin of simulate_run().
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "long_call.hpp"
#include "pinning_binding.hpp"
#include "run_binding.hpp"
#include "serve_binding.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/serve/executor_registry.hpp"
#include "servelab/serve/resctrl.hpp"
#include "servelab/serve/server.hpp"

namespace py = pybind11;

namespace servelab::bindings {

// The longest batch_timeout_ms accepted: about 11.6 days, far from the ns clock's range.
constexpr double kMaxBatchTimeoutMs = 1e9;

ServingSetup serving_setup(const cluster::RunSpec& spec,
                           std::optional<std::vector<std::shared_ptr<serve::ExecutorBuilder>>> executors,
                           double spin_us, std::shared_ptr<PyQueryInputs> inputs,
                           std::optional<double> batch_timeout_ms, std::optional<std::vector<std::vector<int>>> cores,
                           const std::optional<std::string>& llc, const std::optional<std::string>& llc_root,
                           std::optional<std::vector<std::vector<int>>> machine_cores) {
  ServingSetup setup;
  auto& options = setup.options;
  if (!(spin_us >= 0 && spin_us <= 1e6)) throw ValueError(str("spin_us=", spin_us, " must be in 0..1e6"));
  options.spin = static_cast<Nanos>(spin_us * 1e3);
  if (executors) {
    if (executors->size() != spec.workers.size()) {
      throw ValueError(str("executors has ", executors->size(), " entries for ", spec.workers.size(),
                           " worker groups (None: emulated)"));
    }
    options.executor = serve::executors_by_group({executors->begin(), executors->end()});
  }
  options.inputs = std::move(inputs);
  if (batch_timeout_ms) {
    if (!(std::isfinite(*batch_timeout_ms) && *batch_timeout_ms > 0 && *batch_timeout_ms <= kMaxBatchTimeoutMs)) {
      throw ValueError(str("batch_timeout_ms=", *batch_timeout_ms, " must be > 0 and at most ", kMaxBatchTimeoutMs,
                           " (None: no timeout)"));
    }
    options.batch_timeout = std::max<Nanos>(1, static_cast<Nanos>(std::llround(*batch_timeout_ms * 1e6)));
  }
  if (cores || machine_cores) setup.pins = std::make_shared<serve::PinLog>();
  if (machine_cores) pin_machines(options, std::move(*machine_cores), spec, setup.pins);
  if (cores) pin_workers(options, std::move(*cores), spec.workers.size(), setup.pins);
  setup.llc = partition_llc(options, spec, llc, llc_root);
  return setup;
}

void finish_serving(ServingSetup& setup, py::dict& out) {
  if (setup.llc) setup.llc->finish();  // the worker threads are joined: remove the groups
  if (setup.pins) out["meta"]["pinning"] = pin_records(*setup.pins);
  if (setup.llc) out["meta"]["llc"] = llc_meta(*setup.llc);
}

void init_serve(py::module_& m) {
  m.def(
      "serve_run",
      [](const profile::Profile& profile, std::vector<cluster::WorkerGroup> workers, const workload::Workload& workload,
         sched::Scheduler& scheduler, const py::object& seed, const std::string& decision_statistic,
         const std::string& service, double drain_s,
         std::optional<std::vector<std::shared_ptr<serve::ExecutorBuilder>>> executors, double spin_us,
         std::shared_ptr<PyQueryInputs> inputs, std::optional<double> batch_timeout_ms,
         std::optional<std::vector<std::vector<int>>> cores, std::optional<std::string> llc,
         std::optional<std::string> llc_root, std::vector<cluster::MachineGroup> machines,
         std::optional<std::vector<std::vector<int>>> machine_cores) {
        auto spec = make_run_spec(profile, std::move(workers), workload, seed, decision_statistic, service, drain_s,
                                  std::move(machines));
        auto setup = serving_setup(spec, std::move(executors), spin_us, std::move(inputs), batch_timeout_ms,
                                   std::move(cores), llc, llc_root, std::move(machine_cores));
        // Worker threads take the GIL only inside a Python executor's call or an inputs callable; a
        // Python scheduler takes it per hook on this thread.
        auto result = run_long([&] { return serve::serve(spec, scheduler, setup.options); });
        auto out = result_to_python(std::move(result));
        finish_serving(setup, out);
        return out;
      },
      py::arg("profile"), py::arg("workers"), py::arg("workload"), py::arg("scheduler"), py::kw_only(),
      py::arg("seed") = 0, py::arg("decision_statistic") = "mean", py::arg("service") = "sample",
      py::arg("drain_s") = 3600.0, py::arg("executors") = py::none(),
      py::arg("spin_us") = static_cast<double>(serve::kDefaultSpin) / 1e3, py::arg("inputs") = py::none(),
      py::arg("batch_timeout_ms") = py::none(), py::arg("cores") = py::none(), py::arg("llc") = py::none(),
      py::arg("llc_root") = py::none(), py::arg("machines") = std::vector<cluster::MachineGroup>{},
      py::arg("machine_cores") = py::none(),
      "Runs the real serving loop on the wall clock (one thread per worker); returns {'columns', 'workers',\n"
      "'meta'} like simulate_run, with meta['world'] == 'serve' and the extra column 'exec_ns' (each query's\n"
      "batch as its executor measured it, -1 unless completed). `executors`: one ExecutorBuilder (or None:\n"
      "emulated, waiting the profiled latency) per worker group. A batch whose executor raises ends its\n"
      "queries dropped with the error as the reason; the run goes on. `spin_us`: how long before each arrival\n"
      "or timer the controller spins rather than sleeps (0: never, leaving the cores to the executors). Takes the "
      "workload's duration in wall\n"
      "time. Releases the GIL (Python schedulers take it back per hook); Ctrl-C stops it and joins every\n"
      "worker thread. `inputs`: a QueryInputs (the user's per-query inputs) handed to every batch, or None.\n"
      "`batch_timeout_ms`: a batch that has not returned after this long ends its queries dropped (the reason\n"
      "names the executor, the worker and the timeout), its worker leaves the cluster for the rest of the run\n"
      "and its thread is abandoned; None: no timeout. `cores`: per worker group, the cores its workers are\n"
      "pinned to in turn ([]: not pinned; None: nobody is); meta['pinning'] then lists what each worker applied.\n"
      "`machine_cores`: per declared machine (ids group by group), the host cores it has ([]: not pinned); its\n"
      "instances divide them by their 'cores' knob and each worker thread re-pins itself when its share changes.\n"
      "`llc`: 'resctrl' applies each worker's llc_ways setting to the L3 through resctrl under `llc_root`\n"
      "(None: /sys/fs/resctrl), each worker thread before its next batch; meta['llc'] says 'unsupported: <reason>'\n"
      "or lists the groups, masks and ways applied. None: nothing is applied.");
  m.def(
      "resctrl_status",
      [](const std::string& root) {
        const auto s = serve::probe_resctrl(root);
        py::dict out;
        out["supported"] = s.supported;
        out["reason"] = s.reason;
        out["cbm_mask"] = s.cbm_mask;
        out["ways"] = s.ways;
        out["min_ways"] = s.min_ways;
        out["num_closids"] = s.num_closids;
        out["domains"] = s.domains;
        return out;
      },
      py::arg("root") = serve::kResctrlRoot,
      "Whether L3 cache allocation (Intel CAT) can be used under the resctrl root, as serve(llc='resctrl')\n"
      "would find it: {'supported', 'reason' (why not; '' when supported), 'cbm_mask', 'ways', 'min_ways',\n"
      "'num_closids', 'domains'}. Reads the files under `root`; nothing is written.");
  m.def("abandoned_worker_threads", &serve::abandoned_worker_threads, py::call_guard<py::gil_scoped_release>(),
        "Worker threads that serving runs gave up on (batch_timeout_ms) and that still run a batch; joins\n"
        "those whose batch has returned since.");
}

}  // namespace servelab::bindings
