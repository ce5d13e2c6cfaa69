// RAMSIS's online scheduler and its baselines (Jellyfish+, ModelSwitching), as registered schedulers.
#pragma once

#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::ramsis {
void register_schedulers(sched::SchedulerRegistry& registry);
}  // namespace servelab::ramsis
