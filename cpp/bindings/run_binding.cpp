#include "run_binding.hpp"

#include <pybind11/stl.h>

#include <memory>
#include <numeric>
#include <utility>

#include "numpy_owner.hpp"
#include "seed.hpp"

namespace py = pybind11;

namespace servelab::bindings {

cluster::RunSpec make_run_spec(const profile::Profile& profile, std::vector<cluster::WorkerGroup> workers,
                               const workload::Workload& workload, const py::object& seed,
                               const std::string& decision_statistic, const std::string& service, double drain_s) {
  cluster::RunSpec spec;
  spec.profile = std::make_shared<const profile::Profile>(profile);  // a run keeps its own snapshot
  spec.workers = std::move(workers);
  spec.workload = std::make_shared<const workload::Workload>(workload);
  spec.seed = to_seed(seed);
  spec.decision_statistic = profile::parse_statistic(decision_statistic, "decision_statistic");
  if (service != "sample") spec.service_statistic = profile::parse_statistic(service, "service");
  spec.drain_limit = cluster::drain_limit_from_seconds(drain_s);
  spec.validate();
  return spec;
}

py::dict result_to_python(cluster::RunResult&& r) {
  auto& q = r.queries;
  std::vector<std::int64_t> ids(q.size_of());
  std::iota(ids.begin(), ids.end(), std::int64_t{0});
  py::dict columns;
  columns["id"] = to_numpy(std::move(ids));
  columns["app"] = to_numpy(std::move(q.app));
  columns["size"] = to_numpy(std::move(q.size));
  columns["arrival_ns"] = to_numpy(std::move(q.arrival));
  columns["deadline_ns"] = to_numpy(std::move(q.deadline));
  columns["dispatch_ns"] = to_numpy(std::move(q.dispatch));
  columns["start_ns"] = to_numpy(std::move(q.start));
  columns["finish_ns"] = to_numpy(std::move(q.finish));
  columns["worker"] = to_numpy(std::move(q.worker));
  columns["model"] = to_numpy(std::move(q.model));
  columns["batch_items"] = to_numpy(std::move(q.batch_items));
  columns["batch_queries"] = to_numpy(std::move(q.batch_queries));
  columns["status"] = to_numpy(std::move(q.status));
  columns["drop_reason"] = to_numpy(std::move(q.drop_reason));
  columns["accuracy"] = to_numpy(std::move(q.accuracy));
  columns["cost"] = to_numpy(std::move(q.cost));
  for (auto& [name, column] : r.world_columns) columns[py::str(name)] = to_numpy(std::move(column));

  auto& w = r.workers;
  std::vector<std::int32_t> worker_ids(w.hardware.size());
  std::iota(worker_ids.begin(), worker_ids.end(), 0);
  std::vector<std::int16_t> hardware(w.hardware.begin(), w.hardware.end());
  py::dict workers;
  workers["worker"] = to_numpy(std::move(worker_ids));
  workers["hardware"] = to_numpy(std::move(hardware));
  workers["busy_ns"] = to_numpy(std::move(w.busy));
  workers["active_ns"] = to_numpy(std::move(w.active));
  workers["cost"] = to_numpy(std::move(w.cost));
  workers["batches"] = to_numpy(std::move(w.batches));

  py::list apps;
  for (std::size_t a = 0; a < r.apps.size(); ++a) {
    py::dict app;
    app["name"] = r.apps[a];
    app["slo_ns"] = r.app_slo[a];
    apps.append(app);
  }
  py::dict meta;
  meta["world"] = r.world;
  meta["scheduler"] = r.scheduler;
  meta["seed"] = r.seed;
  meta["duration_ns"] = r.duration;
  meta["apps"] = apps;
  meta["models"] = r.models;
  meta["hardware"] = r.hardware;
  meta["drop_reasons"] = r.drop_reasons;
  meta["scenario"] = py::none();
  meta["bytes_per_record"] = cluster::QueryRecords::kBytesPerRecord;
  py::dict out;
  out["columns"] = columns;
  out["workers"] = workers;
  out["meta"] = meta;
  return out;
}

}  // namespace servelab::bindings
