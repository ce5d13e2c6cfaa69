// The Model-Autoscaler's solver registry (scaling_solvers.hpp): "greedy" built in and the
// default, unknown names and unloadable modules reported with the field and the value, and the
// exact ILP (registered here as servelab._lp registers it) read by plan_scaling like the greedy:
// scale-up / scale-down from the problem, the most the workers carry when nothing fits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "infaas/infaas_fixtures.hpp"
#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/solvers/lp/lp.hpp"
#include "servelab/systems/infaas/ilp_scaling.hpp"
#include "servelab/systems/infaas/model_autoscaler.hpp"
#include "servelab/systems/infaas/scaling_solvers.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::infaas {
namespace {

using fixtures::table2;

// The exact solver, under its own name so that this executable's registry holds it once.
ScalingSolver exact() {
  if (!has_scaling_solver("ilp")) {
    register_scaling_solver(
        "ilp", [](const ScalingProblem& p) { return solve_scaling_ilp(p); }, "test");
  }
  return scaling_solver("ilp");
}

std::string error_of(const std::string& name) {
  try {
    scaling_solver(name);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

TEST(InfaasScalingSolvers, GreedyIsBuiltInAndTheDefault) {
  const auto names = scaling_solvers();
  EXPECT_NE(std::find(names.begin(), names.end(), "greedy"), names.end());
  EXPECT_EQ(scaling_solver_origin("greedy"), "servelab._core");
  EXPECT_EQ(scaling_solver_origin("no_such_solver"), "");
  const auto p = table2(1000, 300, {0, 0, 0}, 10);
  const auto by_name = plan_scaling(p, scaling_solver("greedy"));
  const auto by_default = plan_scaling(p);
  EXPECT_EQ(by_name.delta, by_default.delta);
  EXPECT_EQ(by_name.strategy, "upgrade");
  EXPECT_EQ(catalogue::schedulers().make("infaas")->describe(), "infaas");
}

TEST(InfaasScalingSolvers, UnknownNameNamesTheFieldAndTheValue) {
  const std::string message = error_of("foo");
  EXPECT_NE(message.find("autoscaler='foo'"), std::string::npos) << message;
  EXPECT_NE(message.find("greedy"), std::string::npos) << message;
  EXPECT_THROW(scaling_solver("foo"), ValueError);
  EXPECT_THROW(catalogue::schedulers().make("infaas(autoscaler='foo')"), ValueError);
}

TEST(InfaasScalingSolvers, LoaderReasonBecomesARuntimeError) {
  std::vector<std::string> asked;
  set_scaling_solver_loader([&asked](const std::string& name) {
    asked.push_back(name);
    return name == "remote" ? std::string("the remote backend (servelab._remote): not installed") : std::string();
  });
  const std::string message = error_of("remote");
  EXPECT_THROW(scaling_solver("remote"), RuntimeError);
  EXPECT_THROW(scaling_solver("other"), ValueError);  // a name no module provides
  scaling_solver("greedy");                           // registered: the loader is not asked
  set_scaling_solver_loader({});
  EXPECT_EQ(message, "autoscaler='remote' needs the remote backend (servelab._remote): not installed");
  EXPECT_EQ(asked, (std::vector<std::string>{"remote", "remote", "other"}));
}

TEST(InfaasScalingSolvers, ANameBelongsToOneOrigin) {
  EXPECT_THROW(register_scaling_solver("greedy", &greedy_scaling, "elsewhere"), ValueError);
  EXPECT_THROW(register_scaling_solver("", &greedy_scaling, "elsewhere"), ValueError);
  EXPECT_THROW(register_scaling_solver("empty", ScalingSolver{}, "elsewhere"), ValueError);
  register_scaling_solver("greedy_again", &greedy_scaling, "test");
  register_scaling_solver("greedy_again", &greedy_scaling, "test");  // the same origin may rejoin
  EXPECT_EQ(scaling_solver_origin("greedy_again"), "test");
}

TEST(InfaasScalingSolvers, IlpPlansAreReadLikeTheGreedys) {
  if (!solvers::lp::available()) GTEST_SKIP() << "built without an LP/MILP solver";
  const auto ilp = exact();
  // Short of capacity: a scale-up, cheaper than the greedy's (Table 3's last row).
  const auto up = plan_scaling(table2(1000, 300, {0, 0, 0}, 10), ilp);
  ASSERT_TRUE(up.feasible);
  EXPECT_EQ(up.instances, (std::vector<std::int64_t>{0, 2, 1}));
  EXPECT_FALSE(up.scale_down);
  EXPECT_FALSE(up.replicas_only);  // nothing ran: new variants, not replicas
  const auto greedy = plan_scaling(table2(1000, 300, {0, 0, 0}, 10));
  EXPECT_LE(up.running_cost_per_s, greedy.running_cost_per_s);
  // More of what runs: replicas only, as the greedy's "replicate".
  const auto more = plan_scaling(table2(1100, 300, {0, 2, 1}, 10), ilp);
  ASSERT_TRUE(more.feasible);
  EXPECT_TRUE(more.replicas_only);
  EXPECT_FALSE(more.scale_down);
  // Headroom: the plan only saves cost, so the policy waits before acting.
  const auto down = plan_scaling(table2(10, 300, {0, 2, 1}, 10), ilp);
  ASSERT_TRUE(down.feasible);
  EXPECT_TRUE(down.scale_down);
  EXPECT_EQ(down.instances, (std::vector<std::int64_t>{2, 0, 0}));
  // The load already fits at least cost: nothing changes.
  const auto keep = plan_scaling(table2(10, 300, {2, 0, 0}, 10), ilp);
  EXPECT_TRUE(keep.feasible);
  EXPECT_EQ(keep.delta, (std::vector<std::int64_t>{0, 0, 0}));
}

TEST(InfaasScalingSolvers, IlpShortOfWorkersCarriesTheMostItCanAndAsksForMore) {
  if (!solvers::lp::available()) GTEST_SKIP() << "built without an LP/MILP solver";
  const auto p = table2(5000, 300, {0, 0, 0}, 1);  // one worker per type carries 905 QPS at most
  EXPECT_FALSE(solve_scaling_ilp(p).feasible);
  const auto plan = plan_scaling(p, exact());
  EXPECT_TRUE(plan.feasible);
  EXPECT_EQ(plan.status, "needs_vm");
  EXPECT_GE(plan.capacity_qps, 800.0 * (1 - 1e-9));  // the GPU variant's worth, as the greedy's plan
  const auto greedy = plan_scaling(p);
  EXPECT_EQ(greedy.status, "needs_vm");
  EXPECT_GE(plan.capacity_qps, greedy.capacity_qps * (1 - 1e-9));
  // No variant meets the SLO: nothing to carry the load with, still a request for workers.
  const auto none = plan_scaling(table2(50, 10, {0, 0, 0}, 1), exact());
  EXPECT_FALSE(none.feasible);
  EXPECT_EQ(none.status, "needs_vm");
}

// The policy used to act on the greedy's strategy words; it now reads the flags plan_scaling sets
// from the problem. On random problems (short, with headroom, beyond the workers) they must say
// exactly what the words said, so that autoscaler='greedy' keeps its records.
TEST(InfaasScalingSolvers, GreedyFlagsMatchItsStrategies) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int scale_downs = 0, replicas = 0, short_of_workers = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    ScalingProblem p = table2(0, 0, {0, 0, 0}, 0);
    for (std::size_t v = 0; v < 3; ++v) {
      p.running[v] = static_cast<std::int64_t>(unit(rng) * 4);
      p.latency_ms[v] = 10 + 300 * unit(rng);
      p.saturation_qps[v] = 1 + 500 * unit(rng);
      p.cost_per_s[v] = 1 + 20 * unit(rng);
      p.capacity[v] = static_cast<double>(p.running[v]) + std::floor(unit(rng) * 5);
    }
    p.slo_ms = 50 + 250 * unit(rng);
    p.load_qps = 2000 * unit(rng);
    p.slack_qps = 0.05 * p.load_qps;
    const auto plan = plan_scaling(p);
    const bool down = plan.strategy == "remove" || plan.strategy == "downgrade";
    const bool changes = std::any_of(plan.delta.begin(), plan.delta.end(), [](std::int64_t d) { return d != 0; });
    if (plan.feasible) {
      EXPECT_EQ(plan.scale_down, down && changes) << trial << " " << plan.strategy;
      EXPECT_EQ(plan.replicas_only, plan.strategy == "replicate") << trial << " " << plan.strategy;
      // While loads are under way, the replicas part of a non-replicate scale-up is empty.
      if (!plan.replicas_only && !plan.scale_down) EXPECT_FALSE(replicas_part(p, plan).replicas_only) << trial;
      // Both worlds' rule while loads are under way: a replicate as it is, nothing else.
      const auto held = while_loading(p, plan);
      EXPECT_EQ(held.replicas_only, plan.replicas_only) << trial;
      if (plan.replicas_only) EXPECT_EQ(held.delta, plan.delta) << trial;
      if (!held.replicas_only) {
        EXPECT_TRUE(std::all_of(held.delta.begin(), held.delta.end(), [](std::int64_t d) { return d == 0; })) << trial;
      }
    }
    scale_downs += plan.scale_down, replicas += plan.replicas_only, short_of_workers += plan.status == "needs_vm";
  }
  EXPECT_GT(scale_downs, 100);  // every kind of plan was met
  EXPECT_GT(replicas, 100);
  EXPECT_GT(short_of_workers, 100);
}

// One GPU worker with a batch-1 (100 QPS) and a batch-8 (500 QPS) variant at 300 QPS.
cluster::RunSpec heavy() { return fixtures::one_gpu_run(3000, 300.0); }

TEST(InfaasScalingSolvers, PolicyWithTheIlpUpgradesAndRepeatsItself) {
  if (!solvers::lp::available()) GTEST_SKIP() << "built without an LP/MILP solver";
  exact();
  auto policy = catalogue::schedulers().make("infaas(autoscaler='ilp')");
  EXPECT_EQ(policy->describe(), "infaas(autoscaler='ilp')");
  const auto r = sim::simulate(heavy(), *policy);
  const auto& m = r.queries.model;
  EXPECT_GT(static_cast<double>(std::count(m.begin(), m.end(), 1)) / static_cast<double>(m.size()), 0.8);
  auto again = catalogue::schedulers().make("infaas(autoscaler='ilp')");
  const auto s = sim::simulate(heavy(), *again);
  EXPECT_EQ(r.queries.model, s.queries.model);
  EXPECT_EQ(r.queries.worker, s.queries.worker);
  EXPECT_EQ(r.queries.finish, s.queries.finish);
}

}  // namespace
}  // namespace servelab::infaas
