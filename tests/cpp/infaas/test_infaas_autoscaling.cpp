// The periodic Model-Autoscaler inside `infaas`: on one worker with a batch-1 and a batch-8
// variant, a load beyond the batch-1 variant's saturation is carried by the batch-8 one, a load
// within it stays on batch 1; on a machine with room the new instances load beside the running
// one. And the interference models' checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "infaas/infaas_fixtures.hpp"
#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/systems/infaas/interference.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::infaas {
namespace {

cluster::RunSpec heavy(int count, double qps) { return fixtures::one_gpu_run(count, qps); }

double share_of_model(const cluster::RunResult& r, std::int32_t model) {
  const auto& m = r.queries.model;
  return static_cast<double>(std::count(m.begin(), m.end(), model)) / static_cast<double>(m.size());
}

TEST(InfaasModelAutoscaler, UpgradesToTheBatchedVariantUnderHeavyLoadOnly) {
  auto busy = catalogue::schedulers().make("infaas");
  const auto r = sim::simulate(heavy(3000, 300), *busy);  // 10 s at 300 QPS: beyond b1's 100
  EXPECT_GT(share_of_model(r, 1), 0.8);
  auto calm = catalogue::schedulers().make("infaas");
  const auto q = sim::simulate(heavy(500, 50), *calm);  // 50 QPS: b1 keeps its headroom
  EXPECT_GT(share_of_model(q, 0), 0.95);
}

TEST(InfaasModelAutoscaler, AnApplicationPinnedToItsModelKeepsToItsVariants) {
  // app_models='b1': the application's only candidate is b1, so even 300 QPS stays on it.
  auto pinned = catalogue::schedulers().make("infaas(app_models='b1', dispatch='best_fit')");
  const auto r = sim::simulate(heavy(1000, 300), *pinned);
  EXPECT_EQ(share_of_model(r, 0), 1.0);
  EXPECT_THROW(sim::simulate(heavy(10, 10), *catalogue::schedulers().make("infaas(app_models='vgg*')")), ValueError);
}

TEST(InfaasInterference, BadParametersAreValueErrors) {
  EXPECT_THROW(InterferenceModel(-0.1, "machine"), ValueError);
  EXPECT_THROW(InterferenceModel(0.5, ""), ValueError);
  EXPECT_EQ(InterferenceModel(0.5, "machine").describe(), "infaas_interference(alpha=0.5, key='machine')");
}

TEST(InfaasInterference, TheCoLocationModelIsRegisteredAndChecksItsParameters) {
  const auto model = catalogue::interference_models().make("infaas");
  EXPECT_EQ(model->describe(), "infaas(gpu=0.5, cpu=0, cpu_threads=4, neuron_cores=4)");
  EXPECT_THROW(CoLocationInterference(-1, 0, 4, 4), ValueError);
  EXPECT_THROW(CoLocationInterference(0.5, 0, 0.5, 4), ValueError);
  EXPECT_THROW(CoLocationInterference(0.5, 0, 4, 0), ValueError);
}

TEST(InfaasColocation, NewInstancesLoadBesideTheRunningOneOnItsMachine) {
  // One GPU machine with room; 300 QPS is beyond b1's 100: the Model-Autoscaler's new instances
  // are added on that machine (add_instance), at most accel_instances of them, and the machine
  // is paid once.
  auto spec = heavy(3000, 300);
  spec.machines = {cluster::MachineGroup{"gpu0", 1, "gpu", sched::MachineResources{8, 0, 16000, 0, 0}}};
  spec.workers[0].machine = "gpu0";
  spec.interference = catalogue::interference_models().make("infaas");
  auto policy = catalogue::schedulers().make("infaas");
  const auto r = sim::simulate(spec, *policy);
  ASSERT_GT(r.workers.machine.size(), 1u);
  EXPECT_LE(r.workers.machine.size(), 4u);
  for (const auto m : r.workers.machine) EXPECT_EQ(m, 0);
  for (std::size_t w = 1; w < r.workers.cost.size(); ++w) EXPECT_EQ(r.workers.cost[w], 0.0);
}

}  // namespace
}  // namespace servelab::infaas
