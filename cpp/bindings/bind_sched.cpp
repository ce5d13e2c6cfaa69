// servelab._core bindings of the scheduler interface: Query, ClusterView, Actions, Scheduler (with
// a trampoline so Python classes can be policies). The registry is in bind_catalogue.cpp.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "servelab/cluster/cluster_state.hpp"
#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler.hpp"
#include "trampoline.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

using namespace servelab::sched;

// A model given by id or by name.
ModelId to_model(const ClusterView& view, const py::object& model) {
  if (py::isinstance<py::str>(model)) return view.profile().model_index(model.cast<std::string>());
  return model.cast<ModelId>();
}

// Actions and ClusterView are two faces of one ClusterState; model names resolve through the view.
const ClusterView& view_of(const Actions& actions) { return dynamic_cast<const ClusterView&>(actions); }

std::vector<QueryId> to_ids(const py::object& queries) {
  if (py::isinstance<py::int_>(queries)) return {queries.cast<QueryId>()};
  return queries.cast<std::vector<QueryId>>();
}

void bind_query(py::module_& m) {
  py::class_<Query>(m, "Query", "One request: read-only fields; times in seconds (or _ns).")
      .def_readonly("id", &Query::id, "Dense id: the i-th query of the run has id i.")
      .def_readonly("app", &Query::app, "Index of its application.")
      .def_readonly("size", &Query::size, "Items in the request.")
      .def_readonly("arrival_ns", &Query::arrival)
      .def_readonly("deadline_ns", &Query::deadline)
      .def_property_readonly("arrival_s", [](const Query& q) { return nanos_to_seconds(q.arrival); })
      .def_property_readonly("deadline_s", [](const Query& q) { return nanos_to_seconds(q.deadline); })
      .def_readonly("accuracy_floor", &Query::accuracy_floor, "Lowest model accuracy its application accepts.")
      .def("__repr__", [](const Query& q) {
        return str("Query(id=", q.id, ", app=", q.app, ", size=", q.size, ", arrival_s=", nanos_to_seconds(q.arrival),
                   ", deadline_s=", nanos_to_seconds(q.deadline), ")");
      });

  py::class_<BatchDone>(m, "BatchDone", "What on_batch_done reports: the worker is idle again.")
      .def_readonly("worker", &BatchDone::worker)
      .def_readonly("model", &BatchDone::model)
      .def_readonly("items", &BatchDone::items)
      .def_readonly("queries", &BatchDone::queries)
      .def_property_readonly("start_s", [](const BatchDone& d) { return nanos_to_seconds(d.start); })
      .def_property_readonly("finish_s", [](const BatchDone& d) { return nanos_to_seconds(d.finish); })
      .def_property_readonly("measured_s", [](const BatchDone& d) { return nanos_to_seconds(d.measured()); });
}

void bind_view(py::module_& m) {
  py::class_<ClusterView, std::shared_ptr<ClusterView>>(
      m, "ClusterView",
      "The read-only cluster a policy sees. Workers are ids 0..num_workers-1; times are seconds (or _ns).")
      .def_property_readonly("now", [](const ClusterView& v) { return nanos_to_seconds(v.now()); })
      .def_property_readonly("now_ns", &ClusterView::now)
      .def_property_readonly("seed", &ClusterView::seed)
      .def_property_readonly("num_workers", &ClusterView::num_workers)
      .def("hardware", &ClusterView::hardware, py::arg("worker"), "The worker's hardware index.")
      .def(
          "hardware_name", [](const ClusterView& v, WorkerId w) { return v.profile().hardware()[v.hardware(w)]; },
          py::arg("worker"))
      .def(
          "status", [](const ClusterView& v, WorkerId w) { return std::string(worker_status_name(v.status(w))); },
          py::arg("worker"), "'starting', 'idle', 'busy', 'loading' or 'stopped'.")
      .def("is_idle", &ClusterView::is_idle, py::arg("worker"))
      .def(
          "idle_workers",
          [](const ClusterView& v) {
            auto span = v.idle_workers();
            std::vector<WorkerId> out(span.begin(), span.end());
            std::sort(out.begin(), out.end());
            return out;
          },
          "The idle workers, ascending.")
      .def(
          "busy_until", [](const ClusterView& v, WorkerId w) { return nanos_to_seconds(v.busy_until(w)); },
          py::arg("worker"), "When its current batch or load is predicted to end (now if idle), seconds.")
      .def("models", &ClusterView::models, py::arg("worker"), "Indices of the models loaded on the worker.")
      .def(
          "has_model",
          [](const ClusterView& v, WorkerId w, const py::object& model) { return v.has_model(w, to_model(v, model)); },
          py::arg("worker"), py::arg("model"))
      .def(
          "model_index", [](const ClusterView& v, const std::string& name) { return v.profile().model_index(name); },
          py::arg("name"))
      .def(
          "model_name", [](const ClusterView& v, ModelId model) { return v.profile().models().at(model); },
          py::arg("model"))
      .def(
          "accuracy",
          [](const ClusterView& v, const py::object& model) { return v.profile().accuracy(to_model(v, model)); },
          py::arg("model"))
      .def("config", &ClusterView::config, py::arg("worker"), py::arg("key"), py::arg("fallback") = 0)
      .def(
          "last_latency",
          [](const ClusterView& v, WorkerId w) -> std::optional<double> {
            const Nanos l = v.last_latency(w);
            if (l < 0) return std::nullopt;
            return nanos_to_seconds(l);
          },
          py::arg("worker"), "The last batch's measured latency in seconds (None before the first).")
      .def(
          "central_queue",
          [](const ClusterView& v) { return std::vector<QueryId>(v.central_queue().begin(), v.central_queue().end()); },
          "Ids waiting in the central queue, oldest first (a copy).")
      .def(
          "worker_queue",
          [](const ClusterView& v, WorkerId w) {
            return std::vector<QueryId>(v.worker_queue(w).begin(), v.worker_queue(w).end());
          },
          py::arg("worker"), "Ids waiting in the worker's own queue, oldest first (a copy).")
      .def("query", &ClusterView::query, py::arg("id"))
      .def("pick_model", &pick_model, py::arg("worker"), py::arg("query"),
           "The first model loaded on the worker that meets the query's accuracy floor and covers its size, or -1.")
      .def(
          "predicted_latency",
          [](const ClusterView& v, WorkerId w, const py::object& model, std::int64_t items) {
            return nanos_to_seconds(v.predicted_latency(w, to_model(v, model), items));
          },
          py::arg("worker"), py::arg("model"), py::arg("items"),
          "The profile's decision latency of a batch of `items` on the worker, seconds.")
      .def(
          "max_batch",
          [](const ClusterView& v, WorkerId w, const py::object& model) { return v.max_batch(w, to_model(v, model)); },
          py::arg("worker"), py::arg("model"));

  py::class_<Actions, std::shared_ptr<Actions>>(m, "Actions", "What a policy can do. Invalid actions raise ValueError.")
      .def(
          "dispatch",
          [](Actions& a, WorkerId w, const py::object& model, const py::object& queries) {
            const auto ids = to_ids(queries);
            a.dispatch(w, to_model(view_of(a), model), ids);
          },
          py::arg("worker"), py::arg("model"), py::arg("queries"),
          "Starts a batch now on an idle worker (queries: an id or a list of ids; model: index or name).")
      .def("enqueue", &Actions::enqueue, py::arg("query"), "Appends the query to the central queue.")
      .def("enqueue_to_worker", &Actions::enqueue_to_worker, py::arg("worker"), py::arg("query"))
      .def("drop", &Actions::drop, py::arg("query"), py::arg("reason"))
      .def(
          "set_timer",
          [](Actions& a, double at_s, std::int64_t tag) { a.set_timer(seconds_to_nanos(at_s, "at_s"), tag); },
          py::arg("at_s"), py::arg("tag") = 0, "Asks for on_timer(tag, ...) at time at_s (seconds, >= now).")
      .def(
          "add_worker",
          [](Actions& a, const std::string& hardware, const std::vector<py::object>& models, double startup_s) {
            std::vector<ModelId> ids;
            for (const auto& model : models) ids.push_back(to_model(view_of(a), model));
            return a.add_worker(hardware, ids, seconds_to_nanos(startup_s, "startup_s"));
          },
          py::arg("hardware"), py::arg("models"), py::arg("startup_s") = 0.0)
      .def("remove_worker", &Actions::remove_worker, py::arg("worker"))
      .def(
          "load_model",
          [](Actions& a, WorkerId w, const py::object& model) { a.load_model(w, to_model(view_of(a), model)); },
          py::arg("worker"), py::arg("model"))
      .def(
          "unload_model",
          [](Actions& a, WorkerId w, const py::object& model) { a.unload_model(w, to_model(view_of(a), model)); },
          py::arg("worker"), py::arg("model"))
      .def("set_config", &Actions::set_config, py::arg("worker"), py::arg("key"), py::arg("value"));
}

}  // namespace

void init_sched(py::module_& m) {
  bind_query(m);
  bind_view(m);
  py::class_<Scheduler, PyScheduler, std::shared_ptr<Scheduler>>(
      m, "Scheduler",
      "Base class of every policy. Subclass it in Python and override on_arrival (required) and any of\n"
      "on_start, on_batch_done, on_timer, on_worker_ready; each receives (..., view, actions). The same\n"
      "object runs in servelab.simulate and servelab.serve. Call super().__init__() in __init__.")
      .def(py::init<>())
      .def("describe", &Scheduler::describe)
      .def("__repr__", &Scheduler::describe);
}

}  // namespace servelab::bindings
