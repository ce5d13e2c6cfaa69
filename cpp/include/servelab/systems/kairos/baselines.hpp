// The query distributors Kairos is compared with (Kairos, HPDC'23, Sec. 7), as registered
// schedulers that run in the simulator and in the serving loop alike:
//   ribbon     Ribbon (SC'21): first come, first served from a central queue, preferring an idle
//              instance of the base type (fcfs(prefer=<base>) under its own name);
//   drs        DeepRecSys (ISCA'20): a static size threshold; larger queries go to the base type,
//              the others to the auxiliary types, each side first come, first served (the
//              threshold is tuned by hill climbing in Python: servelab.kairos.tune_drs_threshold);
//   clockwork  Clockwork's (OSDI'20) central controller: per-instance FCFS queues; each query joins
//              the queue where it is predicted to finish first among those where it meets QoS
//              (where it finishes first when it meets QoS nowhere, or rejected: reject_late);
//   oracle     the greedy rule of Kairos's ORCL run online: an idle base instance takes the
//              largest pending query, an idle auxiliary one the smallest pending query it serves
//              within QoS. (ORCL itself is an offline bound that knows every query in advance:
//              servelab.kairos.oracle_throughput.)
#pragma once

#include "servelab/sched/scheduler_registry.hpp"

namespace servelab::kairos {

void register_ribbon(sched::SchedulerRegistry& registry);
void register_drs(sched::SchedulerRegistry& registry);
void register_clockwork(sched::SchedulerRegistry& registry);
void register_oracle(sched::SchedulerRegistry& registry);

}  // namespace servelab::kairos
