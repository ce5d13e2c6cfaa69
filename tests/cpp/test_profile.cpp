#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/profile/estimator.hpp"
#include "servelab/profile/profile.hpp"

namespace servelab::profile {
namespace {

// Throws E and its message contains every fragment.
template <typename E, typename F>
void expect_error(F&& f, std::vector<std::string> fragments) {
  try {
    f();
    FAIL() << "no exception";
  } catch (const E& e) {
    for (const auto& fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// gpu/rm2: batch 10 -> samples {10,20,30,40} ms (mean 25), batch 20 -> {50} ms; cpu/rm2: percentiles.
Profile make_profile() {
  Profile p;
  p.set_price("gpu", 0.526);
  p.set_price("cpu", 0.149);
  p.set_accuracy("rm2", 0.8);
  p.set_latency("gpu", "rm2", 10, LatencyDistribution::from_samples({0.040, 0.010, 0.030, 0.020}));
  p.set_latency("gpu", "rm2", 20, LatencyDistribution::from_samples({0.050}));
  p.set_latency("cpu", "rm2", 4, LatencyDistribution::from_percentiles({{95, 0.020}, {50, 0.010}}));
  return p;
}

TEST(LatencyDistribution, SampleStatisticsMatchNumpy) {
  const auto d = LatencyDistribution::from_samples({0.040, 0.010, 0.030, 0.020, 0.100});
  EXPECT_DOUBLE_EQ(d.statistic(Statistic::Mean), 0.040);
  EXPECT_DOUBLE_EQ(d.statistic(Statistic::MeanWithoutMax), 0.025);  // drops the single 0.100
  EXPECT_DOUBLE_EQ(d.statistic(Statistic::P50), 0.030);
  // numpy.percentile([10,20,30,40,100], 95) = 40 + 0.8 * 60 = 88 ms.
  EXPECT_NEAR(d.statistic(Statistic::P95), 0.088, 1e-15);
  EXPECT_NEAR(d.statistic(Statistic::P99), 0.0976, 1e-15);
  EXPECT_EQ(d.sorted_values(), (std::vector<double>{0.010, 0.020, 0.030, 0.040, 0.100}));
  EXPECT_DOUBLE_EQ(LatencyDistribution::from_samples({0.5}).statistic(Statistic::MeanWithoutMax), 0.5);
}

TEST(LatencyDistribution, PercentileQuantileIsPiecewiseLinearAndFlatOutside) {
  const auto d = LatencyDistribution::from_percentiles({{50, 0.010}, {90, 0.018}, {99, 0.027}});
  EXPECT_DOUBLE_EQ(d.quantile(0.0), 0.010);
  EXPECT_DOUBLE_EQ(d.quantile(0.3), 0.010);
  EXPECT_DOUBLE_EQ(d.quantile(0.70), 0.014);
  EXPECT_NEAR(d.quantile(0.95), 0.023, 1e-15);
  EXPECT_DOUBLE_EQ(d.quantile(1.0), 0.027);
  EXPECT_DOUBLE_EQ(d.statistic(Statistic::P50), 0.010);
  // Mean = integral of the quantile function: 0.5*10 + 0.4*14 + 0.09*22.5 + 0.01*27 ms.
  EXPECT_NEAR(d.statistic(Statistic::Mean), (5 + 5.6 + 2.025 + 0.27) / 1000, 1e-15);
  EXPECT_FALSE(d.has_samples());
  ASSERT_EQ(d.percentile_points().size(), 3u);
}

TEST(LatencyDistribution, RejectsBadInput) {
  expect_error<ValueError>([] { LatencyDistribution::from_samples({}); }, {"samples"});
  expect_error<ValueError>([] { LatencyDistribution::from_samples({0.1, -0.2}); }, {"samples[1]=-0.2"});
  expect_error<ValueError>([] { LatencyDistribution::from_samples({0.0}); }, {"samples[0]=0"});
  expect_error<ValueError>([] { LatencyDistribution::from_samples({NAN}); }, {"samples[0]=nan"});
  expect_error<ValueError>([] { LatencyDistribution::from_percentiles({{0, 0.1}}); }, {"percentile=0"});
  expect_error<ValueError>([] { LatencyDistribution::from_percentiles({{101, 0.1}}); }, {"percentile=101"});
  expect_error<ValueError>(
      [] {
        LatencyDistribution::from_percentiles({{50, 0.2}, {95, 0.1}});
      },
      {"percentile 95 latency=0.1", "percentile 50"});
  expect_error<ValueError>(
      [] {
        LatencyDistribution::from_percentiles({{50, 0.1}, {50, 0.2}});
      },
      {"percentile=50", "twice"});
  expect_error<ValueError>([] { LatencyDistribution::from_samples({0.1}).quantile(1.5); }, {"u=1.5"});
}

TEST(Statistic, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(parse_statistic("mean_without_max"), Statistic::MeanWithoutMax);
  EXPECT_EQ(parse_statistic("p95"), Statistic::P95);
  EXPECT_EQ(statistic_name(Statistic::P99), "p99");
  expect_error<ValueError>([] { parse_statistic("p42", "decision_statistic"); }, {"decision_statistic='p42'"});
}

TEST(Profile, InternsNamesInOrderOfFirstMention) {
  const auto p = make_profile();
  EXPECT_EQ(p.hardware(), (std::vector<std::string>{"gpu", "cpu"}));
  EXPECT_EQ(p.models(), (std::vector<std::string>{"rm2"}));
  EXPECT_EQ(p.hardware_index("cpu"), 1);
  EXPECT_DOUBLE_EQ(p.price(0), 0.526);
  EXPECT_DOUBLE_EQ(p.accuracy(0), 0.8);
  Profile q = p;
  EXPECT_EQ(q.add_hardware("gpu"), 0);  // idempotent
  EXPECT_EQ(q.add_model("bert"), 1);
  EXPECT_TRUE(std::isnan(q.accuracy(1)));
  EXPECT_EQ(p.batches(0, 0), (std::vector<std::int64_t>{10, 20}));
  EXPECT_EQ(p.max_batch(1, 0), 4);
  EXPECT_EQ(q.max_batch(0, 1), 0);
  EXPECT_FALSE(q.has_latency(0, 1));
}

TEST(Profile, InterpolatesLinearlyAndHoldsBelowTheFirstBatch) {
  const auto p = make_profile();
  EXPECT_DOUBLE_EQ(p.latency(0, 0, 10, Statistic::Mean), 0.025);
  EXPECT_DOUBLE_EQ(p.latency(0, 0, 1, Statistic::Mean), 0.025);
  EXPECT_DOUBLE_EQ(p.latency(0, 0, 15, Statistic::Mean), 0.0375);
  EXPECT_DOUBLE_EQ(p.latency(0, 0, 12, Statistic::MeanWithoutMax), 0.020 + 0.2 * (0.050 - 0.020));
  EXPECT_DOUBLE_EQ(p.latency(0, 0, 20, Statistic::P99), 0.050);
}

TEST(Profile, DecisionTableEqualsLatencyForEveryBatch) {
  const auto p = make_profile();
  for (const auto statistic : {Statistic::Mean, Statistic::P95, Statistic::MeanWithoutMax}) {
    const auto table = p.decision_table(0, 0, statistic);
    ASSERT_EQ(table.size(), 21u);
    EXPECT_EQ(table[0], table[1]);
    for (std::int64_t b = 1; b <= 20; ++b) {
      EXPECT_EQ(table[b], seconds_to_nanos(p.latency(0, 0, b, statistic))) << b;
    }
  }
  EXPECT_EQ(p.decision_table(0, 0, Statistic::Mean)[15], 37'500'000);
}

TEST(Profile, SamplingIsDeterministicAndDrawsMeasuredValues) {
  const auto p = make_profile();
  Rng a(42, "service"), b(42, "service"), c(43, "service");
  std::vector<Nanos> xs, ys, zs;
  for (int i = 0; i < 200; ++i) {
    xs.push_back(p.sample_ns(0, 0, 10, a));
    ys.push_back(p.sample_ns(0, 0, 10, b));
    zs.push_back(p.sample_ns(0, 0, 10, c));
  }
  EXPECT_EQ(xs, ys);
  EXPECT_NE(xs, zs);
  for (const auto x : xs) EXPECT_TRUE(x == 10'000'000 || x == 20'000'000 || x == 30'000'000 || x == 40'000'000) << x;
  // Each of the 4 samples is equally likely: 200 draws see all of them.
  for (const Nanos v : {10'000'000, 20'000'000, 30'000'000, 40'000'000}) {
    EXPECT_NE(std::find(xs.begin(), xs.end(), v), xs.end());
  }
}

TEST(Profile, InterpolatedSamplesUseOneUniformForBothNeighbours) {
  const auto p = make_profile();
  Rng rng(7, "service");
  Rng replay(7, "service");
  for (int i = 0; i < 50; ++i) {
    const double u = replay.uniform();
    const auto& lo = p.latency_at(0, 0, 10);
    const double expected = lo.draw(u) + (0.050 - lo.draw(u)) * 0.5;
    EXPECT_EQ(p.sample_ns(0, 0, 15, rng), seconds_to_nanos(expected));
  }
  // Percentile distributions sample quantile(U): always within [p50 value, p95 value].
  for (int i = 0; i < 100; ++i) {
    const auto ns = p.sample_ns(1, 0, 4, rng);
    EXPECT_GE(ns, 10'000'000);
    EXPECT_LE(ns, 20'000'000);
  }
}

TEST(Profile, SamplingTableDrawsWhatSampleNsDrawsForEveryBatch) {
  auto p = make_profile();
  p.set_latency("gpu", "rm2", 3, LatencyDistribution::from_samples({0.004, 0.007, 0.005}));  // below 10
  Rng rng(11, "service");
  for (const std::int32_t hardware : {0, 1}) {
    const auto table = p.sampling_table(hardware, 0);
    ASSERT_EQ(table.size(), static_cast<std::size_t>(p.max_batch(hardware, 0)) + 1);
    for (int i = 0; i < 300; ++i) {
      const double u = rng.uniform();
      EXPECT_EQ(Profile::sample_ns_at(table[0], u), p.sample_ns_at(hardware, 0, 1, u));
      for (std::int64_t b = 1; b < static_cast<std::int64_t>(table.size()); ++b) {
        ASSERT_EQ(Profile::sample_ns_at(table[static_cast<std::size_t>(b)], u), p.sample_ns_at(hardware, 0, b, u))
            << "hardware " << hardware << " batch " << b << " u " << u;
      }
    }
  }
  const auto bare = p.add_model("bare");
  expect_error<ValueError>([&] { p.sampling_table(0, bare); }, {"no latency", "bare"});
}

TEST(Profile, ErrorsNameTheFieldAndValue) {
  auto p = make_profile();
  expect_error<ValueError>([&] { p.latency(0, 0, 21, Statistic::Mean); },
                           {"batch=21", "largest profiled batch 20", "'gpu'", "'rm2'"});
  expect_error<ValueError>([&] { p.sample_ns(0, 0, 0, *std::make_unique<Rng>(1, "x")); }, {"batch=0"});
  expect_error<KeyError>([&] { p.hardware_index("tpu"); }, {"'tpu'", "'gpu', 'cpu'"});
  expect_error<KeyError>([&] { p.model_index("bert"); }, {"'bert'", "'rm2'"});
  expect_error<KeyError>([&] { p.price(5); }, {"index 5"});
  expect_error<ValueError>([&] { p.set_price("gpu", -1); }, {"price_per_hour=-1", "'gpu'"});
  expect_error<ValueError>([&] { p.set_accuracy("rm2", 1.5); }, {"accuracy=1.5", "'rm2'"});
  expect_error<ValueError>([&] { p.set_accuracy("rm2", NAN); }, {"accuracy=nan"});
  expect_error<ValueError>([&] { p.set_latency("gpu", "rm2", 0, LatencyDistribution::from_samples({1})); },
                           {"batch=0"});
  expect_error<ValueError>([&] { p.set_memory_mb("gpu", "rm2", -3); }, {"memory_mb=-3"});
  expect_error<ValueError>([&] { p.set_load_time("gpu", "rm2", INFINITY); }, {"load_time_s=inf"});
  expect_error<ValueError>([&] { p.add_hardware(""); }, {"hardware=''"});
  p.add_model("bert");
  expect_error<ValueError>([&] { p.latency(0, 1, 1, Statistic::Mean); }, {"no latency", "'gpu'", "'bert'"});
  expect_error<ValueError>([&] { p.decision_table(0, 1, Statistic::Mean); }, {"no latency"});
  expect_error<ValueError>([&] { p.latency_at(0, 0, 15); }, {"batch=15", "not measured"});
  p.add_hardware("tpu");
  expect_error<KeyError>([&] { p.price(2); }, {"'tpu'", "no price"});
}

TEST(Profile, MemoryLoadTimeAndWarnings) {
  auto p = make_profile();
  EXPECT_FALSE(p.memory_mb(0, 0).has_value());
  p.set_memory_mb("gpu", "rm2", 1200);
  p.set_load_time("gpu", "rm2", 2.5);
  EXPECT_DOUBLE_EQ(*p.memory_mb(0, 0), 1200);
  EXPECT_DOUBLE_EQ(*p.load_time(0, 0), 2.5);
  EXPECT_TRUE(p.warnings().empty());
  p.set_latency("gpu", "rm2", 30, LatencyDistribution::from_samples({0.045}));
  const auto warnings = p.warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("batch 30"), std::string::npos) << warnings[0];
  EXPECT_EQ(p.pairs().size(), 2u);
}

TEST(LatencyEstimator, FitsALineThenSwitchesToTheTable) {
  LatencyEstimator e(2);
  EXPECT_FALSE(e.ready());
  expect_error<RuntimeError>([&] { e.predict(5); }, {"batch=5", "no latency observed"});
  e.observe(10, 0.020);
  // One batch size: the line through the origin and the mean point.
  EXPECT_DOUBLE_EQ(e.predict(20), 0.040);
  EXPECT_TRUE(std::isnan(e.slope()));
  e.observe(30, 0.040);  // exact line 0.010 + 0.001 * b
  EXPECT_NEAR(e.slope(), 0.001, 1e-15);
  EXPECT_NEAR(e.intercept(), 0.010, 1e-15);
  EXPECT_NEAR(e.predict(20), 0.030, 1e-15);
  EXPECT_NEAR(e.predict(10), 0.020, 1e-15);  // one observation at 10 < min_observations: still the line
  e.observe(10, 0.026);                      // now 2 at batch 10: the running mean 0.023
  EXPECT_TRUE(e.uses_table(10));
  EXPECT_DOUBLE_EQ(e.predict(10), 0.023);
  EXPECT_EQ(e.observations(10), 2);
  EXPECT_EQ(e.count(), 3);
}

TEST(LatencyEstimator, LeastSquaresMatchesTheClosedFormAndStaysPositive) {
  LatencyEstimator e(1000);
  const std::vector<std::pair<std::int64_t, double>> obs = {{100, 0.11}, {200, 0.19}, {300, 0.32}, {400, 0.39}};
  for (const auto& [b, s] : obs) e.observe(b, s);
  // numpy.polyfit([100,200,300,400], [.11,.19,.32,.39], 1) = [0.00097, 0.010]
  EXPECT_NEAR(e.slope(), 0.00097, 1e-12);
  EXPECT_NEAR(e.intercept(), 0.010, 1e-12);
  LatencyEstimator steep(1000);
  steep.observe(100, 0.01);
  steep.observe(200, 0.10);                           // the line crosses zero near batch 89
  EXPECT_NEAR(steep.predict(1), 0.055 / 150, 1e-15);  // falls back to the line through the origin
  expect_error<ValueError>([&] { steep.observe(0, 0.1); }, {"batch=0"});
  expect_error<ValueError>([&] { steep.observe(1, -0.1); }, {"seconds=-0.1"});
  expect_error<ValueError>([] { LatencyEstimator bad(0); }, {"min_observations=0"});
}

}  // namespace
}  // namespace servelab::profile
