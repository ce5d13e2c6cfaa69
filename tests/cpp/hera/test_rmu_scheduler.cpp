// hera_rmu and parties as registered schedulers in the simulator: two applications, one model
// each, the manager resizing the node every monitor_s.
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::hera {
namespace {

// DLRM(D) at 12 ms and NCF at 0.7 ms per query on one core, 8 workers each; Poisson arrivals
// at `rate` split `share_d` : 1 - share_d.
cluster::RunSpec node_spec(double rate, double share_d, double horizon_s) {
  auto p = std::make_shared<profile::Profile>();
  p->set_price("core", 0.0);
  p->set_latency("core", "dlrm_d", 1, profile::LatencyDistribution::from_samples({0.012}));
  p->set_latency("core", "ncf", 1, profile::LatencyDistribution::from_samples({0.0007}));
  cluster::RunSpec spec;
  spec.profile = p;
  spec.workers = {{"core", 8, {"dlrm_d"}}, {"core", 8, {"ncf"}}};
  std::vector<workload::Application> apps{{"dlrm_d", share_d, millis_to_nanos(100.0), nullptr, 0.0},
                                          {"ncf", 1 - share_d, millis_to_nanos(5.0), nullptr, 0.0}};
  const auto count = static_cast<std::int64_t>(rate * horizon_s);
  spec.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(rate), apps, count);
  spec.service_statistic = profile::Statistic::Mean;
  spec.seed = 3;
  return spec;
}

TEST(HeraRmuScheduler, EveryQueryEndsAndIdleCoresAreGivenBack) {
  for (const char* manager : {"hera_rmu(models='dlrm_d,ncf', monitor_s=0.5)", "parties(models='dlrm_d,ncf')"}) {
    const auto spec = node_spec(3000, 0.05, 5.0);
    auto policy = catalogue::schedulers().make(manager);
    const auto run = sim::simulate(spec, *policy);
    const auto& q = run.queries;
    ASSERT_EQ(q.size_of(), static_cast<std::size_t>(15000)) << manager;
    std::set<std::int32_t> late_workers;
    for (std::size_t i = 0; i < q.size_of(); ++i) {
      EXPECT_GE(q.finish[i], q.arrival[i]);
      if (q.worker[i] >= 0 && q.arrival[i] > seconds_to_nanos(3.0)) late_workers.insert(q.worker[i]);
    }
    EXPECT_LT(late_workers.size(), 16u) << manager;  // 150 + 2850 QPS need fewer than 16 cores
  }
}

TEST(HeraRmuScheduler, BadParametersAreNamed) {
  EXPECT_THROW(catalogue::schedulers().make("hera_rmu(models='ncf')"), ValueError);
  EXPECT_THROW(catalogue::schedulers().make("hera_rmu(tables='ncf,nope')"), KeyError);
  EXPECT_THROW(catalogue::schedulers().make("parties(models='ncf,dien', lower_slack=2)"), ValueError);
}

}  // namespace
}  // namespace servelab::hera
