// Small simulated runs with queries of chosen sizes at chosen times, for the Kairos policy tests.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kairos/fake_view.hpp"
#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/sizes.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::testing {

// Returns the given sizes in order (then repeats the last): a size script for one run.
class ScriptedSize final : public workload::SizeDistribution {
 public:
  explicit ScriptedSize(std::vector<std::int32_t> sizes) : sizes_(std::move(sizes)) {}
  std::int32_t sample(Rng&) const override { return next(); }
  double draw(Rng&) const override { return next(); }
  double expectation(const std::function<double(double)>& g) const override { return g(sizes_.front()); }
  std::string describe() const override { return "scripted"; }

 private:
  std::int32_t next() const {
    const std::size_t i = next_++;
    return sizes_[std::min(i, sizes_.size() - 1)];
  }
  std::vector<std::int32_t> sizes_;
  mutable std::size_t next_ = 0;
};

// Queries of `sizes` arriving at `times_s`, SLO `slo_ms`, on the gpu/cpu profile (fixed service
// times equal to the profile), on `workers`.
inline cluster::RunSpec scripted_spec(std::vector<double> times_s, std::vector<std::int32_t> sizes,
                                      std::vector<cluster::WorkerGroup> workers, double slo_ms = 1000) {
  workload::Application app{"a", 1.0, millis_to_nanos(slo_ms), std::make_shared<ScriptedSize>(std::move(sizes)), 0.0};
  cluster::RunSpec spec;
  spec.profile = gpu_cpu_profile();
  spec.workers = std::move(workers);
  const auto count = static_cast<std::int64_t>(times_s.size());
  spec.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Replay>(std::move(times_s)),
                                                       std::vector{app}, count);
  spec.service_statistic = profile::Statistic::Mean;
  return spec;
}

// Poisson arrivals of uniform sizes 1..100 on the gpu/cpu profile, service times sampled.
inline cluster::RunSpec random_spec(double rate, std::int64_t count, std::vector<cluster::WorkerGroup> workers,
                                    double slo_ms = 400, std::uint64_t seed = 0) {
  workload::Application app{"a", 1.0, millis_to_nanos(slo_ms), std::make_shared<workload::UniformSize>(1, 100), 0.0};
  cluster::RunSpec spec;
  spec.profile = gpu_cpu_profile();
  spec.workers = std::move(workers);
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(rate), std::vector{app}, count);
  spec.seed = seed;
  return spec;
}

// Every scheduler, the systems' included.
inline const sched::SchedulerRegistry& registry() { return catalogue::schedulers(); }

inline cluster::RunResult run(const cluster::RunSpec& spec, const std::string& scheduler) {
  auto policy = registry().make(scheduler);
  return sim::simulate(spec, *policy);
}

inline double ms(Nanos t) { return nanos_to_millis(t); }

// The index of a hardware name in a run's result.
inline std::int32_t hardware_of(const cluster::RunResult& r, std::string_view name) {
  const auto it = std::find(r.hardware.begin(), r.hardware.end(), name);
  return it == r.hardware.end() ? -1 : static_cast<std::int32_t>(it - r.hardware.begin());
}

}  // namespace servelab::testing
