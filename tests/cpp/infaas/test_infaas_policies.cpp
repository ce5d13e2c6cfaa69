// The registered INFaaS policies in the simulator: cheapest Active variant at low load, an
// accelerator once the cheap one cannot meet deadlines; Clipper+ never loads; SM+ starts workers.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::infaas {
namespace {

std::shared_ptr<profile::Profile> cpu_gpu_profile() {
  auto p = std::make_shared<profile::Profile>();
  p->add_hardware("cpu");
  p->add_hardware("gpu");
  p->set_price("cpu", 0.1);
  p->set_price("gpu", 1.0);
  p->add_model("m");
  p->set_accuracy("m", 0.8);
  for (int b = 1; b <= 4; ++b) {
    p->set_latency("cpu", "m", b, profile::LatencyDistribution::from_samples({0.1 * b}));
    p->set_latency("gpu", "m", b, profile::LatencyDistribution::from_samples({0.01}));
  }
  return p;
}

cluster::RunSpec spec(double gap_s, int count) {
  cluster::RunSpec s;
  s.profile = cpu_gpu_profile();
  s.workers = {cluster::WorkerGroup{"cpu", 1, {"m"}, {}}, cluster::WorkerGroup{"gpu", 1, {"m"}, {}}};
  std::vector<double> times;
  for (int i = 0; i < count; ++i) times.push_back(gap_s * i);
  workload::Application app{"a", 1.0, millis_to_nanos(150), nullptr, 0.7};
  s.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Replay>(times), std::vector{app},
                                                    static_cast<std::int64_t>(count));
  return s;
}

double share_on(const cluster::RunResult& r, std::int32_t worker) {
  const auto& w = r.queries.worker;
  return static_cast<double>(std::count(w.begin(), w.end(), worker)) / static_cast<double>(w.size());
}

TEST(InfaasPolicy, CheapVariantAtLowLoadAcceleratorWhenItCannotKeepUp) {
  const auto& registry = catalogue::schedulers();
  auto low = registry.make("infaas");
  EXPECT_EQ(share_on(sim::simulate(spec(0.5, 20), *low), 0), 1.0);  // CPU: 100 ms < 150 ms SLO
  auto high = registry.make("infaas");
  const auto r = sim::simulate(spec(0.02, 200), *high);  // 50 QPS: one CPU serves at most 10
  EXPECT_GT(share_on(r, 1), 0.7);
  for (std::size_t i = 0; i < r.queries.status.size(); ++i) {
    EXPECT_EQ(r.queries.status[i], static_cast<std::int8_t>(cluster::QueryStatus::Completed));
  }
}

TEST(InfaasPolicy, AccuracyFloorAboveEveryVariantIsServedByTheClosest) {
  auto s = spec(0.5, 10);
  auto p = cpu_gpu_profile();
  p->set_accuracy("m", 0.5);  // below the 0.7 floor: still served (closest)
  s.profile = p;
  auto policy = catalogue::schedulers().make("infaas");
  const auto r = sim::simulate(s, *policy);
  EXPECT_EQ(share_on(r, -1), 0.0);
}

TEST(InfaasPolicy, UnknownRegisteredModelIsAKeyError) {
  auto policy = catalogue::schedulers().make("infaas(models='vgg16')");
  auto s = spec(0.5, 5);
  EXPECT_THROW(sim::simulate(s, *policy), KeyError);
}

TEST(SmPlus, StartsWorkersOfItsVariantsHardware) {
  auto policy = catalogue::schedulers().make("sm_plus(startup_s=0.5, idle_s=1)");
  const auto r = sim::simulate(spec(0.02, 300), *policy);  // worker 0's variant: m on cpu
  EXPECT_EQ(share_on(r, 1), 0.0);                          // never the GPU: another variant
  EXPECT_GT(r.workers.hardware.size(), 2u);
}

}  // namespace
}  // namespace servelab::infaas
