// The RAMSIS online scheduler: round-robin dispatch into per-worker EDF queues, and the action of
// the policy of the (known or estimated) load for each worker's state.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "ramsis/ramsis_fixtures.hpp"
#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/systems/ramsis/policy.hpp"
#include "servelab/systems/ramsis/scheduler.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::ramsis {
namespace {

constexpr Nanos kMs = kNanosPerMilli;

using testing::two_model_profile;

cluster::RunSpec replay(std::vector<double> times_s, std::int32_t workers, double slo_ms = 100) {
  cluster::RunSpec spec;
  spec.profile = two_model_profile();
  spec.workers = {cluster::WorkerGroup{"cpu", workers, {}, {}}};
  workload::Application app{"a", 1.0, millis_to_nanos(slo_ms), nullptr, 0.0};
  const auto count = static_cast<std::int64_t>(times_s.size());
  spec.workload =
      std::make_shared<workload::Workload>(std::make_shared<workload::Replay>(times_s), std::vector{app}, count);
  spec.decision_statistic = profile::Statistic::P95;
  spec.service_statistic = profile::Statistic::P95;
  return spec;
}

// A hand-made policy over models {small, big} with slack levels {0, 50, 100} ms and N = 2:
// one query with at least 50 ms of slack -> big; one with less -> small; two -> small, both;
// the overflow state -> small, up to 3.
WorkerPolicy hand_policy(double load_qps, std::int32_t workers, std::int32_t one_query_model = 1) {
  WorkerPolicy p;
  p.models = {"small", "big"};
  p.accuracy = {60, 90};
  p.slo = 100 * kMs;
  p.load_qps = load_qps;
  p.workers = workers;
  p.slack_levels = {0, 50 * kMs, 100 * kMs};
  p.max_queue = 2;
  p.action_model = {kWaitModel, kWaitModel, kWaitModel, 0, one_query_model, one_query_model, 0, 0, 0, 0};
  p.action_batch = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3};
  p.validate();
  return p;
}

std::shared_ptr<const PolicySet> set_of(std::vector<WorkerPolicy> policies) {
  auto s = std::make_shared<PolicySet>();
  s->models = policies.front().models;
  s->accuracy = policies.front().accuracy;
  s->slo = policies.front().slo;
  s->workers = policies.front().workers;
  s->policies = std::move(policies);
  s->validate();
  return s;
}

TEST(Ramsis, RoundRobinIntoEdfQueuesAndThePolicysActions) {
  // K = 2. q0..q3 at t=0, q4 at 1 ms: q0 -> w0 and q1 -> w1 start at once with one query of full
  // slack (big, 50 ms); q2 and q4 wait at w0, q3 at w1. At 50 ms w0 holds two -> small, both;
  // w1 holds one with 50 ms of slack left -> big.
  const auto spec = replay({0, 0, 0, 0, 0.001}, 2);
  RamsisOptions o;
  o.fixed_load_qps = 10;
  auto ramsis = make_ramsis(set_of({hand_policy(10, 2)}), o);
  const auto r = sim::simulate(spec, *ramsis);
  const auto small = spec.profile->model_index("small"), big = spec.profile->model_index("big");
  const std::vector<std::int32_t> worker{0, 1, 0, 1, 0};
  for (int q = 0; q < 5; ++q) EXPECT_EQ(r.queries.worker[q], worker[q]) << q;
  EXPECT_EQ(r.queries.model[0], big);
  EXPECT_EQ(r.queries.model[1], big);
  EXPECT_EQ(r.queries.model[2], small);
  EXPECT_EQ(r.queries.model[4], small);
  EXPECT_EQ(r.queries.batch_queries[2], 2);
  EXPECT_EQ(r.queries.start[2], 50 * kMs);
  EXPECT_EQ(r.queries.model[3], big);
  EXPECT_EQ(r.queries.start[3], 50 * kMs);
  EXPECT_EQ(r.queries.finish[3], 100 * kMs);  // exactly at its deadline: met
}

TEST(Ramsis, OverflowStateServesUpToItsBatchEarliestDeadlinesFirst) {
  // One worker: q0 runs (big, 50 ms); q1..q4 wait (4 > N = 2: the overflow state) -> small, 3 of
  // them (q1, q2, q3: the earliest deadlines), then q4 alone.
  const auto spec = replay({0, 0.001, 0.002, 0.003, 0.004}, 1);
  RamsisOptions o;
  o.fixed_load_qps = 10;
  auto ramsis = make_ramsis(set_of({hand_policy(10, 1)}), o);
  const auto r = sim::simulate(spec, *ramsis);
  for (int q = 1; q <= 3; ++q) {
    EXPECT_EQ(r.queries.start[q], 50 * kMs);
    EXPECT_EQ(r.queries.batch_queries[q], 3);
  }
  EXPECT_EQ(r.queries.start[4], 66 * kMs);  // small at batch 3: 16 ms
  EXPECT_EQ(r.queries.batch_queries[4], 1);
}

TEST(Ramsis, TheEstimatedLoadSelectsThePolicy) {
  // The low-load policy serves a lone query with big, the high-load one with small. Spaced
  // arrivals (2/s) read as low load; queries in a burst of 2000/s read as high load.
  std::vector<double> times;
  for (int i = 1; i <= 6; ++i) times.push_back(i * 0.5);
  for (int i = 0; i < 40; ++i) times.push_back(4.0 + i * 0.0005);
  const auto spec = replay(times, 1);
  auto ramsis = make_ramsis(set_of({hand_policy(5, 1, 1), hand_policy(1000, 1, 0)}), RamsisOptions{});
  const auto r = sim::simulate(spec, *ramsis);
  const auto small = spec.profile->model_index("small"), big = spec.profile->model_index("big");
  EXPECT_EQ(r.queries.model[3], big);
  // The burst queues behind q6: high load -> small, 3 at a time (the overflow state's batch).
  EXPECT_EQ(r.queries.model[45], small);
  EXPECT_EQ(r.queries.batch_queries[45], 3);
}

TEST(Ramsis, SameSeedSameRecords) {
  std::vector<double> times;
  for (int i = 0; i < 300; ++i) times.push_back(i * 0.0037);
  const auto spec = replay(times, 3);
  auto a = make_ramsis(set_of({hand_policy(5, 3), hand_policy(1000, 3, 0)}), RamsisOptions{});
  auto b = make_ramsis(set_of({hand_policy(5, 3), hand_policy(1000, 3, 0)}), RamsisOptions{});
  const auto ra = sim::simulate(spec, *a);
  const auto rb = sim::simulate(spec, *b);
  EXPECT_EQ(ra.queries.model, rb.queries.model);
  EXPECT_EQ(ra.queries.start, rb.queries.start);
  EXPECT_EQ(ra.queries.worker, rb.queries.worker);
}

TEST(Ramsis, BadInputIsAClearError) {
  EXPECT_THROW(make_ramsis(std::shared_ptr<const PolicySet>{}, RamsisOptions{}), ValueError);
  RamsisOptions bad;
  bad.fixed_load_qps = -1;
  EXPECT_THROW(make_ramsis(set_of({hand_policy(10, 1)}), bad), ValueError);
  // A policy over a model the profile does not have: KeyError when the run starts.
  WorkerPolicy p = hand_policy(10, 1);
  p.models = {"small", "huge"};
  auto unknown = make_ramsis(set_of({p}), RamsisOptions{});
  EXPECT_THROW(sim::simulate(replay({0}, 1), *unknown), KeyError);
  EXPECT_THROW(load_policy_set("/nonexistent/policies.json"), RuntimeError);
}

TEST(Ramsis, RegisteredAndLoadsItsPoliciesFromJson) {
  const auto& registry = catalogue::schedulers();
  ASSERT_TRUE(registry.contains("ramsis"));
  const std::string path = ::testing::TempDir() + "ramsis_policies.json";
  {
    std::ofstream out(path);
    out << to_json(*set_of({hand_policy(10, 2)}));
  }
  auto ramsis = registry.make("ramsis(policies='" + path + "', load_qps=10)");
  EXPECT_EQ(ramsis->describe(), "ramsis(policies='" + path + "', load_qps=10, window_ms=500)");
  const auto spec = replay({0, 0, 0, 0, 0.001}, 2);
  const auto r = sim::simulate(spec, *ramsis);
  EXPECT_EQ(r.queries.batch_queries[2], 2);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace servelab::ramsis
