// servelab._core bindings of the scheduler interface: BatchDone, ClusterView, Actions, Scheduler (with
// a trampoline so Python classes can be policies). Query, which the interface takes from the
// workload area, is bound in bind_workload.cpp; the registry is in bind_catalogue.cpp.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "converters.hpp"
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
  return to_int<ModelId>(model, "model");
}

WorkerId to_worker(const IntArg& worker) { return to_int<WorkerId>(worker, "worker"); }
QueryId to_query(const IntArg& query) { return to_int<QueryId>(query, "query"); }

// One query id or a sequence of them.
std::vector<QueryId> to_ids(const py::object& queries) {
  if (PyIndex_Check(queries.ptr()) && !PySequence_Check(queries.ptr())) return {to_int<QueryId>(queries, "queries")};
  return to_int_list<QueryId>(queries, "queries");
}

void bind_batch_done(py::module_& m) {
  py::class_<BatchDone>(m, "BatchDone", "What on_batch_done reports: the worker is idle again.")
      .def_readonly("worker", &BatchDone::worker)
      .def_readonly("model", &BatchDone::model)
      .def_readonly("items", &BatchDone::items)
      .def_readonly("queries", &BatchDone::queries)
      .def_property_readonly("start_s", [](const BatchDone& d) { return nanos_to_seconds(d.start); })
      .def_property_readonly("finish_s", [](const BatchDone& d) { return nanos_to_seconds(d.finish); })
      .def_property_readonly("measured_s", [](const BatchDone& d) { return nanos_to_seconds(d.measured()); });
}

using ViewClass = py::class_<ClusterView, std::shared_ptr<ClusterView>>;
using ActionsClass = py::class_<PolicyActions, std::shared_ptr<PolicyActions>>;

// The clock and the workers' state.
void def_view_workers(ViewClass& view) {
  view.def_property_readonly("now", [](const ClusterView& v) { return nanos_to_seconds(v.now()); })
      .def_property_readonly("now_ns", &ClusterView::now)
      .def_property_readonly("seed", &ClusterView::seed)
      .def_property_readonly("num_workers", &ClusterView::num_workers)
      .def(
          "hardware", [](const ClusterView& v, const IntArg& w) { return v.hardware(to_worker(w)); }, py::arg("worker"),
          "The worker's hardware index.")
      .def(
          "hardware_name",
          [](const ClusterView& v, const IntArg& w) { return v.profile().hardware()[v.hardware(to_worker(w))]; },
          py::arg("worker"))
      .def(
          "status",
          [](const ClusterView& v, const IntArg& w) { return std::string(worker_status_name(v.status(to_worker(w)))); },
          py::arg("worker"), "'starting', 'idle', 'busy', 'loading' or 'stopped'.")
      .def(
          "is_idle", [](const ClusterView& v, const IntArg& w) { return v.is_idle(to_worker(w)); }, py::arg("worker"))
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
          "busy_until",
          [](const ClusterView& v, const IntArg& w) { return nanos_to_seconds(v.busy_until(to_worker(w))); },
          py::arg("worker"), "When its current batch or load is predicted to end (now if idle), seconds.")
      .def(
          "config",
          [](const ClusterView& v, const IntArg& w, const std::string& key, const IntArg& fallback) {
            return v.config(to_worker(w), key, to_int<std::int64_t>(fallback, "fallback"));
          },
          py::arg("worker"), py::arg("key"), py::arg("fallback") = 0)
      .def(
          "last_latency",
          [](const ClusterView& v, const IntArg& w) -> std::optional<double> {
            const Nanos l = v.last_latency(to_worker(w));
            if (l < 0) return std::nullopt;
            return nanos_to_seconds(l);
          },
          py::arg("worker"), "The last batch's measured latency in seconds (None before the first).");
}

// The models: what is loaded where, names, accuracies and predicted latencies.
void def_view_models(ViewClass& view) {
  view.def(
          "models", [](const ClusterView& v, const IntArg& w) { return v.models(to_worker(w)); }, py::arg("worker"),
          "Indices of the models loaded on the worker.")
      .def(
          "has_model",
          [](const ClusterView& v, const IntArg& w, const py::object& model) {
            return v.has_model(to_worker(w), to_model(v, model));
          },
          py::arg("worker"), py::arg("model"))
      .def(
          "model_index", [](const ClusterView& v, const std::string& name) { return v.profile().model_index(name); },
          py::arg("name"))
      .def(
          "model_name",
          [](const ClusterView& v, const IntArg& model) {
            const auto& names = v.profile().models();
            return names[to_int<ModelId>(model, "model", 0, static_cast<ModelId>(names.size()) - 1)];
          },
          py::arg("model"))
      .def(
          "accuracy",
          [](const ClusterView& v, const py::object& model) { return v.profile().accuracy(to_model(v, model)); },
          py::arg("model"))
      .def(
          "pick_model",
          [](const ClusterView& v, const IntArg& w, const Query& query) { return pick_model(v, to_worker(w), query); },
          py::arg("worker"), py::arg("query"),
          "The first model loaded on the worker that meets the query's accuracy floor and covers its size, or -1.")
      .def(
          "predicted_latency",
          [](const ClusterView& v, const IntArg& w, const py::object& model, const IntArg& items) {
            const auto n = to_int<std::int64_t>(items, "items");
            return nanos_to_seconds(v.predicted_latency(to_worker(w), to_model(v, model), n));
          },
          py::arg("worker"), py::arg("model"), py::arg("items"),
          "The profile's decision latency of a batch of `items` on the worker, seconds.")
      .def(
          "max_batch",
          [](const ClusterView& v, const IntArg& w, const py::object& model) {
            return v.max_batch(to_worker(w), to_model(v, model));
          },
          py::arg("worker"), py::arg("model"));
}

// The queues and the queries in them.
void def_view_queues(ViewClass& view) {
  view.def(
          "central_queue",
          [](const ClusterView& v) { return std::vector<QueryId>(v.central_queue().begin(), v.central_queue().end()); },
          "Ids waiting in the central queue, oldest first (a copy).")
      .def(
          "worker_queue",
          [](const ClusterView& v, const IntArg& worker) {
            const auto& queue = v.worker_queue(to_worker(worker));
            return std::vector<QueryId>(queue.begin(), queue.end());
          },
          py::arg("worker"), "Ids waiting in the worker's own queue, oldest first (a copy).")
      .def(
          "worker_queue_length",
          [](const ClusterView& v, const IntArg& worker) { return v.worker_queue_length(to_worker(worker)); },
          py::arg("worker"),
          "How many ids wait in the worker's own queue (len(worker_queue(worker)), without the copy).")
      .def(
          "query", [](const ClusterView& v, const IntArg& id) { return v.query(to_int<QueryId>(id, "id")); },
          py::arg("id"));
}

py::dict resources_dict(const MachineResources& r) {
  py::dict d;
  d["cores"] = r.cores;
  d["memory_mb"] = r.memory_mb;
  d["accel_memory_mb"] = r.accel_memory_mb;
  d["llc_ways"] = r.llc_ways;
  d["memory_bw_gbps"] = r.memory_bw_gbps;
  return d;
}

MachineId to_machine(const IntArg& machine) { return to_int<MachineId>(machine, "machine"); }

// Machines: which instances share one, its resources, what runs on it now.
void def_view_machines(ViewClass& view) {
  view.def_property_readonly("num_machines", &ClusterView::num_machines)
      .def(
          "machine", [](const ClusterView& v, const IntArg& w) { return v.machine(to_worker(w)); }, py::arg("worker"),
          "The machine hosting the worker (without declared machines, each worker is its own).")
      .def(
          "instances",
          [](const ClusterView& v, const IntArg& machine) {
            const auto span = v.instances(to_machine(machine));
            return std::vector<WorkerId>(span.begin(), span.end());
          },
          py::arg("machine"), "The workers (instances) the machine hosts, stopped ones included.")
      .def(
          "machine_resources",
          [](const ClusterView& v, const IntArg& machine) {
            return resources_dict(v.machine_resources(to_machine(machine)));
          },
          py::arg("machine"),
          "{'cores', 'memory_mb', 'accel_memory_mb', 'llc_ways', 'memory_bw_gbps'} (0: not modelled).")
      .def(
          "free_resources",
          [](const ClusterView& v, const IntArg& machine) {
            return resources_dict(v.free_resources(to_machine(machine)));
          },
          py::arg("machine"),
          "What its instances have not taken: cores and ways not in their knobs, memory not in their models.")
      .def(
          "running_model", [](const ClusterView& v, const IntArg& w) { return v.running_model(to_worker(w)); },
          py::arg("worker"), "The model of the worker's running batch, or -1.")
      .def(
          "co_runners", [](const ClusterView& v, const IntArg& w) { return v.co_runners(to_worker(w)); },
          py::arg("worker"), "How many other instances on the worker's machine run a batch now.");
}

void bind_view(py::module_& m) {
  ViewClass view(m, "ClusterView",
                 "The read-only cluster a policy sees. Workers are ids 0..num_workers-1; times are seconds (or _ns).");
  def_view_workers(view);
  def_view_models(view);
  def_view_queues(view);
  def_view_machines(view);
}

// What happens to queries: dispatch, enqueue, drop, timers.
void def_query_actions(ActionsClass& actions) {
  actions
      .def(
          "dispatch",
          [](const PolicyActions& a, const IntArg& worker, const py::object& model, const py::object& queries) {
            auto& act = a.use("dispatch");
            const auto ids = to_ids(queries);
            act.dispatch(to_worker(worker), to_model(a.view(), model), ids);
          },
          py::arg("worker"), py::arg("model"), py::arg("queries"),
          "Starts a batch now on an idle worker (queries: an id or a list of ids; model: index or name).")
      .def(
          "enqueue", [](const PolicyActions& a, const IntArg& query) { a.use("enqueue").enqueue(to_query(query)); },
          py::arg("query"), "Appends the query to the central queue.")
      .def(
          "enqueue_to_worker",
          [](const PolicyActions& a, const IntArg& worker, const IntArg& query) {
            a.use("enqueue_to_worker").enqueue_to_worker(to_worker(worker), to_query(query));
          },
          py::arg("worker"), py::arg("query"))
      .def(
          "drop",
          [](const PolicyActions& a, const IntArg& query, const std::string& reason) {
            a.use("drop").drop(to_query(query), reason);
          },
          py::arg("query"), py::arg("reason"))
      .def(
          "set_timer",
          [](const PolicyActions& a, double at_s, const IntArg& tag) {
            auto& act = a.use("set_timer");
            act.set_timer(seconds_to_nanos(at_s, "at_s"), to_int<std::int64_t>(tag, "tag"));
          },
          py::arg("at_s"), py::arg("tag") = 0, "Asks for on_timer(tag, ...) at time at_s (seconds, >= now).");
}

// What happens to the cluster: workers, loaded models, knobs.
void def_cluster_actions(ActionsClass& actions) {
  actions
      .def(
          "add_worker",
          [](const PolicyActions& a, const std::string& hardware, const std::vector<py::object>& models,
             double startup_s) {
            auto& act = a.use("add_worker");
            std::vector<ModelId> ids;
            for (const auto& model : models) ids.push_back(to_model(a.view(), model));
            return act.add_worker(hardware, ids, seconds_to_nanos(startup_s, "startup_s"));
          },
          py::arg("hardware"), py::arg("models"), py::arg("startup_s") = 0.0)
      .def(
          "remove_worker",
          [](const PolicyActions& a, const IntArg& worker) { a.use("remove_worker").remove_worker(to_worker(worker)); },
          py::arg("worker"))
      .def(
          "load_model",
          [](const PolicyActions& a, const IntArg& worker, const py::object& model) {
            a.use("load_model").load_model(to_worker(worker), to_model(a.view(), model));
          },
          py::arg("worker"), py::arg("model"))
      .def(
          "unload_model",
          [](const PolicyActions& a, const IntArg& worker, const py::object& model) {
            a.use("unload_model").unload_model(to_worker(worker), to_model(a.view(), model));
          },
          py::arg("worker"), py::arg("model"))
      .def(
          "set_config",
          [](const PolicyActions& a, const IntArg& worker, const std::string& key, const IntArg& value) {
            a.use("set_config").set_config(to_worker(worker), key, to_int<std::int64_t>(value, "value"));
          },
          py::arg("worker"), py::arg("key"), py::arg("value"),
          "A named integer knob; 'cores' and 'llc_ways' partition the worker's machine and must fit what it has left.")
      .def(
          "add_instance",
          [](const PolicyActions& a, const IntArg& machine, const std::vector<py::object>& models) {
            auto& act = a.use("add_instance");
            std::vector<ModelId> ids;
            for (const auto& model : models) ids.push_back(to_model(a.view(), model));
            return act.add_instance(to_machine(machine), ids);
          },
          py::arg("machine"), py::arg("models"),
          "A new instance of `models` on an existing machine (loading for their load time, then on_worker_ready);\n"
          "returns its worker id. ValueError when the machine's free memory cannot hold the models.");
}

void bind_actions(py::module_& m) {
  ActionsClass actions(
      m, "Actions",
      "What a policy can do, only inside the hook that received it. Invalid actions raise ValueError; an action\n"
      "after the hook (or its run) has ended raises RuntimeError.");
  def_query_actions(actions);
  def_cluster_actions(actions);
}

void bind_scheduler(py::module_& m) {
  py::class_<Scheduler, PyScheduler, std::shared_ptr<Scheduler>>(
      m, "Scheduler",
      "Base class of every policy. Subclass it in Python and override on_arrival (required) and any of\n"
      "on_start, on_batch_done, on_timer, on_worker_ready; each receives (..., view, actions). The same\n"
      "object runs in servelab.simulate and servelab.serve. Call super().__init__() in __init__.")
      .def(py::init<>())
      .def("describe", &Scheduler::describe)
      .def("__repr__", &Scheduler::describe);
}

}  // namespace

void init_sched(py::module_& m) {
  bind_batch_done(m);
  bind_view(m);
  bind_actions(m);
  bind_scheduler(m);
}

}  // namespace servelab::bindings
