// A fluid upper bound on the allowable throughput of one configuration, from a linear program.
//
// Beyond the paper. Kairos's own bound (upper_bound.hpp) splits the size mix at one threshold per
// auxiliary type; this one lets every size class c go to every instance type j, and asks only what
// any dispatcher must respect in the long run:
//
//   maximise  lambda
//   s.t.      sum_j x[c][j] + d[c]                    =  p[c] * lambda     (every query is served or lost)
//             sum_c x[c][j] * S[c][j]                 <= n[j]              (each instance busy <= 100%)
//             sum_c d[c] + sum_cj (1 - q[c][j]) x[c][j]
//                        + tail * lambda              <= violation * lambda (p99: <= 1% may miss QoS)
//             x, d, lambda >= 0
//
// with x[c][j] the rate (queries/s) of size class c served on type j, d[c] the rate never served,
// p[c] the class's probability, n[j] the instance count, S[c][j] the expected service time and
// q[c][j] the probability that a class-c query on type j completes within QoS on its own.
//
// Why it bounds every dispatcher (that does not know a query's service time before running it):
// take its long-run rates x, d at arrival rate lambda. An instance cannot be busy more than all
// the time and a query's expected busy time is S, whatever the policy, so the capacity rows hold.
// A query that meets QoS must at least be served, and its service alone must fit in QoS (waiting
// only adds), which happens with probability q independently of the policy; so the expected rate
// of queries missing QoS is at least the left side of the violation row, and a p99 target allows
// at most `violation` of them. Hence (lambda, x, d) is feasible and lambda <= the optimum.
//
// Assumptions: one query at a time per instance (Kairos's instances do not batch queries
// together); service times as the profile describes them (i.i.d. per execution, interpolated
// between measured batch sizes as the simulator does); sizes beyond a type's profile cannot run
// there; sizes beyond every type's profile (`tail`) always miss. With `eligibility` set to a
// statistic, q is 1 where that statistic meets QoS and 0 elsewhere (the deterministic-latency
// model of the paper) instead of coming from the distribution.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "servelab/profile/profile.hpp"
#include "servelab/solvers/lp/lp.hpp"
#include "servelab/workload/sizes.hpp"

namespace servelab::kairos {

struct SizeClass {
  std::int64_t size;   // items per query
  double probability;  // of a query having exactly this size
};

struct SizeClasses {
  std::vector<SizeClass> classes;  // ascending sizes, positive probabilities
  double tail = 0.0;               // probability of sizes above the largest class
};

// The exact size mix of a distribution up to max_size: one class per possible size (multiples
// of its round_to) with positive probability, from its CDF (SizeDistribution::expectation); the
// mass above max_size goes to `tail`. ValueError when that would be more than max_classes classes.
SizeClasses size_classes(const workload::SizeDistribution& sizes, std::int64_t max_size,
                         std::int64_t max_classes = 5000);

// Explicit classes (e.g. from a trace): sizes >= 1, distinct; probabilities >= 0 summing with
// `tail` to 1 (within 1e-6). ValueError naming the entry otherwise.
SizeClasses size_classes(std::vector<SizeClass> classes, double tail = 0.0);

struct FluidOptions {
  double violation = 0.01;  // the share of queries allowed to miss QoS (0.01 for a p99 target)
  // Expected service time of a query (the capacity rows). The mean is what makes the bound exact
  // about busy time; another statistic gives the bound of that deterministic-latency model.
  profile::Statistic statistic = profile::Statistic::Mean;
  // nullopt: q = P(service time <= QoS) from the latency distribution; a statistic: q in {0, 1}.
  std::optional<profile::Statistic> eligibility;
  solvers::lp::Options solver;
};

struct FluidBound {
  double throughput = 0.0;            // queries/s: the bound
  std::vector<std::string> types;     // the configuration's types with a positive count, in its order
  std::vector<std::int64_t> counts;   // their counts
  std::vector<std::int64_t> sizes;    // the classes' sizes
  std::vector<double> probabilities;  // and probabilities
  double tail = 0.0;
  // By class c and type j, at [c * types.size() + j]: the rate at the optimum (queries/s), the
  // expected service time (s; NaN where the size exceeds the type's profile) and q.
  std::vector<double> rate, service_s, success;
  std::vector<double> dropped;      // by class: queries/s never served at the optimum
  std::vector<double> type_rate;    // by type: queries/s served
  std::vector<double> utilisation;  // by type: busy fraction of its instances (<= 1)
  double miss_rate = 0.0;           // queries/s expected to miss QoS at the optimum
  std::string solver;               // the LP library that solved it
};

// config: (instance type, count) pairs (types may repeat: counts add up; zero counts are
// allowed). KeyError for an unknown type or model; ValueError for a non-positive QoS, a violation
// outside [0, 1), a negative count, or a type with a positive count that has no latency for the
// model. RuntimeError when servelab was built without an LP solver.
FluidBound fluid_upper_bound(const profile::Profile& profile, std::string_view model,
                             const std::vector<std::pair<std::string, std::int64_t>>& config, double qos_seconds,
                             const SizeClasses& sizes, const FluidOptions& options = {});

// P(a size-`size` query's service time on (hardware, model) <= seconds), for the profile's own
// sampling rule (the simulator's): quantile draws interpolated between measured batch sizes.
double success_probability(const profile::Profile& profile, std::int32_t hardware, std::int32_t model,
                           std::int64_t size, double seconds);

}  // namespace servelab::kairos
