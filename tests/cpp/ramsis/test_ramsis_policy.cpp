// RAMSIS policies: generation with guarantees, decisions, policy sets, JSON.
#include <gtest/gtest.h>

#include <cmath>

#include "ramsis/ramsis_fixtures.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/systems/ramsis/guarantees.hpp"
#include "servelab/systems/ramsis/policy_set.hpp"

using namespace servelab;
using namespace servelab::ramsis;

namespace {

LatencyTable table3() { return servelab::ramsis::testing::three_model_table(); }

GenerateOptions options(double load = 300) {
  GenerateOptions o;
  o.mdp.slo = millis_to_nanos(40);
  o.mdp.load_qps = load;
  o.mdp.workers = 3;
  o.mdp.max_queue = 6;
  o.mdp.intervals = 10;
  return o;
}

}  // namespace

TEST(RamsisPolicy, GenerateAndGuarantees) {
  const Generated g = generate_policy(table3(), options());
  const WorkerPolicy& p = g.policy;
  EXPECT_NO_THROW(p.validate());
  EXPECT_TRUE(p.feasible);
  EXPECT_GT(p.expected_accuracy, 0.6);
  EXPECT_LT(p.expected_accuracy, 0.85);
  EXPECT_GE(p.expected_violation, 0.0);
  EXPECT_LT(p.expected_violation, 0.01);
  double sum = 0;
  for (double x : g.guarantees.distribution) sum += x;
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_TRUE(g.guarantees.converged);
  // The policy maps back to the same solver choice on the same MDP.
  const RamsisMdp mdp = build_mdp(table3(), options().mdp);
  const auto choice = policy_choice(mdp, p);
  const Guarantees again = evaluate(mdp, choice);
  EXPECT_DOUBLE_EQ(again.expected_accuracy, p.expected_accuracy);
  // Overload: flagged infeasible, numbers still finite.
  const Generated over = generate_policy(table3(), options(5000));
  EXPECT_FALSE(over.policy.feasible);
  EXPECT_TRUE(std::isfinite(over.policy.expected_accuracy));
  EXPECT_GT(over.policy.expected_violation, 0.5);
}

TEST(RamsisPolicy, Decide) {
  const WorkerPolicy p = generate_policy(table3(), options()).policy;
  EXPECT_EQ(p.decide(0, millis_to_nanos(10)).model, kWaitModel);
  EXPECT_EQ(p.level_of(-5), 0);
  EXPECT_EQ(p.level_of(0), 0);
  EXPECT_EQ(p.level_of(millis_to_nanos(4) - 1), 0);
  EXPECT_EQ(p.level_of(millis_to_nanos(4)), 1);
  EXPECT_EQ(p.level_of(millis_to_nanos(1000)), p.num_levels() - 1);
  const Action full = p.decide(100, 0);
  EXPECT_EQ(full.model, 0);
  EXPECT_EQ(full.batch, p.max_queue + 1);
  for (int n = 1; n <= p.max_queue; ++n) {
    const Action a = p.decide(n, millis_to_nanos(39));
    EXPECT_EQ(a.batch, n);  // maximal batching
    EXPECT_GE(a.model, 0);
  }
}

TEST(RamsisPolicy, JsonRoundTrip) {
  const WorkerPolicy p = generate_policy(table3(), options()).policy;
  const std::string text = to_json(p);
  const WorkerPolicy q = worker_policy_from_json(text);
  EXPECT_EQ(to_json(q), text);
  EXPECT_EQ(q.action_model, p.action_model);
  EXPECT_EQ(q.slack_levels, p.slack_levels);
  EXPECT_DOUBLE_EQ(q.expected_accuracy, p.expected_accuracy);
  EXPECT_THROW(worker_policy_from_json("{\"format\": \"servelab.ramsis.worker_policy\"}"), ValueError);
  EXPECT_THROW(worker_policy_from_json("[1, 2"), ValueError);
  std::string bad = text;
  bad.replace(bad.find("\"max_queue\":6"), 13, "\"max_queue\":7");
  EXPECT_THROW(worker_policy_from_json(bad), ValueError);  // the tables no longer fit
}

TEST(RamsisPolicy, PolicySetRefinesAndLooksUp) {
  PolicySetOptions o;
  o.generate = options();
  o.loads_qps = {600, 100};
  const PolicySet set = generate_policy_set(table3(), o);
  ASSERT_GE(set.policies.size(), 3u);
  EXPECT_DOUBLE_EQ(set.policies.front().load_qps, 100);
  EXPECT_DOUBLE_EQ(set.policies.back().load_qps, 600);
  for (std::size_t i = 0; i + 1 < set.policies.size(); ++i) {
    const auto &a = set.policies[i], &b = set.policies[i + 1];
    const bool refined_enough = std::abs(a.expected_accuracy - b.expected_accuracy) < o.max_accuracy_gap;
    const bool too_close = b.load_qps - a.load_qps < 2 * o.min_load_step_qps;
    EXPECT_TRUE(refined_enough || too_close || (!a.feasible && !b.feasible)) << a.load_qps << " " << b.load_qps;
  }
  EXPECT_EQ(set.lookup_index(100), 0);
  EXPECT_EQ(set.lookup_index(50), 0);
  EXPECT_EQ(set.lookup_index(100.5), 1);
  EXPECT_EQ(set.lookup_index(1e9), static_cast<int>(set.policies.size()) - 1);
  EXPECT_THROW(set.lookup_index(std::nan("")), ValueError);
  const PolicySet back = policy_set_from_json(to_json(set));
  EXPECT_EQ(to_json(back), to_json(set));
  o.loads_qps = {};
  EXPECT_THROW(generate_policy_set(table3(), o), ValueError);
}
