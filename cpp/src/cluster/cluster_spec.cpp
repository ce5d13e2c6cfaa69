#include "servelab/cluster/cluster_spec.hpp"

#include <limits>

#include "servelab/cluster/records.hpp"
#include "servelab/core/errors.hpp"

namespace servelab::cluster {

Nanos drain_limit_from_seconds(double drain_s) {
  if (!(drain_s >= 0)) throw ValueError(str("drain_s=", drain_s, " must be a non-negative number of seconds"));
  // A quarter of the range: the worlds add the limit to times without overflowing.
  return drain_s >= kUnlimitedDrainS ? std::numeric_limits<Nanos>::max() / 4 : seconds_to_nanos(drain_s, "drain_s");
}

void RunSpec::validate() const {
  if (!profile) throw ValueError("profile=None: a run needs a profile");
  if (!workload) throw ValueError("workload=None: a run needs a workload");
  if (workers.empty()) throw ValueError("workers=[]: a run needs at least one worker group");
  if (drain_limit < 0) throw ValueError(str("drain_limit=", drain_limit, " ns must be >= 0"));
  for (std::size_t g = 0; g < workers.size(); ++g) {
    const WorkerGroup& group = workers[g];
    const std::string where = str("workers[", g, "]");
    if (group.count < 1) throw ValueError(str(where, ".count=", group.count, " must be >= 1"));
    if (group.count > kMaxWorkersPerGroup) {
      throw ValueError(str(where, ".count=", group.count, " is more than ", kMaxWorkersPerGroup, " workers"));
    }
    const auto hw = profile->hardware_index(group.hardware);  // KeyError naming the known ones
    profile->price(hw);                                       // KeyError when the price is missing
    bool any = false;
    for (const auto& model : group.models) {
      const auto m = profile->model_index(model);
      if (!profile->has_latency(hw, m)) {
        throw ValueError(str(where, ".models: the profile has no latency for model '", model, "' on hardware '",
                             group.hardware, "'"));
      }
      any = true;
    }
    if (group.models.empty()) {
      for (std::size_t m = 0; m < profile->models().size(); ++m) any |= profile->has_latency(hw, static_cast<int>(m));
    }
    if (!any)
      throw ValueError(str(where, ": the profile has no model with latencies on hardware '", group.hardware, "'"));
  }
}

void check_run_memory(const RunSpec& spec) {
  if (spec.records.streaming()) return;  // a bounded window of records, not one per query
  // The peak a run reaches per query, measured from Python (benchmarks/python/bench_sim.py: 78
  // bytes): its records (QueryRecords::kBytesPerRecord, which also say where a pending query is)
  // and the `id` column made for the result next to them; rounded up for vector slack.
  constexpr double kBytesPerQuery = 90;
  static_assert(kBytesPerQuery > QueryRecords::kBytesPerRecord);
  spec.workload->check_memory(kBytesPerQuery, "the run's per-query records");
}

}  // namespace servelab::cluster
