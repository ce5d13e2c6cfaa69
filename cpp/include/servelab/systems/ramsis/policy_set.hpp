// Policy sets across loads (Sec. 6, "Query Load Adaptation"): policies for a grid of loads, the
// grid refined until adjacent policies' expected accuracies differ by less than a threshold.
#pragma once

#include <cstdint>
#include <vector>

#include "servelab/systems/ramsis/guarantees.hpp"
#include "servelab/systems/ramsis/latency_table.hpp"
#include "servelab/systems/ramsis/policy.hpp"

namespace servelab::ramsis {

struct PolicySetOptions {
  GenerateOptions generate;       // everything but the load
  std::vector<double> loads_qps;  // the initial grid (any order, > 0, distinct)
  // Insert midpoint loads while adjacent expected accuracies differ by this much or more (table
  // accuracy units: 0.01 is one percentage point for fractions). 0 or less: no refinement. Two
  // neighbours that are both infeasible are left alone.
  double max_accuracy_gap = 0.01;
  double min_load_step_qps = 10.0;  // never split two loads closer than twice this
  std::int32_t max_policies = 256;
  std::int32_t threads = 1;  // policies generated in parallel (each one deterministic)
};

// ValueError for an empty or bad grid; every policy is kept, infeasible ones flagged.
PolicySet generate_policy_set(const LatencyTable& table, const PolicySetOptions& options);

}  // namespace servelab::ramsis
