// INFaaS's policies as registered schedulers (`infaas`, `clipper_plus`).
#pragma once

#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::infaas {
void register_schedulers(sched::SchedulerRegistry& registry);
}  // namespace servelab::infaas
