// Small runs for the simulator and policy tests: a two-hardware profile and replayed arrivals.
#pragma once

#include <memory>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/sizes.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::testing {

// "fast" serves a batch of b items in 10 + b ms, "slow" in 30 + 3b ms (fixed, single samples).
inline std::shared_ptr<profile::Profile> two_speed_profile() {
  auto p = std::make_shared<profile::Profile>();
  p->set_price("fast", 3.6);  // $1e-6 per ms
  p->set_price("slow", 0.36);
  for (std::int64_t b : {1, 100}) {
    p->set_latency("fast", "m", b, profile::LatencyDistribution::from_samples({(10.0 + b) / 1e3}));
    p->set_latency("slow", "m", b, profile::LatencyDistribution::from_samples({(30.0 + 3 * b) / 1e3}));
  }
  p->set_accuracy("m", 0.8);
  return p;
}

// Arrivals at the given times (seconds), one app with `slo_ms`, sizes constant `size`.
inline cluster::RunSpec replay_spec(std::vector<double> times_s, std::vector<cluster::WorkerGroup> workers,
                                    double slo_ms = 1000, std::int32_t size = 1) {
  workload::Application app{"a", 1.0, millis_to_nanos(slo_ms), std::make_shared<workload::ConstantSize>(size), 0.0};
  cluster::RunSpec spec;
  spec.profile = two_speed_profile();
  spec.workers = std::move(workers);
  if (times_s.empty()) times_s = {0.0};  // the caller replaces the workload
  const auto count = static_cast<std::int64_t>(times_s.size());
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Replay>(times_s), std::vector{app}, count);
  spec.service_statistic = profile::Statistic::Mean;
  return spec;
}

inline cluster::RunResult run(const cluster::RunSpec& spec, const char* scheduler) {
  auto policy = catalogue::schedulers().make(scheduler);
  return sim::simulate(spec, *policy);
}

inline double ms(Nanos t) { return nanos_to_millis(t); }

}  // namespace servelab::testing
