#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::sched {

void register_generic_schedulers(SchedulerRegistry& registry) {
  register_fcfs(registry);
  register_round_robin(registry);
  register_join_shortest_queue(registry);
  register_least_finish_time(registry);
  register_edf(registry);
  register_dynamic_batching(registry);
}

}  // namespace servelab::sched
