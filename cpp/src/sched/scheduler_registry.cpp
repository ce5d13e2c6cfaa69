#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::sched {

SchedulerRegistry& scheduler_registry() {
  static SchedulerRegistry registry = [] {
    SchedulerRegistry r("scheduler");
    register_fcfs(r);
    register_round_robin(r);
    register_join_shortest_queue(r);
    register_least_finish_time(r);
    register_edf(r);
    register_dynamic_batching(r);
    return r;
  }();
  return registry;
}

}  // namespace servelab::sched
