// Machines with co-located instances, as INFaaS's policies see them (the `infaas` policy and the
// SM+ baseline): a machine's type, its free memory, whether a hardware type is placed on machines
// with modelled memory. Internal to the infaas area.
//
// A VM a policy starts with add_worker is a machine the cluster does not model; it is taken to be
// of the same type as the first declared machine of its hardware (our choice: Sec. 6's VMs of
// one hardware type are one EC2 instance type), so that a policy bounds what it places there.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "servelab/sched/scheduler.hpp"

namespace servelab::infaas {

// Machine m's resources, or, for a machine that models none, those of the first declared machine
// of the same hardware.
inline sched::MachineResources machine_type(const sched::ClusterView& view, sched::MachineId m) {
  const sched::MachineResources r = view.machine_resources(m);
  if (r.memory_mb > 0 || r.accel_memory_mb > 0 || r.cores > 0) return r;
  const auto hosted = view.instances(m);
  if (hosted.empty()) return r;
  const auto hw = view.hardware(hosted.front());
  for (sched::MachineId o = 0; o < view.num_machines(); ++o) {
    const sched::MachineResources t = view.machine_resources(o);
    const auto on = view.instances(o);
    if ((t.memory_mb > 0 || t.accel_memory_mb > 0) && !on.empty() && view.hardware(on.front()) == hw) return t;
  }
  return r;
}

// Whether instances of hardware `hw` are placed on machines with modelled memory.
inline bool colocates(const sched::ClusterView& view, sched::HardwareId hw) {
  for (sched::MachineId m = 0; m < view.num_machines(); ++m) {
    const auto on = view.instances(m);
    if (on.empty() || view.hardware(on.front()) != hw) continue;
    const sched::MachineResources r = view.machine_resources(m);
    if (r.memory_mb > 0 || r.accel_memory_mb > 0) return true;
  }
  return false;
}

// Machine m's memory (accelerator memory where its type has it) not held by its live instances'
// models, minus `extra_mb` (loads a policy asked for that have not started); infinite when its
// type models no memory.
inline double machine_room(const sched::ClusterView& view, sched::MachineId m, double extra_mb = 0) {
  const sched::MachineResources own = view.machine_resources(m);
  if (own.accel_memory_mb > 0 || own.memory_mb > 0) {  // declared: the cluster's count (loads under way included)
    const sched::MachineResources left = view.free_resources(m);
    return (own.accel_memory_mb > 0 ? left.accel_memory_mb : left.memory_mb) - extra_mb;
  }
  const sched::MachineResources r = machine_type(view, m);
  const double total = r.accel_memory_mb > 0 ? r.accel_memory_mb : r.memory_mb;
  if (!(total > 0)) return std::numeric_limits<double>::infinity();
  double used = extra_mb;
  for (const sched::WorkerId w : view.instances(m)) {
    if (view.status(w) == sched::WorkerStatus::Stopped) continue;
    for (const sched::ModelId model : view.models(w)) {
      used += view.profile().memory_mb(view.hardware(w), model).value_or(0.0);
    }
  }
  return total - used;
}

// Instances on machine m that are not stopped.
inline std::int64_t live_instances(const sched::ClusterView& view, sched::MachineId m) {
  const auto on = view.instances(m);
  return std::count_if(on.begin(), on.end(),
                       [&](sched::WorkerId w) { return view.status(w) != sched::WorkerStatus::Stopped; });
}

// The most instances machine m runs (constraint (3) beside memory): on a CPU VM its cores over
// `instance_cores`, on an accelerator `accel_instances` (0: no bound beyond memory).
inline std::int64_t instance_limit(const sched::ClusterView& view, sched::MachineId m, bool cpu,
                                   std::int64_t instance_cores, std::int64_t accel_instances) {
  if (!cpu) return accel_instances > 0 ? accel_instances : std::numeric_limits<std::int64_t>::max();
  const std::int64_t cores = machine_type(view, m).cores;
  return cores > 0 && instance_cores > 0 ? cores / instance_cores : std::numeric_limits<std::int64_t>::max();
}

// Live machines (a VM hosting several instances counts once).
inline std::int64_t live_machines(const sched::ClusterView& view) {
  std::int64_t n = 0;
  for (sched::MachineId m = 0; m < view.num_machines(); ++m) {
    const auto on = view.instances(m);
    n += std::any_of(on.begin(), on.end(),
                     [&](sched::WorkerId w) { return view.status(w) != sched::WorkerStatus::Stopped; })
             ? 1
             : 0;
  }
  return n;
}

// Whether machine m has an instance that is not stopped.
inline bool machine_live(const sched::ClusterView& view, sched::MachineId m) {
  const auto on = view.instances(m);
  return std::any_of(on.begin(), on.end(),
                     [&](sched::WorkerId w) { return view.status(w) != sched::WorkerStatus::Stopped; });
}

// Whether worker w is the first instance of a machine that hosts other live instances (a VM goes
// down with its last instance: its first one carries its cost).
inline bool hosts_others(const sched::ClusterView& view, sched::WorkerId w) {
  const auto on = view.instances(view.machine(w));
  if (on.empty() || on.front() != w) return false;
  return std::any_of(on.begin() + 1, on.end(),
                     [&](sched::WorkerId o) { return view.status(o) != sched::WorkerStatus::Stopped; });
}

}  // namespace servelab::infaas
