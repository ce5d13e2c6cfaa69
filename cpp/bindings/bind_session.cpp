// servelab._core.ServingSession: the serving loop fed by submissions (serve/session.hpp), wrapped
// for servelab.Session. Outcomes reach Python through a callback called on the loop's thread
// with the GIL taken, as a tuple (servelab.session builds its Outcome and resolves its future).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend_binding.hpp"
#include "long_call.hpp"
#include "python_executor.hpp"
#include "query_inputs_binding.hpp"
#include "run_binding.hpp"
#include "serve_binding.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/serve/session.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

// The longest per-query SLO accepted: about 11.6 days, far from the ns clock's range.
constexpr double kMaxSloMs = 1e9;

// (id, app, completed, reason, output or None, arrival_ns, deadline_ns, start_ns, finish_ns, worker, model).
py::tuple outcome_to_python(serve::Outcome& o) {
  py::object output = o.output ? array_to_python(*o.output) : py::none();
  return py::make_tuple(o.id, o.app, o.status == cluster::QueryStatus::Completed, o.reason, std::move(output),
                        o.arrival, o.deadline, o.start, o.finish, o.worker, o.model);
}

class PySession {
 public:
  PySession(cluster::RunSpec spec, py::object scheduler, ServingSetup setup)
      : scheduler_object_(std::move(scheduler)), setup_(std::move(setup)) {
    auto& sched = scheduler_object_.cast<sched::Scheduler&>();
    // The Python object keeps the scheduler alive: the session holds it without owning it.
    std::shared_ptr<sched::Scheduler> held(&sched, [](sched::Scheduler*) {});
    // Building executors may take the GIL (Python executors): release it meanwhile.
    const ReleasedGil released;
    session_ = std::make_unique<serve::Session>(std::move(spec), std::move(held), setup_.options);
  }

  ~PySession() {
    if (!session_) return;
    if (PyGILState_Check()) {  // the loop's callbacks take the GIL: it must be free while it ends
      py::gil_scoped_release released;
      session_.reset();
    } else {
      session_.reset();
    }
  }

  void submit(std::int32_t app, std::int32_t size, const py::object& input, const py::object& callback,
              std::optional<double> slo_ms, std::optional<double> accuracy) {
    if (!PyCallable_Check(callback.ptr())) throw py::type_error("submit: done must be callable");
    std::optional<serve::InputArray> array;
    if (!input.is_none()) array = array_from_python(input, "inputs=");
    Nanos slo = 0;
    if (slo_ms) {
      if (!(std::isfinite(*slo_ms) && *slo_ms > 0 && *slo_ms <= kMaxSloMs)) {
        throw ValueError(str("slo_ms=", *slo_ms, " must be > 0 and at most ", kMaxSloMs, " (None: the application's)"));
      }
      slo = std::max<Nanos>(1, static_cast<Nanos>(std::llround(*slo_ms * 1e6)));
    }
    if (accuracy && !(*accuracy >= 0 && *accuracy <= 1)) {
      throw ValueError(str("accuracy=", *accuracy, " must be in [0, 1] (None: the application's)"));
    }
    auto done = shared_python_object(callback);
    live().submit(
        app, size, std::move(array),
        [done](serve::Outcome&& o) {
          if (interpreter_exiting()) return;  // no GIL to take (see long_call.hpp)
          py::gil_scoped_acquire gil;
          try {
            (*done)(outcome_to_python(o));
          } catch (py::error_already_set& e) {
            e.discard_as_unraisable("servelab session outcome callback");
          }
        },
        slo, accuracy.value_or(-1.0));
  }

  void close() { live().close(); }
  void abort() { live().abort(); }
  // For the front-end's C++ HTTP engine, which submits to the session directly.
  serve::Session& serving() { return live(); }

  // Waits up to timeout_s for the loop to end, without the GIL; true if it has.
  bool wait(double timeout_s) {
    if (!(timeout_s >= 0)) throw ValueError(str("timeout_s=", timeout_s, " must be >= 0"));
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::microseconds(static_cast<std::int64_t>(std::min(timeout_s, 3600.0) * 1e6));
    py::gil_scoped_release released;
    return live().wait(deadline);
  }

  py::dict result() {
    cluster::RunResult result;
    {
      py::gil_scoped_release released;
      result = live().result();
    }
    auto out = result_to_python(std::move(result));
    finish_serving(setup_, out);
    return out;
  }

 private:
  serve::Session& live() {
    if (!session_) throw RuntimeError("the session was not started");
    return *session_;
  }

  py::object scheduler_object_;
  ServingSetup setup_;
  std::unique_ptr<serve::Session> session_;  // last: it ends (joins its loop) first
};

}  // namespace

void init_session(py::module_& m) {
  py::class_<PySession>(m, "ServingSession",
                        "The serving loop fed by submissions (use servelab.Session). Starts on construction.")
      .def(py::init([](const profile::Profile& profile, std::vector<cluster::WorkerGroup> workers,
                       const workload::Workload& workload, py::object scheduler, const py::object& seed,
                       const std::string& decision_statistic, const std::string& service, double drain_s,
                       std::optional<std::vector<std::shared_ptr<serve::ExecutorBuilder>>> executors, double spin_us,
                       std::optional<double> batch_timeout_ms, std::optional<std::vector<std::vector<int>>> cores,
                       std::optional<std::string> llc, std::optional<std::string> llc_root,
                       std::vector<cluster::MachineGroup> machines,
                       std::optional<std::vector<std::vector<int>>> machine_cores) {
             if (!py::isinstance<sched::Scheduler>(scheduler)) {
               throw py::type_error("scheduler must be a servelab Scheduler");
             }
             auto spec = make_run_spec(profile, std::move(workers), workload, seed, decision_statistic, service,
                                       drain_s, std::move(machines));
             auto setup = serving_setup(spec, std::move(executors), spin_us, nullptr, batch_timeout_ms,
                                        std::move(cores), llc, llc_root, std::move(machine_cores));
             return std::make_unique<PySession>(std::move(spec), std::move(scheduler), std::move(setup));
           }),
           py::arg("profile"), py::arg("workers"), py::arg("workload"), py::arg("scheduler"), py::kw_only(),
           py::arg("seed") = 0, py::arg("decision_statistic") = "mean", py::arg("service") = "sample",
           py::arg("drain_s") = 3600.0, py::arg("executors") = py::none(),
           py::arg("spin_us") = static_cast<double>(serve::kDefaultSpin) / 1e3,
           py::arg("batch_timeout_ms") = py::none(), py::arg("cores") = py::none(), py::arg("llc") = py::none(),
           py::arg("llc_root") = py::none(), py::arg("machines") = std::vector<cluster::MachineGroup>{},
           py::arg("machine_cores") = py::none())
      .def("submit", &PySession::submit, py::arg("app"), py::arg("size"), py::arg("inputs"), py::arg("done"),
           py::arg("slo_ms") = py::none(), py::arg("accuracy") = py::none(),
           "Submits one query; done(outcome_tuple) is called once, on the loop's thread, when it ends.")
      .def("close", &PySession::close, "Stops taking submissions; the loop drains and ends.")
      .def("abort", &PySession::abort, "Ends the loop at once, dropping what is queued or running.")
      .def("wait", &PySession::wait, py::arg("timeout_s"), "Waits for the loop to end; True if it has.")
      .def("result", &PySession::result, "The run's result dict, once the loop has ended (or its error).")
      // The front-end's C++ HTTP engine over this session (bind_frontend.cpp); it keeps the
      // session alive.
      .def(
          "start_http_engine",
          [](PySession& self, const py::kwargs& options) { return start_http_engine(self.serving(), options); },
          py::keep_alive<0, 1>(),
          "Starts the front-end's C++ HTTP/REST engine on this session (servelab.frontend passes the options).");
}

}  // namespace servelab::bindings
