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
                               const std::string& decision_statistic, const std::string& service, double drain_s,
                               std::vector<cluster::MachineGroup> machines) {
  cluster::RunSpec spec;
  spec.machines = std::move(machines);
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

namespace {

double mean_ns(cluster::StreamGroup::Int128 sum, std::int64_t n) {
  return n ? static_cast<double>(static_cast<long double>(sum) / static_cast<long double>(n)) : 0.0;
}

// One group's online metrics, in ns (results.py turns them into Result.summary()'s keys).
py::dict group_to_python(const cluster::StreamGroup& g) {
  py::dict d;
  d["queries"] = g.queries;
  d["completed"] = g.completed;
  d["met"] = g.met;
  d["drops"] = g.drops;
  d["latency_mean_ns"] = mean_ns(g.latency_sum, g.completed);
  d["queue_mean_ns"] = mean_ns(g.queue_sum, g.completed);
  d["service_mean_ns"] = mean_ns(g.service_sum, g.completed);
  d["latency_max_ns"] = g.latency_max;
  py::dict q;
  for (const int p : {50, 90, 95, 99}) q[py::int_(p)] = g.latency.quantile(p / 100.0);
  d["latency_q_ns"] = q;
  d["queue_q_ns"] = py::make_tuple(g.queue.quantile(0.5), g.queue.quantile(0.99));
  d["service_q_ns"] = py::make_tuple(g.service.quantile(0.5), g.service.quantile(0.99));
  d["accuracy_done"] = py::make_tuple(g.accuracy_done_sum, g.accuracy_done_n);
  d["accuracy_met"] = py::make_tuple(g.accuracy_met_sum, g.accuracy_met_n);
  d["cost"] = g.cost_sum;
  return d;
}

py::dict streamed_to_python(const cluster::RunResult& r) {
  const auto& s = *r.streamed;
  py::dict d;
  d["records"] = r.records.text();
  d["queries"] = s.queries();
  d["overall"] = group_to_python(s.overall());
  py::list apps;
  for (const auto& g : s.apps()) apps.append(group_to_python(g));
  d["apps"] = apps;
  d["window_ns"] = s.window();
  d["max_arrival_ns"] = s.max_arrival();
  d["max_finish_ns"] = s.max_finish();
  d["peak_bytes"] = r.peak_bytes;
  d["relative_error"] = cluster::QuantileSketch::kAlpha;
  const auto& ws = s.windows();
  std::vector<std::int64_t> arrivals, completed, met, finished, finished_met, acc_n;
  std::vector<double> acc_sum, p50, p99;
  for (const auto& w : ws) {
    arrivals.push_back(w.arrivals);
    completed.push_back(w.completed);
    met.push_back(w.met);
    finished.push_back(w.finished);
    finished_met.push_back(w.finished_met);
    acc_sum.push_back(w.accuracy_sum);
    acc_n.push_back(w.accuracy_n);
    p50.push_back(w.latency_p50);
    p99.push_back(w.latency_p99);
  }
  py::dict windows;
  windows["arrivals"] = to_numpy(std::move(arrivals));
  windows["completed"] = to_numpy(std::move(completed));
  windows["met"] = to_numpy(std::move(met));
  windows["finished"] = to_numpy(std::move(finished));
  windows["finished_met"] = to_numpy(std::move(finished_met));
  windows["accuracy_sum"] = to_numpy(std::move(acc_sum));
  windows["accuracy_n"] = to_numpy(std::move(acc_n));
  windows["latency_p50_ns"] = to_numpy(std::move(p50));
  windows["latency_p99_ns"] = to_numpy(std::move(p99));
  d["windows"] = windows;
  return d;
}

}  // namespace

py::dict result_to_python(cluster::RunResult&& r) {
  auto& q = r.queries;
  std::vector<std::int64_t> ids(q.size_of());
  if (r.streamed) {
    ids = std::move(r.sampled_ids);
  } else {
    std::iota(ids.begin(), ids.end(), std::int64_t{0});
  }
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
  workers["machine"] = to_numpy(std::move(w.machine));

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
  meta["records"] = r.records.text();
  out["meta"] = meta;
  if (r.streamed) out["streamed"] = streamed_to_python(r);
  return out;
}

}  // namespace servelab::bindings
