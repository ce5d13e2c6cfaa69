// The fluid upper bound: cases solvable by hand, monotonicity, the success probabilities and the
// size classes it is built from, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/solvers/lp/lp.hpp"
#include "servelab/systems/kairos/fluid_bound.hpp"
#include "servelab/workload/sizes.hpp"

namespace servelab::kairos {
namespace {

using profile::LatencyDistribution;
using profile::Profile;

#define SKIP_WITHOUT_LP() \
  if (!solvers::lp::available()) GTEST_SKIP() << "servelab was built without an LP solver"

// Every sample equal: a deterministic latency.
LatencyDistribution fixed(double seconds) { return LatencyDistribution::from_samples({seconds, seconds}); }

FluidOptions strict() {
  FluidOptions o;
  o.violation = 0.0;
  return o;
}

// cpu serves small queries (size 10) only; gpu serves both, faster.
Profile two_types() {
  Profile p;
  p.set_latency("cpu", "m", 10, fixed(0.2));
  p.set_latency("cpu", "m", 100, fixed(2.0));
  p.set_latency("gpu", "m", 10, fixed(0.05));
  p.set_latency("gpu", "m", 100, fixed(0.1));
  return p;
}

const SizeClasses kHalfHalf = size_classes({{10, 0.5}, {100, 0.5}});

TEST(FluidBound, OneTypeOneClassIsCountOverLatency) {
  SKIP_WITHOUT_LP();
  Profile p;
  p.set_latency("gpu", "m", 10, fixed(0.1));
  const auto one = size_classes({{10, 1.0}});
  EXPECT_NEAR(fluid_upper_bound(p, "m", {{"gpu", 3}}, 1.0, one, strict()).throughput, 30.0, 1e-9);
  // Allowing 1% of the queries to be lost adds exactly that share on top.
  FluidOptions p99;
  p99.violation = 0.01;
  EXPECT_NEAR(fluid_upper_bound(p, "m", {{"gpu", 3}}, 1.0, one, p99).throughput, 30.0 / 0.99, 1e-9);
  // A QoS below the latency: nothing can be served.
  EXPECT_NEAR(fluid_upper_bound(p, "m", {{"gpu", 3}}, 0.05, one, strict()).throughput, 0.0, 1e-12);
}

TEST(FluidBound, TwoTypesSplitTheSmallQueries) {
  SKIP_WITHOUT_LP();
  // Large queries only fit on gpu (2 s > QoS 1 s on cpu). cpu saturates on small ones (5/s);
  // gpu takes the rest: 0.05 (lambda/2 - 5) + 0.1 lambda/2 = 1  ->  lambda = 50/3.
  const auto b = fluid_upper_bound(two_types(), "m", {{"cpu", 1}, {"gpu", 1}}, 1.0, kHalfHalf, strict());
  EXPECT_NEAR(b.throughput, 50.0 / 3.0, 1e-9);
  ASSERT_EQ(b.types, (std::vector<std::string>{"cpu", "gpu"}));
  EXPECT_NEAR(b.rate[0 * 2 + 0], 5.0, 1e-9);  // small on cpu
  EXPECT_EQ(b.rate[1 * 2 + 0], 0.0);          // large on cpu: not allowed
  EXPECT_NEAR(b.utilisation[0], 1.0, 1e-9);
  EXPECT_NEAR(b.utilisation[1], 1.0, 1e-9);
  EXPECT_NEAR(b.type_rate[0] + b.type_rate[1], b.throughput, 1e-9);
  EXPECT_EQ(b.success[1 * 2 + 0], 0.0);
  EXPECT_NEAR(b.miss_rate, 0.0, 1e-9);
}

TEST(FluidBound, MonotoneInEveryCount) {
  SKIP_WITHOUT_LP();
  const auto p = two_types();
  std::mt19937 rng(3);
  for (int trial = 0; trial < 30; ++trial) {
    const std::int64_t cpu = rng() % 5, gpu = rng() % 4;
    const auto base = fluid_upper_bound(p, "m", {{"cpu", cpu}, {"gpu", gpu}}, 1.0, kHalfHalf).throughput;
    const auto more_cpu = fluid_upper_bound(p, "m", {{"cpu", cpu + 1}, {"gpu", gpu}}, 1.0, kHalfHalf).throughput;
    const auto more_gpu = fluid_upper_bound(p, "m", {{"cpu", cpu}, {"gpu", gpu + 1}}, 1.0, kHalfHalf).throughput;
    EXPECT_GE(more_cpu, base - 1e-9);
    EXPECT_GT(more_gpu, base);  // gpu can take anything, so it always helps
  }
  // Repeated types add up; zero counts change nothing.
  EXPECT_NEAR(fluid_upper_bound(p, "m", {{"gpu", 1}, {"cpu", 0}, {"gpu", 1}}, 1.0, kHalfHalf).throughput,
              fluid_upper_bound(p, "m", {{"gpu", 2}}, 1.0, kHalfHalf).throughput, 1e-9);
}

TEST(FluidBound, RandomServiceTimesCountTheirMisses) {
  SKIP_WITHOUT_LP();
  // Half the executions take 0.5 s, half 1.5 s: with QoS 1 s each served query misses with
  // probability 1/2. Mean 1 s, so 2 instances serve 2/s; with 60% allowed to miss, a share
  // lambda - x may be dropped: 0.5 x + (lambda - x) <= 0.6 lambda  ->  lambda <= 1.25 x = 2.5.
  Profile p;
  p.set_latency("cpu", "m", 1, LatencyDistribution::from_samples({0.5, 1.5}));
  const auto one = size_classes({{1, 1.0}});
  FluidOptions o;
  o.violation = 0.6;
  const auto b = fluid_upper_bound(p, "m", {{"cpu", 2}}, 1.0, one, o);
  EXPECT_NEAR(b.success[0], 0.5, 1e-9);
  EXPECT_NEAR(b.throughput, 2.5, 1e-9);
  EXPECT_NEAR(b.miss_rate, 0.6 * 2.5, 1e-9);
  // With p99 nothing can be served: every served query has a 50% chance to miss.
  EXPECT_NEAR(fluid_upper_bound(p, "m", {{"cpu", 2}}, 1.0, one).throughput, 0.0, 1e-9);
  // The deterministic model with the median (1 s <= QoS) lets everything through instead.
  o.violation = 0.0;
  o.eligibility = profile::Statistic::P50;
  EXPECT_NEAR(fluid_upper_bound(p, "m", {{"cpu", 2}}, 1.0, one, o).throughput, 2.0, 1e-9);
}

TEST(FluidBound, TailBeyondEveryProfileIsLost) {
  SKIP_WITHOUT_LP();
  Profile p;
  p.set_latency("gpu", "m", 10, fixed(0.1));
  FluidOptions o;
  o.violation = 0.05;
  // 2% of sizes exceed the profile: they count against the 5% allowance, which leaves 3% of lambda
  // to drop; the other 95% must be served at 10/s.
  const auto b = fluid_upper_bound(p, "m", {{"gpu", 1}}, 1.0, size_classes({{10, 0.98}}, 0.02), o);
  EXPECT_NEAR(b.throughput, 10.0 / 0.95, 1e-9);
  o.violation = 0.01;
  EXPECT_NEAR(fluid_upper_bound(p, "m", {{"gpu", 1}}, 1.0, size_classes({{10, 0.98}}, 0.02), o).throughput, 0.0, 1e-12);
}

TEST(FluidBound, SuccessProbabilityFollowsTheSimulatorsInterpolation) {
  Profile p;
  p.set_latency("cpu", "m", 10, LatencyDistribution::from_samples({1, 2, 3, 4}));
  p.set_latency("cpu", "m", 20, LatencyDistribution::from_samples({3, 4, 5, 6}));
  const auto h = p.hardware_index("cpu"), m = p.model_index("m");
  EXPECT_NEAR(success_probability(p, h, m, 10, 2.5), 0.5, 1e-12);
  EXPECT_NEAR(success_probability(p, h, m, 15, 3.5), 0.5, 1e-12);  // halfway: {2, 3, 4, 5}
  EXPECT_NEAR(success_probability(p, h, m, 15, 3.0), 0.5, 1e-12);  // <= counts
  EXPECT_EQ(success_probability(p, h, m, 15, 1.9), 0.0);
  EXPECT_EQ(success_probability(p, h, m, 20, 6.0), 1.0);
  EXPECT_NEAR(success_probability(p, h, m, 5, 1.5), 0.25, 1e-12);  // below the first batch: its samples
  EXPECT_THROW(success_probability(p, h, m, 21, 1.0), ValueError);
}

TEST(FluidBound, SizeClassesFromADistribution) {
  const workload::UniformSize uniform(1, 40, 10);  // 1..40 rounded up to 10, 20, 30, 40
  const auto all = size_classes(uniform, 1000);
  ASSERT_EQ(all.classes.size(), 4u);
  for (const auto& c : all.classes) EXPECT_NEAR(c.probability, 0.25, 1e-12);
  EXPECT_NEAR(all.tail, 0.0, 1e-12);
  const auto cut = size_classes(uniform, 25);
  ASSERT_EQ(cut.classes.size(), 2u);
  EXPECT_NEAR(cut.tail, 0.5, 1e-12);
  EXPECT_THROW(size_classes(workload::UniformSize(1, 100000), 100000, 5000), ValueError);
}

TEST(FluidBound, BadInputIsAClearError) {
  const auto p = two_types();
  EXPECT_THROW(fluid_upper_bound(p, "m", {{"tpu", 1}}, 1.0, kHalfHalf), KeyError);
  EXPECT_THROW(fluid_upper_bound(p, "nope", {{"cpu", 1}}, 1.0, kHalfHalf), KeyError);
  EXPECT_THROW(fluid_upper_bound(p, "m", {{"cpu", -1}}, 1.0, kHalfHalf), ValueError);
  EXPECT_THROW(fluid_upper_bound(p, "m", {{"cpu", 1}}, 0.0, kHalfHalf), ValueError);
  FluidOptions all_lost;
  all_lost.violation = 1.0;
  EXPECT_THROW(fluid_upper_bound(p, "m", {{"cpu", 1}}, 1.0, kHalfHalf, all_lost), ValueError);
  Profile other = two_types();
  other.set_latency("cpu", "other", 10, fixed(0.1));
  try {
    fluid_upper_bound(other, "other", {{"cpu", 1}, {"gpu", 1}}, 1.0, kHalfHalf);
    ADD_FAILURE() << "no error for a type without latencies";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'gpu' has no latency for model 'other'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(size_classes({{10, 0.5}, {20, 0.4}}), ValueError);   // sums to 0.9
  EXPECT_THROW(size_classes({{10, 0.5}, {10, 0.5}}), ValueError);   // repeated size
  EXPECT_THROW(size_classes({{0, 1.0}}), ValueError);               // size below 1
  EXPECT_THROW(size_classes({{10, -0.5}, {20, 1.5}}), ValueError);  // not a probability
}

}  // namespace
}  // namespace servelab::kairos
