// RAMSIS online (paper sec. 3.2): a load monitor (moving average of the arrival rate), the load
// balancer the policies were generated for (round-robin, the paper's; shortest-queue-first,
// Appendix I) into per-worker queues served earliest deadline first, and at each
// decision point of a worker (idle with a non-empty queue) the action of the pre-computed policy of
// the estimated load for the worker's state (queue length, slack of the earliest deadline).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "servelab/sched/scheduler.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/systems/ramsis/arrivals.hpp"
#include "servelab/systems/ramsis/load_monitor.hpp"
#include "servelab/systems/ramsis/policy.hpp"

namespace servelab::ramsis {

// Builds the policy set for the cluster a run starts on, given the SLO of its queries: how the
// registered "ramsis" entry generates its policies when it is not given a file.
using PolicyGenerator = std::function<std::shared_ptr<const PolicySet>(const sched::ClusterView& view, Nanos slo)>;

struct RamsisOptions {
  // > 0: the load is known and fixed (the paper's constant-load runs assume a perfect monitor);
  // 0: the load monitor's estimate selects the policy.
  double fixed_load_qps = 0;
  Nanos window = kDefaultLoadWindow;
  std::string source;  // where the policies come from, for describe() (a path, "generated", ...)
};

// The scheduler for a given policy set (its model names must be in the run's profile: KeyError at
// the start of the run otherwise). ValueError for a null or invalid set.
std::shared_ptr<sched::Scheduler> make_ramsis(std::shared_ptr<const PolicySet> policies, RamsisOptions options);
// The scheduler that builds its policy set with `generate` at the first arrival (the SLO is that
// query's deadline - arrival), then behaves as above.
std::shared_ptr<sched::Scheduler> make_ramsis(PolicyGenerator generate, RamsisOptions options);

// The generator the registered "ramsis" uses without a policy file: a policy set for the models
// of the first live worker (on its hardware, with the run's decision statistic as the latency),
// every worker assumed alike, `balancer` over all of them, FLD with D = 100, N = min(32, the
// largest batch every model covers), maximal batching, Poisson arrivals. `loads` (queries/s) is
// the grid; empty: 10 loads evenly up to the cluster's peak throughput with its fastest model.
PolicyGenerator cluster_policy_generator(std::vector<double> loads, Balancer balancer = Balancer::RoundRobin);

// Reads a policy set (or a single worker policy, as a one-policy set) from a JSON file.
// RuntimeError when the file cannot be read, ValueError naming the field when it is malformed.
std::shared_ptr<const PolicySet> load_policy_set(const std::string& path);

// Registers "ramsis".
void register_ramsis(sched::SchedulerRegistry& registry);

}  // namespace servelab::ramsis
