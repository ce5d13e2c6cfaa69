// Problems and scenarios the INFaaS C++ tests share.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/time.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/systems/infaas/scaling.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::infaas::fixtures {

// Table 2's variants A (CPU), B (Inferentia), C (GPU), with `running` instances. With `workers`,
// each on a hardware type of its own with that many workers; without, no resource limit.
inline ScalingProblem table2(double qps, double slo_ms, std::vector<std::int64_t> running = {0, 0, 0},
                             std::optional<double> workers = std::nullopt) {
  ScalingProblem p;
  p.names = {"A", "B", "C"};
  p.architecture = {0, 0, 0};
  p.latency_ms = {200, 20, 15};
  p.saturation_qps = {5, 100, 800};
  p.cost_per_s = {1, 3, 16};
  p.load_s = {0, 0, 0};
  p.running = std::move(running);
  if (workers) {
    p.resource_types = {"cpu workers", "inferentia workers", "gpu workers"};
    p.requirement = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    p.capacity = {*workers, *workers, *workers};
  }
  p.load_qps = qps;
  p.slo_ms = slo_ms;
  return p;
}

// One GPU type with a batch-1 variant "b1" (100 QPS) and a batch-8 variant "b8" (8 / 16 ms: 500
// QPS), both loading in 0.5 s.
inline std::shared_ptr<profile::Profile> one_gpu_profile() {
  auto p = std::make_shared<profile::Profile>();
  p->add_hardware("gpu");
  p->set_price("gpu", 1.0);
  for (const char* m : {"b1", "b8"}) {
    p->add_model(m);
    p->set_accuracy(m, 0.8);
    p->set_load_time("gpu", m, 0.5);
  }
  p->set_latency("gpu", "b1", 1, profile::LatencyDistribution::from_samples({0.010}));
  for (int b = 1; b <= 8; ++b) {
    p->set_latency("gpu", "b8", b, profile::LatencyDistribution::from_samples({0.008 + 0.001 * b}));
  }
  return p;
}

// One worker of one_gpu_profile() starting with "b1", `count` queries evenly at `qps`, 100 ms SLO,
// accuracy floor 0.7.
inline cluster::RunSpec one_gpu_run(int count, double qps) {
  cluster::RunSpec s;
  s.profile = one_gpu_profile();
  s.workers = {cluster::WorkerGroup{"gpu", 1, {"b1"}, {}}};
  std::vector<double> times;
  for (int i = 0; i < count; ++i) times.push_back(i / qps);
  workload::Application app{"a", 1.0, millis_to_nanos(100), nullptr, 0.7};
  s.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Replay>(times), std::vector{app},
                                                    static_cast<std::int64_t>(count));
  return s;
}

}  // namespace servelab::infaas::fixtures
