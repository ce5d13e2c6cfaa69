// Kairos's query distributor and the baselines it is compared with, as registered schedulers.
#pragma once

#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::kairos {
void register_schedulers(sched::SchedulerRegistry& registry);
}  // namespace servelab::kairos
