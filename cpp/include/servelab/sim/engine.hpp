// The discrete-event simulator: virtual int64-nanosecond time, deterministic.
//
// Events at the same time are handled in a fixed order: batch completions, then finished startups
// and model loads, then timers, then arrivals; within a kind, in the order they were scheduled.
// Service times are sampled from the profile (stream "service" of the run seed, one child stream
// per worker) or fixed to a statistic. The run ends when the workload has ended and nothing is
// queued, running or loading, or drain_limit after the last arrival (the rest is then dropped).
#pragma once

#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/cluster/records.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::sim {

// Runs `scheduler` (fresh: schedulers keep per-run state) on `spec`. Calls check_interrupt().
cluster::RunResult simulate(const cluster::RunSpec& spec, sched::Scheduler& scheduler);

}  // namespace servelab::sim
