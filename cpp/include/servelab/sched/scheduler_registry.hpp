// The scheduler registry type and the generic policies' register functions. The registry itself,
// with every system's policies too, is servelab::catalogue::schedulers() (catalogue/catalogue.hpp).
#pragma once

#include <cstdint>

#include "servelab/core/registry.hpp"
#include "servelab/sched/scheduler.hpp"
#include "servelab/sched/tie_rule.hpp"

namespace servelab::sched {

using SchedulerRegistry = Registry<Scheduler>;

// fcfs(prefer=...) for policies built on it (Kairos's Ribbon baseline); ValueError as the registry's.
// max_queue > 0: an arrival that finds that many queries waiting is dropped ("queue full").
std::shared_ptr<Scheduler> make_fcfs(std::string prefer, TieRule tie = TieRule::LowestId, std::int64_t max_queue = 0);

// Adds every generic policy below (fcfs, round_robin, random, jsq, ...).
void register_generic_schedulers(SchedulerRegistry& registry);

// Each generic policy file registers itself through one of these.
void register_fcfs(SchedulerRegistry& registry);
void register_round_robin(SchedulerRegistry& registry);  // round_robin and random
void register_join_shortest_queue(SchedulerRegistry& registry);
void register_least_finish_time(SchedulerRegistry& registry);
void register_edf(SchedulerRegistry& registry);
void register_dynamic_batching(SchedulerRegistry& registry);

}  // namespace servelab::sched
