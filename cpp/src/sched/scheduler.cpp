#include "servelab/sched/scheduler.hpp"

#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::sched {

std::string_view worker_status_name(WorkerStatus status) {
  switch (status) {
    case WorkerStatus::Starting:
      return "starting";
    case WorkerStatus::Idle:
      return "idle";
    case WorkerStatus::Busy:
      return "busy";
    case WorkerStatus::Loading:
      return "loading";
    case WorkerStatus::Stopped:
      return "stopped";
  }
  return "unknown";
}

namespace {

bool in_group(const ClusterView& view, WorkerId w, HardwareId hardware) {
  return hardware == ClusterView::kAnyHardware || view.hardware(w) == hardware;
}

}  // namespace

std::int32_t ClusterView::idle_count(HardwareId hardware) const {
  std::int32_t n = 0;
  for (const WorkerId w : idle_workers()) n += in_group(*this, w, hardware) ? 1 : 0;
  return n;
}

WorkerId ClusterView::lowest_idle_of(HardwareId hardware, WorkerId from) const {
  WorkerId best = -1;
  for (const WorkerId w : idle_workers()) {
    if (w >= from && in_group(*this, w, hardware) && (best < 0 || w < best)) best = w;
  }
  return best;
}

WorkerId ClusterView::longest_idle(HardwareId hardware) const {
  WorkerId best = -1;
  for (const WorkerId w : idle_workers()) {
    if (in_group(*this, w, hardware) && (best < 0 || idle_since(w) < idle_since(best))) best = w;
  }
  return best;
}

WorkerId ClusterView::nth_idle(HardwareId hardware, std::int32_t i) const {
  for (const WorkerId w : idle_workers()) {
    if (in_group(*this, w, hardware) && i-- == 0) return w;
  }
  return -1;
}

std::span<const WorkerId> ClusterView::instances(MachineId machine) const {
  if (machine < 0 || machine >= num_workers()) return {};
  lone_instance_ = machine;  // without declared machines, machine i is worker i
  return {&lone_instance_, 1};
}

std::int32_t ClusterView::co_runners(WorkerId worker) const {
  std::int32_t n = 0;
  for (const WorkerId other : instances(machine(worker))) {
    n += other != worker && status(other) == WorkerStatus::Busy ? 1 : 0;
  }
  return n;
}

WorkerId Actions::add_instance(MachineId machine, std::span<const ModelId>) {
  throw ValueError(str("add_instance: machine=", machine, ": this world has no machines to add instances to"));
}

ModelId ClusterView::model_for_of(WorkerId worker, const Query& query) const {
  for (const ModelId m : models(worker)) {
    if (query.accuracy_floor > 0) {
      const double acc = profile().accuracy(m);
      if (std::isnan(acc) || acc < query.accuracy_floor) continue;
    }
    if (query.size <= max_batch(worker, m)) return m;
  }
  return -1;
}

}  // namespace servelab::sched
