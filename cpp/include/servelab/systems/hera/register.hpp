// Hera's node resource manager (Algorithm 3) and the PARTIES baseline as registered schedulers;
// its contention model as a registered interference model (interference.hpp).
#pragma once

#include "servelab/cluster/interference.hpp"
#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::hera {
void register_schedulers(sched::SchedulerRegistry& registry);
// Adds "hera_contention(node=..., models=..., llc_mb=..., mem_bandwidth_gbs=..., core_bandwidth_gbs=...,
// bandwidth_knee=...)" to the interference-model registry.
void register_interference_models(cluster::InterferenceModelRegistry& registry);
}  // namespace servelab::hera
