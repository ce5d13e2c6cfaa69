// Hera's node resource manager (Algorithm 3) and the PARTIES baseline as registered schedulers.
#pragma once

#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::hera {
void register_schedulers(sched::SchedulerRegistry& registry);
}  // namespace servelab::hera
