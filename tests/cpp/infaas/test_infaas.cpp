// INFaaS: the metadata store, getVariant against its brute-force reference, and the
// Model-Autoscaler (Table 3 through the exact ILP; the greedy heuristic).
#include <gtest/gtest.h>

#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>

#include "infaas/infaas_fixtures.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/solvers/lp/lp.hpp"
#include "servelab/systems/infaas/get_variant.hpp"
#include "servelab/systems/infaas/ilp_scaling.hpp"
#include "servelab/systems/infaas/metadata_store.hpp"
#include "servelab/systems/infaas/scaling.hpp"

namespace servelab::infaas {
namespace {

Variant make(std::string name, std::string arch, std::string hw, double acc, std::vector<double> lat, double load_s,
             double cost) {
  Variant v;
  v.name = std::move(name);
  v.architecture = std::move(arch);
  v.task = "classification";
  v.hardware = std::move(hw);
  v.accuracy = acc;
  v.latency_ms = std::move(lat);
  v.batch_opt = static_cast<std::int32_t>(v.latency_ms.size());
  v.load_s = load_s;
  v.cost_per_s = cost;
  return v;
}

using fixtures::table2;  // Table 2: A (4 CPUs), B (1 Inferentia core), C (1 V100)

TEST(InfaasScaling, Table3ExactIlp) {
  if (!solvers::lp::available()) GTEST_SKIP() << "built without an LP/MILP solver";
  struct Row {
    double qps, slo;
    std::vector<std::int64_t> config;
    double cost;
  };
  for (const Row& row : {Row{10, 300, {2, 0, 0}, 2}, Row{10, 50, {0, 1, 0}, 3}, Row{1000, 300, {0, 2, 1}, 22}}) {
    const auto plan = solve_scaling_ilp(table2(row.qps, row.slo));
    EXPECT_TRUE(plan.feasible);
    EXPECT_EQ(plan.status, "optimal");
    EXPECT_EQ(plan.instances, row.config) << "QPS " << row.qps << " SLO " << row.slo;
    EXPECT_DOUBLE_EQ(plan.running_cost_per_s, row.cost);
  }
}

TEST(InfaasScaling, GreedyLetsOneVariantCarryTheLoad) {
  const auto greedy = greedy_scaling(table2(1000, 300));
  EXPECT_TRUE(greedy.feasible);
  EXPECT_EQ(greedy.instances, (std::vector<std::int64_t>{0, 10, 0}));  // one variant carries the load
  EXPECT_DOUBLE_EQ(greedy.running_cost_per_s, 30);
  EXPECT_EQ(greedy_scaling(table2(10, 300)).instances, (std::vector<std::int64_t>{2, 0, 0}));
}

TEST(InfaasScaling, GreedyReplicatesOrScalesDown) {
  auto p = table2(12, 300);
  p.running = {2, 0, 0};  // 10 QPS of A: short by 2
  auto plan = greedy_scaling(p);
  EXPECT_EQ(plan.strategy, "replicate");
  EXPECT_EQ(plan.delta, (std::vector<std::int64_t>{1, 0, 0}));
  p.load_qps = 4;  // too much capacity now
  plan = greedy_scaling(p);
  EXPECT_EQ(plan.instances, (std::vector<std::int64_t>{1, 0, 0}));
  p.resource_types = {"gpu"};
  p.requirement = {{0, 0, 1}};
  p.capacity = {0};  // no GPU: C cannot be loaded (constraint 3)
  p.load_qps = 5000;
  plan = greedy_scaling(p);
  EXPECT_EQ(plan.strategy, "upgrade");  // 50 x B beats 998 more A
  EXPECT_EQ(plan.instances, (std::vector<std::int64_t>{0, 50, 0}));
  p.slo_ms = 10;  // no variant meets 10 ms: the VM-Autoscaler's case
  plan = greedy_scaling(p);
  EXPECT_FALSE(plan.feasible);
  EXPECT_EQ(plan.status, "needs_vm");
}

// On random problems the greedy is feasible whenever it says so, and never beats the optimum.
TEST(InfaasScaling, GreedyNeverBeatsTheIlpOnRandomProblems) {
  if (!solvers::lp::available()) GTEST_SKIP() << "built without an LP/MILP solver";
  Rng rng(11, "infaas/scaling");
  boost::random::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 30; ++trial) {
    ScalingProblem p;
    const int n = 3 + trial % 6;
    for (int v = 0; v < n; ++v) {
      p.names.push_back(str("v", v));
      p.architecture.push_back(0);
      p.saturation_qps.push_back(1 + std::round(200 * unit(rng.engine())));
      p.cost_per_s.push_back(std::round(20 * unit(rng.engine())) + 1);
      p.load_s.push_back(std::round(5 * unit(rng.engine())));
      p.latency_ms.push_back(1 + std::round(300 * unit(rng.engine())));
      p.running.push_back(unit(rng.engine()) < 0.3 ? 1 : 0);
    }
    p.load_qps = std::round(1000 * unit(rng.engine()));
    p.slo_ms = 50 + std::round(250 * unit(rng.engine()));
    p.lambda = trial % 2 == 0 ? 0.0 : 0.1;
    const auto exact = solve_scaling_ilp(p);
    const auto greedy = greedy_scaling(p);
    if (!greedy.feasible) continue;
    ASSERT_TRUE(exact.feasible) << "trial " << trial;
    EXPECT_GE(greedy.objective, exact.objective - 1e-6) << "trial " << trial;
  }
}

TEST(InfaasScaling, BadProblemNamesTheField) {
  auto p = table2(10, 300);
  p.saturation_qps[1] = -1;
  EXPECT_THROW(greedy_scaling(p), ValueError);
  p = table2(10, 0);
  EXPECT_THROW(greedy_scaling(p), ValueError);
}

TEST(InfaasStore, IndexesAndStates) {
  MetadataStore s({make("r50_cpu", "r50", "cpu", 0.749, {200}, 1.0, 1),
                   make("r50_gpu", "r50", "gpu", 0.749, {15, 20}, 3.0, 16),
                   make("mnet_cpu", "mnet", "cpu", 0.704, {40}, 0.5, 1)});
  EXPECT_EQ(s.by_task("classification").front(), 0);
  EXPECT_THROW(s.by_task("translation"), KeyError);
  const auto cpu = s.add_worker("cpu");
  const auto gpu = s.add_worker("gpu");
  EXPECT_THROW(s.load(1, cpu), ValueError);  // hardware mismatch
  s.load(0, cpu);
  EXPECT_EQ(s.active_instances(0), 1);
  s.set_state(0, cpu, VariantState::Overloaded);
  EXPECT_EQ(s.active_instances(0), 0);
  Requirements req{"classification", "", 0.7, 300, 1};
  auto c = get_variant(s, req);  // the overloaded r50 is avoided: a new instance, lowest load + latency
  EXPECT_EQ(c.kind, ChoiceKind::Inactive);
  EXPECT_EQ(c.variant, 2);
  s.set_state(0, cpu, VariantState::Active);
  c = get_variant(s, req);
  EXPECT_EQ(c.kind, ChoiceKind::Active);
  EXPECT_EQ(c.variant, 0);
  req.accuracy = 0.9;
  c = get_variant(s, req);
  EXPECT_EQ(c.kind, ChoiceKind::Closest);
  EXPECT_NE(c.reason.find("closest"), std::string::npos);
  req.batch = 4;
  EXPECT_EQ(get_variant(s, req).kind, ChoiceKind::None);
  s.remove_worker(gpu);
  EXPECT_FALSE(s.alive(gpu));
}

TEST(InfaasStore, BadVariantNamesTheField) {
  auto v = make("x", "r50", "cpu", 1.5, {10}, 0, 1);
  try {
    MetadataStore s({v});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("variants[0].accuracy=1.5"), std::string::npos) << e.what();
  }
  v.accuracy = 0.5;
  EXPECT_THROW(MetadataStore({v, v}), ValueError);  // repeated name
}

// Random catalogues and states: the indexed search and the brute force agree on every query.
TEST(InfaasGetVariant, AgreesWithBruteForce) {
  Rng rng(7, "infaas/test");
  boost::random::uniform_real_distribution<double> unit(0.0, 1.0);
  boost::random::uniform_int_distribution<int> pick(0, 1000);
  const std::vector<std::string> hws = {"cpu", "gpu", "inferentia"};
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<Variant> vs;
    const int n = 5 + pick(rng.engine()) % 60;
    for (int i = 0; i < n; ++i) {
      std::vector<double> lat;
      const int batches = 1 + pick(rng.engine()) % 8;
      double l = 1 + 100 * unit(rng.engine());
      for (int b = 0; b < batches; ++b) lat.push_back(l *= 1.0 + unit(rng.engine()));
      auto v = make(str("v", i), str("a", i % 7), hws[pick(rng.engine()) % 3], std::round(unit(rng.engine()) * 20) / 20,
                    lat, std::round(unit(rng.engine()) * 4), std::round(unit(rng.engine()) * 5));
      v.task = i % 3 == 0 ? "translation" : "classification";
      vs.push_back(v);
    }
    MetadataStore s(vs);
    const int workers = 1 + pick(rng.engine()) % 12;
    for (int w = 0; w < workers; ++w) s.add_worker(hws[pick(rng.engine()) % 3]);
    for (int w = 0; w < workers; ++w) s.set_utilisation(w, std::round(unit(rng.engine()) * 4) / 4);
    for (int k = 0; k < n; ++k) {
      const int v = pick(rng.engine()) % n, w = pick(rng.engine()) % workers;
      if (s.variant(v).hardware != s.worker_hardware(w)) continue;
      s.set_state(v, w, static_cast<VariantState>(pick(rng.engine()) % 4));
    }
    if (trial % 5 == 0) s.remove_worker(0);
    for (int q = 0; q < 50; ++q) {
      Requirements req;
      if (q % 10 == 0) {
        req.architecture = str("a", q % 7);
      } else {
        req.task = q % 3 == 0 ? "translation" : "classification";
      }
      req.accuracy = std::round(unit(rng.engine()) * 20) / 20;
      req.latency_ms = q % 4 == 0 ? 0 : 400 * unit(rng.engine());
      req.batch = 1 + pick(rng.engine()) % 9;
      if (!req.architecture.empty() && !s.has_architecture(req.architecture)) continue;
      if (req.architecture.empty() && !s.has_task(req.task)) continue;
      const Choice a = get_variant(s, req), b = get_variant_brute_force(s, req);
      ASSERT_EQ(a.kind, b.kind) << "trial " << trial << " query " << q;
      ASSERT_EQ(a.variant, b.variant) << "trial " << trial << " query " << q;
      ASSERT_EQ(a.worker, b.worker) << "trial " << trial << " query " << q;
    }
  }
}

}  // namespace
}  // namespace servelab::infaas
