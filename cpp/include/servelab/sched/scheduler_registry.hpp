// The registry of schedulers built into servelab: make("fcfs(prefer='gpu')") or list them.
// Each paper's policies add themselves here from their own area (systems/...).
#pragma once

#include "servelab/core/registry.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::sched {

using SchedulerRegistry = Registry<Scheduler>;

// Filled on first use with every built-in policy.
SchedulerRegistry& scheduler_registry();

// Each generic policy file registers itself through one of these.
void register_fcfs(SchedulerRegistry& registry);
void register_round_robin(SchedulerRegistry& registry);  // round_robin and random
void register_join_shortest_queue(SchedulerRegistry& registry);
void register_least_finish_time(SchedulerRegistry& registry);
void register_edf(SchedulerRegistry& registry);
void register_dynamic_batching(SchedulerRegistry& registry);

}  // namespace servelab::sched
