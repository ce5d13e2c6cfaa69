// batch_cap, shared by infaas, clipper_plus and sm_plus (VariantQueues): 'full' takes every
// queued query of the variant up to its max batch; 'deadline' shrinks the batch until it finishes
// in time every query in it that could still finish in time alone.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::infaas {
namespace {

// One CPU worker whose variant takes 100 ms per query in a batch (up to 4), SLO 350 ms. Query 0
// arrives at 0 and runs alone until 100 ms; queries 1-4 arrive at 10-40 ms and wait for it. At
// 100 ms a batch of 4 would end at 500 ms, past every deadline (360-390 ms); a batch of 2 ends at
// 300 ms, in time for queries 1 and 2. Queries 3 and 4 then cannot finish in time even alone.
cluster::RunSpec queued_behind_one() {
  auto p = std::make_shared<profile::Profile>();
  p->add_hardware("cpu");
  p->set_price("cpu", 0.1);
  p->add_model("m");
  p->set_accuracy("m", 0.8);
  for (int b = 1; b <= 4; ++b) p->set_latency("cpu", "m", b, profile::LatencyDistribution::from_samples({0.1 * b}));
  cluster::RunSpec s;
  s.profile = p;
  s.workers = {cluster::WorkerGroup{"cpu", 1, {"m"}, {}}};
  const std::vector<double> times{0.0, 0.01, 0.02, 0.03, 0.04};
  workload::Application app{"a", 1.0, millis_to_nanos(350), nullptr, 0.7};
  s.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Replay>(times), std::vector{app},
                                                    static_cast<std::int64_t>(times.size()));
  return s;
}

std::vector<std::int32_t> batch_sizes(const cluster::RunResult& r) {
  return std::vector<std::int32_t>(r.queries.batch_queries);
}

std::int64_t on_time(const cluster::RunResult& r) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < r.queries.size_of(); ++i) n += r.queries.finish[i] <= r.queries.deadline[i] ? 1 : 0;
  return n;
}

TEST(InfaasBatchCap, FullTakesTheWholeQueueDeadlineOnlyWhatFinishesInTime) {
  for (const std::string policy : {"clipper_plus", "sm_plus", "infaas(autoscale_s=0)"}) {
    SCOPED_TRACE(policy);
    const std::string open =
        policy.find('(') == std::string::npos ? policy + "(" : policy.substr(0, policy.size() - 1) + ", ";
    auto full = catalogue::schedulers().make(open + "batch_cap='full')");
    const auto a = sim::simulate(queued_behind_one(), *full);
    EXPECT_EQ(batch_sizes(a), (std::vector<std::int32_t>{1, 4, 4, 4, 4}));
    EXPECT_EQ(on_time(a), 1);

    auto capped = catalogue::schedulers().make(open + "batch_cap='deadline')");
    const auto b = sim::simulate(queued_behind_one(), *capped);
    // 1 and 2 in time in a batch of 2; 3 and 4, late whatever the batch, are served together.
    EXPECT_EQ(batch_sizes(b), (std::vector<std::int32_t>{1, 2, 2, 2, 2}));
    EXPECT_EQ(on_time(b), 3);
  }
}

TEST(InfaasBatchCap, DefaultIsFullAndTheSpecSaysTheCap) {
  const auto& registry = catalogue::schedulers();
  auto plain = registry.make("clipper_plus");
  EXPECT_EQ(plain->describe(), "clipper_plus");
  EXPECT_EQ(batch_sizes(sim::simulate(queued_behind_one(), *plain)), (std::vector<std::int32_t>{1, 4, 4, 4, 4}));
  EXPECT_EQ(registry.make("clipper_plus(batch_cap='deadline')")->describe(), "clipper_plus(batch_cap='deadline')");
  EXPECT_EQ(registry.make("infaas(batch_cap='deadline')")->describe(), "infaas(batch_cap='deadline')");
  EXPECT_NE(registry.make("sm_plus(batch_cap='deadline')")->describe().find("batch_cap='deadline'"), std::string::npos);
}

TEST(InfaasBatchCap, UnknownCapIsAValueErrorNamingIt) {
  for (const std::string policy : {"infaas", "clipper_plus", "sm_plus"}) {
    try {
      catalogue::schedulers().make(policy + "(batch_cap='oldest')");
      ADD_FAILURE() << policy << " accepted batch_cap='oldest'";
    } catch (const ValueError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("batch_cap"), std::string::npos) << what;
      EXPECT_NE(what.find("oldest"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace servelab::infaas
