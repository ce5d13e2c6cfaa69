// Request-size distributions, their registry and the multi-application Workload. Statistical
// checks use fixed seeds (deterministic); each tolerance is at least 4 standard errors wide.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/size_registry.hpp"
#include "servelab/workload/sizes.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::workload {
namespace {

// Runs `fn`, expecting exception E whose message contains every one of `parts`.
template <typename E>
void expect_error(const std::function<void()>& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one mentioning '" << *parts.begin() << "'";
  } catch (const E& e) {
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

double average(const std::vector<std::int32_t>& x) {
  double sum = 0;
  for (const auto v : x) sum += v;
  return sum / static_cast<double>(x.size());
}

double fraction(const std::vector<std::int32_t>& x, std::int32_t lo, std::int32_t hi) {
  return static_cast<double>(std::count_if(x.begin(), x.end(), [&](auto v) { return v >= lo && v <= hi; })) /
         static_cast<double>(x.size());
}

// The exact probability that a size of `d` lies in [lo, hi], from expectation().
double exact_fraction(const SizeDistribution& d, std::int32_t lo, std::int32_t hi) {
  return d.expectation([&](double x) {
    const auto s = to_size(x, d.round_to());
    return s >= lo && s <= hi ? 1.0 : 0.0;
  });
}

// --- conversion of draws to sizes ---

TEST(ToSize, NearestForRoundToOneAndCeilingToMultiplesOtherwise) {
  EXPECT_EQ(to_size(2.5, 1), 3);  // halves up
  EXPECT_EQ(to_size(2.4999, 1), 2);
  EXPECT_EQ(to_size(7.0, 1), 7);
  EXPECT_EQ(to_size(0.2, 1), 1);  // never below 1
  EXPECT_EQ(to_size(-3.0, 1), 1);
  EXPECT_EQ(to_size(100.0, 10), 100);  // exact multiples stay
  EXPECT_EQ(to_size(100.3, 10), 110);  // Kairos: math.ceil(100.3 / 10) * 10
  EXPECT_EQ(to_size(1.0, 10), 10);
  EXPECT_EQ(to_size(-5.0, 10), 10);       // never below round_to
  EXPECT_EQ(to_size(1e12, 1), kMaxSize);  // saturates
  EXPECT_EQ(to_size(1e12, 10), 2147483640);
  EXPECT_EQ(to_size(std::nan(""), 4), 4);
}

TEST(AliasTable, PicksInProportionAndNeverAZeroWeight) {
  const detail::AliasTable table({1, 0, 3, 6});
  Rng rng(5, "alias");
  std::vector<int> counts(4);
  const int n = 200000;
  for (int i = 0; i < n; ++i) ++counts[table.pick(rng)];
  EXPECT_EQ(counts[1], 0);
  EXPECT_NEAR(counts[0] / double(n), 0.1, 0.004);
  EXPECT_NEAR(counts[2] / double(n), 0.3, 0.005);
  EXPECT_NEAR(counts[3] / double(n), 0.6, 0.005);
  EXPECT_DOUBLE_EQ(table.probabilities()[3], 0.6);
}

// --- the distributions ---

TEST(ConstantSize, AlwaysTheValueRoundedUp) {
  ConstantSize c(7);
  EXPECT_EQ(generate_sizes(c, 1, 100), std::vector<std::int32_t>(100, 7));
  EXPECT_DOUBLE_EQ(c.mean(), 7);
  ConstantSize rounded(7, 5);
  EXPECT_EQ(generate_sizes(rounded, 1, 3), std::vector<std::int32_t>(3, 10));
  EXPECT_DOUBLE_EQ(rounded.mean(), 10);
  EXPECT_EQ(rounded.describe(), "constant(value=7, round_to=5)");
}

TEST(UniformSize, CoversBothEndsWithTheRightMean) {
  UniformSize u(3, 8);
  const auto s = generate_sizes(u, 2, 60000);
  EXPECT_EQ(*std::min_element(s.begin(), s.end()), 3);
  EXPECT_EQ(*std::max_element(s.begin(), s.end()), 8);
  EXPECT_NEAR(fraction(s, 8, 8), 1.0 / 6, 0.007);
  EXPECT_NEAR(average(s), 5.5, 0.03);  // sd 1.71 / sqrt(60000) = 0.007
  EXPECT_DOUBLE_EQ(u.mean(), 5.5);
  EXPECT_DOUBLE_EQ(UniformSize(1, 9, 5).mean(), 65.0 / 9);  // 5 x5, 10 x4
}

TEST(LognormalSize, ParametersAreThoseOfTheUnderlyingNormal) {
  LognormalSize d(8.0, 0.5);  // large sizes: rounding to integers barely matters
  const auto s = generate_sizes(d, 3, 100000);
  double sum = 0, sum_sq = 0;
  for (const auto v : s) {
    sum += std::log(v);
    sum_sq += std::log(v) * std::log(v);
  }
  const double m = sum / s.size(), sd = std::sqrt(sum_sq / s.size() - m * m);
  EXPECT_NEAR(m, 8.0, 0.007);  // se 0.5 / sqrt(1e5) = 0.0016
  EXPECT_NEAR(sd, 0.5, 0.005);
  EXPECT_NEAR(d.mean(), std::exp(8.0 + 0.125), 1e-3 * std::exp(8.125));
  EXPECT_NEAR(average(s), d.mean(), 0.01 * d.mean());
}

TEST(ClippedGaussianSize, ClipsToTheBoundsWithTheRightMass) {
  ClippedGaussianSize g(10, 5, 2, 15);
  const auto s = generate_sizes(g, 4, 100000);
  EXPECT_EQ(*std::min_element(s.begin(), s.end()), 2);
  EXPECT_EQ(*std::max_element(s.begin(), s.end()), 15);
  // Size 2 is X < 2.5 (clipped or rounded): Phi(-1.5) = 0.0668; size 15 is X >= 14.5.
  EXPECT_NEAR(fraction(s, 2, 2), exact_fraction(g, 2, 2), 0.003);
  EXPECT_NEAR(fraction(s, 15, 15), exact_fraction(g, 15, 15), 0.005);
  EXPECT_NEAR(exact_fraction(g, 2, 2), 0.5 * std::erfc(1.5 / std::sqrt(2.0)), 1e-4);
  EXPECT_NEAR(average(s), g.mean(), 0.03);
}

TEST(EmpiricalSize, SamplesUniformlyOrByWeight) {
  EmpiricalSize samples({4, 9, 9, 20});
  const auto s = generate_sizes(samples, 5, 80000);
  EXPECT_NEAR(fraction(s, 9, 9), 0.5, 0.008);
  EXPECT_NEAR(fraction(s, 4, 4), 0.25, 0.007);
  EXPECT_EQ(fraction(s, 4, 4) + fraction(s, 9, 9) + fraction(s, 20, 20), 1.0);
  EXPECT_DOUBLE_EQ(samples.mean(), 10.5);

  EmpiricalSize histogram({10, 20, 30}, {1, 0, 3});
  const auto h = generate_sizes(histogram, 5, 80000);
  EXPECT_EQ(fraction(h, 20, 20), 0.0);
  EXPECT_NEAR(fraction(h, 30, 30), 0.75, 0.007);
  EXPECT_DOUBLE_EQ(histogram.mean(), 25);
  EXPECT_EQ(histogram.describe(), "empirical(values=[10, 20, 30], weights=[1, 0, 3])");
  EXPECT_DOUBLE_EQ(EmpiricalSize({2.4, 2.6}).mean(), 2.5);  // 2 and 3
}

TEST(SizeMixture, PicksComponentsByWeightAndRoundsTheirRawDraws) {
  SizeMixture mix({std::make_shared<ConstantSize>(1), std::make_shared<UniformSize>(50, 60)}, {1, 3});
  const auto s = generate_sizes(mix, 6, 80000);
  EXPECT_NEAR(fraction(s, 1, 1), 0.25, 0.007);
  EXPECT_NEAR(fraction(s, 50, 60), 0.75, 0.007);
  EXPECT_DOUBLE_EQ(mix.mean(), 0.25 + 0.75 * 55);
  // The component's raw draw reaches the mixture's rounding: 100.3 -> 110, not 100.
  SizeMixture tens({std::make_shared<EmpiricalSize>(std::vector<double>{100.3})}, {1}, 10);
  EXPECT_EQ(generate_sizes(tens, 1, 1)[0], 110);
}

TEST(FallbackSize, ReplacesDrawsOutsideTheRange) {
  FallbackSize f(std::make_shared<UniformSize>(1, 100), 1, 50, std::make_shared<ConstantSize>(1000));
  const auto s = generate_sizes(f, 7, 50000);
  EXPECT_EQ(fraction(s, 51, 999), 0.0);
  EXPECT_NEAR(fraction(s, 1000, 1000), 0.5, 0.009);
  EXPECT_DOUBLE_EQ(f.mean(), 0.5 * 25.5 + 0.5 * 1000);
}

// --- presets ---

TEST(Presets, KairosMixMatchesTheArtifactsRecipe) {
  const auto kairos = kairos_sizes();
  EXPECT_EQ(kairos->describe(), "kairos_mix(round_to=10)");
  const auto s = generate_sizes(*kairos, 11, 200000);
  EXPECT_TRUE(std::all_of(s.begin(), s.end(), [](auto v) { return v % 10 == 0 && v >= 10 && v <= 1000; }));
  EXPECT_NEAR(average(s), kairos->mean(), 1.5);  // sd ~175 / sqrt(2e5) = 0.4

  // Before rounding to tens, each range holds its share (the lognormal part is kept in [100, 200]).
  const auto raw = generate_sizes(*kairos_sizes(1), 12, 200000);  // se <= 0.0011
  EXPECT_NEAR(fraction(raw, 1, 99), 8.0 / 99, 0.005);
  EXPECT_NEAR(fraction(raw, 100, 199), 64.0 / 99, 0.006);
  EXPECT_NEAR(fraction(raw, 200, 599), 22.0 / 99, 0.006);
  EXPECT_NEAR(fraction(raw, 600, 999), 5.0 / 99, 0.004);
  EXPECT_EQ(fraction(raw, 1000, kMaxSize), 0.0);
  // U{190..199} replaces the lognormal outside [100, 200]: P = Phi((ln 100 - 5.1) / 0.2) + 1 - Phi((ln 200 - 5.1) /
  // 0.2).
  const auto phi = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  const double p_replaced = phi((std::log(100) - 5.1) / 0.2) + 1 - phi((std::log(200) - 5.1) / 0.2);
  EXPECT_NEAR(exact_fraction(*kairos_sizes(1), 190, 199) - exact_fraction(LognormalSize(5.1, 0.2), 190, 199) * 64 / 99,
              64.0 / 99 * p_replaced, 2e-3);
}

TEST(Presets, RibbonMixMatchesTheArtifactsRecipe) {
  const auto ribbon = ribbon_sizes();
  EXPECT_EQ(ribbon->describe(), "ribbon_mix(round_to=1)");
  const auto s = generate_sizes(*ribbon, 13, 200000);
  EXPECT_LE(*std::max_element(s.begin(), s.end()), 500);
  EXPECT_GE(*std::min_element(s.begin(), s.end()), 1);
  EXPECT_NEAR(fraction(s, 250, 499), exact_fraction(*ribbon, 250, 499), 0.005);
  EXPECT_NEAR(fraction(s, 1, 99), exact_fraction(*ribbon, 1, 99), 0.003);
  // 10/99 from U{250..499} plus the lognormal's small upper tail.
  EXPECT_NEAR(exact_fraction(*ribbon, 250, 499),
              10.0 / 99 + 87.0 / 99 * exact_fraction(LognormalSize(5.1, 0.2), 250, 500), 2e-3);
  EXPECT_NEAR(average(s), ribbon->mean(), 0.8);
}

// --- determinism ---

TEST(GenerateSizes, SameSeedSameSizesAndKnownValues) {
  const auto kairos = kairos_sizes();
  EXPECT_EQ(generate_sizes(*kairos, 2024, 1000), generate_sizes(*kairos, 2024, 1000));
  EXPECT_NE(generate_sizes(*kairos, 2024, 1000), generate_sizes(*kairos, 2025, 1000));
  // mt19937_64 and Boost.Random are fully specified: these must never change.
  EXPECT_EQ(generate_sizes(*kairos, 2024, 8), (std::vector<std::int32_t>{780, 160, 120, 140, 200, 150, 170, 60}));
  EXPECT_EQ(generate_sizes(LognormalSize(5.1, 0.2), 2024, 6),
            (std::vector<std::int32_t>{198, 198, 233, 153, 168, 116}));
  EXPECT_TRUE(generate_sizes(*kairos, 1, 0).empty());
  expect_error<ValueError>([&] { generate_sizes(*kairos, 1, -1); }, {"count=-1"});
}

// --- registry ---

TEST(SizeRegistry, BuildsEveryEntryAndDescribeRoundTrips) {
  const auto& r = size_registry();
  for (const char* name : {"constant", "uniform", "lognormal", "clipped_gaussian", "empirical", "mixture", "fallback",
                           "kairos_mix", "ribbon_mix"}) {
    EXPECT_TRUE(r.contains(name)) << name;
  }
  for (const char* spec :
       {"constant(value=3)", "uniform(low=1, high=10, round_to=2)", "lognormal(mu=5.1, sigma=0.2)",
        "clipped_gaussian(mean=50, std=10, low=1, high=inf)", "empirical(values=[1, 2, 5], weights=[1, 1, 2])",
        "mixture(components='uniform(low=1, high=9); lognormal(mu=3, sigma=0.5)', weights=[1, 2], round_to=5)",
        "fallback(base='lognormal(mu=5.1, sigma=0.2)', low=100, high=200, fallback='uniform(low=190, high=199)')",
        "kairos_mix(round_to=10)", "ribbon_mix(round_to=1)"}) {
    const auto d = r.make(spec);
    EXPECT_EQ(d->describe(), spec);
    const auto again = r.make(d->describe());
    EXPECT_EQ(generate_sizes(*d, 9, 50), generate_sizes(*again, 9, 50)) << spec;
  }
  EXPECT_EQ(r.make("kairos_mix")->describe(), "kairos_mix(round_to=10)");
  EXPECT_EQ(generate_sizes(*r.make("kairos_mix"), 4, 100), generate_sizes(*kairos_sizes(), 4, 100));
}

TEST(SizeRegistry, SplitsComponentSpecsOutsideBracketsAndQuotes) {
  EXPECT_EQ(split_specs(" a(x=1) ; b(y='p;q', z=[1; 2]) ", "components"),
            (std::vector<std::string>{"a(x=1)", "b(y='p;q', z=[1; 2])"}));
  expect_error<ValueError>([] { split_specs("a;;b", "components"); }, {"components=", "empty part 1"});
}

// --- bad input: every message names the field and the value ---

TEST(SizeErrors, MessagesNameTheFieldAndTheValue) {
  const auto nan = std::nan("");
  const auto inf = std::numeric_limits<double>::infinity();
  const auto one = std::make_shared<ConstantSize>(1);
  expect_error<ValueError>([] { ConstantSize(0); }, {"value=0"});
  expect_error<ValueError>([] { ConstantSize(5, 0); }, {"round_to=0"});
  expect_error<ValueError>([] { ConstantSize(5, -10); }, {"round_to=-10"});
  expect_error<ValueError>([] { UniformSize(0, 5); }, {"low=0"});
  expect_error<ValueError>([] { UniformSize(9, 5); }, {"low=9", "high=5"});
  expect_error<ValueError>([] { UniformSize(1, 3000000000LL); }, {"high=3000000000"});
  expect_error<ValueError>([] { LognormalSize(1, -1); }, {"sigma=-1"});
  expect_error<ValueError>([&] { LognormalSize(1, nan); }, {"sigma=nan"});
  expect_error<ValueError>([&] { LognormalSize(inf, 1); }, {"mu=inf"});
  expect_error<ValueError>([] { ClippedGaussianSize(10, 0); }, {"std=0"});
  expect_error<ValueError>([&] { ClippedGaussianSize(nan, 1); }, {"mean=nan"});
  expect_error<ValueError>([] { ClippedGaussianSize(10, 1, 20, 5); }, {"low=20", "high=5"});
  expect_error<ValueError>([&] { ClippedGaussianSize(10, 1, -inf, 5); }, {"low=-inf"});
  expect_error<ValueError>([] { EmpiricalSize({}); }, {"values is empty"});
  expect_error<ValueError>([] { EmpiricalSize({1, -2}); }, {"values[1]=-2"});
  expect_error<ValueError>([] { EmpiricalSize({1, 2}, {1, -0.5}); }, {"weights[1]=-0.5"});
  expect_error<ValueError>([] { EmpiricalSize({1, 2}, {0, 0}); }, {"weights=[0, 0]", "all zero"});
  expect_error<ValueError>([] { EmpiricalSize({1, 2}, {1}); }, {"weights has 1", "values has 2"});
  expect_error<ValueError>([&] { EmpiricalSize({1, 2}, {1, nan}); }, {"weights[1]=nan"});
  expect_error<ValueError>([] { SizeMixture({}, {}); }, {"components is empty"});
  expect_error<ValueError>([&] { SizeMixture({one, nullptr}, {1, 1}); }, {"components[1] is null"});
  expect_error<ValueError>([&] { SizeMixture({one}, {0}); }, {"weights=[0]"});
  expect_error<ValueError>([&] { FallbackSize(one, 5, 1, one); }, {"low=5", "high=1"});
  expect_error<ValueError>([&] { FallbackSize(nullptr, 1, 5, one); }, {"base is null"});
  expect_error<ValueError>([] { kairos_sizes(0); }, {"round_to=0"});

  const auto& r = size_registry();
  expect_error<KeyError>([&] { r.make("zipf(a=1)"); }, {"unknown size distribution 'zipf'", "lognormal"});
  expect_error<KeyError>([&] { r.make("uniform(low=1, hi=3)"); }, {"uniform", "'hi'"});
  expect_error<ValueError>([&] { r.make("lognormal(mu=5, sigma=-0.2)"); }, {"sigma=-0.2"});
  expect_error<ValueError>([&] { r.make("uniform(low=1, high=2, round_to=0)"); }, {"round_to=0"});
  expect_error<ValueError>([&] { r.make("uniform(low=1.5, high=2)"); }, {"low=1.5", "int"});
  expect_error<ValueError>(
      [&] { r.make("mixture(components='constant(value=1); lognormal(mu=1, sigma=0)', weights=[1, 1])"); },
      {"components[1]='lognormal(mu=1, sigma=0)'", "sigma=0"});
  expect_error<KeyError>([&] { r.make("mixture(components='constant(value=1); nope', weights=[1, 1])"); },
                         {"components[1]='nope'", "unknown size distribution 'nope'"});
  expect_error<ValueError>([&] { r.make("mixture(components='constant(value=1)', weights=[1, 1])"); },
                           {"weights has 2", "components has 1"});
}

// --- zipf shares ---

TEST(ZipfShares, NormalisedPowerLaw) {
  const auto s = zipf_shares(4, 1.0);
  const double h = 1 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4;
  ASSERT_EQ(s.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(s[i], 1.0 / (i + 1) / h);
  EXPECT_EQ(zipf_shares(3, 0.0), (std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3}));
  EXPECT_NEAR(zipf_shares(1000, 1.2)[0] / zipf_shares(1000, 1.2)[9], std::pow(10.0, 1.2), 1e-9);
  expect_error<ValueError>([] { zipf_shares(0, 1.0); }, {"n=0"});
  expect_error<ValueError>([] { zipf_shares(3, -1.0); }, {"exponent=-1"});
}

// --- the workload ---

Application app(std::string name, double slo_s, double share = 1.0, SizePtr sizes = nullptr, double floor = 0) {
  return {std::move(name), share, seconds_to_nanos(slo_s), std::move(sizes), floor};
}

TEST(Workload, QueriesAreOrderedWithDeadlinesAndAppFields) {
  Workload w(std::make_shared<Poisson>(1000.0),
             {app("a", 0.35, 1, kairos_sizes()), app("b", 0.1, 0.5, std::make_shared<UniformSize>(1, 64), 0.7)}, 20000);
  const auto qs = w.generate(1);
  ASSERT_EQ(qs.size(), 20000u);
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const Query& q = qs[i];
    EXPECT_EQ(q.id, static_cast<QueryId>(i));
    if (i) {
      EXPECT_GE(q.arrival, qs[i - 1].arrival);
    }
    EXPECT_EQ(q.deadline, q.arrival + w.apps()[q.app].slo);
    EXPECT_FLOAT_EQ(q.accuracy_floor, q.app == 1 ? 0.7f : 0.0f);
    if (q.app == 0) {
      EXPECT_EQ(q.size % 10, 0);
    } else {
      EXPECT_LE(q.size, 64);
    }
  }
  const double share_b = std::count_if(qs.begin(), qs.end(), [](const Query& q) { return q.app == 1; }) / 20000.0;
  EXPECT_NEAR(share_b, 1.0 / 3, 0.014);  // se 0.0033
  EXPECT_DOUBLE_EQ(w.shares()[1], 1.0 / 3);
}

TEST(Workload, StreamAndBulkAgreeAndSeedsAreReproducible) {
  Workload w(std::make_shared<Gamma>(500.0, 2.0),
             {app("a", 0.2, 2, std::make_shared<LognormalSize>(3, 1)), app("b", 0.05, 1, nullptr)}, 3000);
  const auto bulk = w.generate(9);
  auto stream = w.start(9);
  for (const Query& q : bulk) {
    const auto s = stream->next();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->id, q.id);
    EXPECT_EQ(s->app, q.app);
    EXPECT_EQ(s->size, q.size);
    EXPECT_EQ(s->arrival, q.arrival);
  }
  EXPECT_FALSE(stream->next());
  EXPECT_FALSE(stream->next());
  const auto cols = w.generate_columns(9);
  ASSERT_EQ(cols.size.size(), bulk.size());
  EXPECT_EQ(cols.size[17], bulk[17].size);
  EXPECT_DOUBLE_EQ(cols.arrival_s[17], nanos_to_seconds(bulk[17].arrival));
  EXPECT_DOUBLE_EQ(cols.deadline_s[17], nanos_to_seconds(bulk[17].deadline));
  const auto again = w.generate(9);
  for (std::size_t i = 0; i < bulk.size(); ++i)
    EXPECT_EQ(bulk[i].size * 1000003LL + bulk[i].arrival, again[i].size * 1000003LL + again[i].arrival);
  // Known values: the run of seed 2024 must never change.
  const auto golden = w.generate(2024);
  EXPECT_EQ(golden[0].app, 1);
  EXPECT_EQ(golden[0].size, 1);
  EXPECT_EQ(golden[0].arrival, 760);
  EXPECT_EQ(golden[3].app, 0);
  EXPECT_EQ(golden[3].size, 15);
}

TEST(Workload, AnApplicationsSizesComeFromItsOwnStream) {
  // Changing app b's sizes changes neither the app choice nor app a's sizes.
  const auto arrivals = std::make_shared<Poisson>(100.0);
  Workload w1(arrivals, {app("a", 1, 1, std::make_shared<UniformSize>(1, 1000)), app("b", 1, 1, nullptr)}, 2000);
  Workload w2(arrivals, {app("a", 1, 1, std::make_shared<UniformSize>(1, 1000)), app("b", 1, 1, kairos_sizes())}, 2000);
  const auto q1 = w1.generate(3), q2 = w2.generate(3);
  for (std::size_t i = 0; i < q1.size(); ++i) {
    EXPECT_EQ(q1[i].app, q2[i].app);
    EXPECT_EQ(q1[i].arrival, q2[i].arrival);
    if (q1[i].app == 0) {
      EXPECT_EQ(q1[i].size, q2[i].size);
    }
  }
}

TEST(Workload, StopsAtCountHorizonOrTraceEnd) {
  const std::vector<Application> apps{app("a", 0.01)};
  EXPECT_EQ(Workload(std::make_shared<Poisson>(100.0), apps, 7).generate(1).size(), 7u);
  EXPECT_TRUE(Workload(std::make_shared<Poisson>(100.0), apps, 0).generate(1).empty());
  const std::vector<double> times{0.5, 1.0, 1.0, 2.0};
  const auto replay = std::make_shared<Replay>(times);
  // The horizon is exclusive: arrivals at 1.0 s are not included with horizon 1 s.
  EXPECT_EQ(Workload(replay, apps, kUnlimitedCount, seconds_to_nanos(1.0)).generate(1).size(), 1u);
  EXPECT_EQ(Workload(replay, apps, kUnlimitedCount, seconds_to_nanos(1.5)).generate(1).size(), 3u);
  EXPECT_EQ(Workload(replay, apps, 100).generate(1).size(), 4u);  // the trace ends first
  const auto horizon =
      Workload(std::make_shared<Poisson>(1000.0), apps, kUnlimitedCount, seconds_to_nanos(2.0)).generate(4);
  EXPECT_NEAR(static_cast<double>(horizon.size()), 2000, 200);
  EXPECT_LT(horizon.back().arrival, seconds_to_nanos(2.0));
}

TEST(Workload, ZipfSharesDriveTheAppMix) {
  std::vector<Application> apps;
  const auto shares = zipf_shares(5, 1.0);
  for (int i = 0; i < 5; ++i) apps.push_back(app("app" + std::to_string(i), 0.1, shares[i]));
  const auto qs = Workload(std::make_shared<Poisson>(1000.0), apps, 100000).generate(8);
  std::vector<int> counts(5);
  for (const Query& q : qs) ++counts[q.app];
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(counts[i] / 1e5, shares[i], 0.007) << i;
}

TEST(Workload, BadInputNamesTheFieldAndTheValue) {
  const auto poisson = std::make_shared<Poisson>(10.0);
  const auto make = [&](std::vector<Application> apps) { Workload(poisson, std::move(apps), 10); };
  expect_error<ValueError>([&] { make({}); }, {"apps is empty"});
  expect_error<ValueError>([&] { make({app("a", 0.1), app("a", 0.2)}); }, {"apps[1]", "name='a'", "twice"});
  expect_error<ValueError>([&] { make({app("a", 0.1, 0)}); }, {"apps[0]", "'a'", "share=0"});
  expect_error<ValueError>([&] { make({app("a", 0.1, std::nan(""))}); }, {"share=nan"});
  expect_error<ValueError>([&] { make({app("a", -0.1)}); }, {"'a'", "slo=-100000000"});
  expect_error<ValueError>([&] { make({app("a", 0.1, 1, nullptr, 1.5)}); }, {"accuracy_floor=1.5"});
  expect_error<ValueError>([&] { make({app("", 0.1)}); }, {"name=''"});
  expect_error<ValueError>([&] { Workload(nullptr, {app("a", 0.1)}, 10); }, {"arrivals is null"});
  expect_error<ValueError>([&] { Workload(poisson, {app("a", 0.1)}, -1); }, {"max_count=-1"});
  expect_error<ValueError>([&] { Workload(poisson, {app("a", 0.1)}, 5, -3); }, {"horizon=-3"});
  expect_error<ValueError>([&] { Workload(poisson, {app("a", 0.1)}); }, {"both unlimited"});
}

TEST(Workload, DescribeNamesEverything) {
  Workload w(std::make_shared<Poisson>(100.0), {app("rm2", 0.35, 1, kairos_sizes(), 0.5)}, 10, seconds_to_nanos(2));
  EXPECT_EQ(w.describe(),
            "workload(arrivals=poisson(rate=100), apps=[app(name='rm2', share=1, slo_s=0.35, "
            "sizes=kairos_mix(round_to=10), accuracy_floor=0.5)], count=10, horizon_s=2)");
}

// --- memory estimates: refuse a run up front, naming the limit to lower ---

TEST(WorkloadMemory, ExpectedQueriesFollowTheBindingLimit) {
  const auto poisson = std::make_shared<Poisson>(100.0);
  const std::vector<Application> apps = {app("a", 1, 1, nullptr)};
  EXPECT_EQ(Workload(poisson, apps, 50).expected_queries(), 50.0);
  EXPECT_DOUBLE_EQ(Workload(poisson, apps, kUnlimitedCount, seconds_to_nanos(10)).expected_queries(), 1000.0);
  EXPECT_DOUBLE_EQ(Workload(poisson, apps, 50, seconds_to_nanos(10)).expected_queries(), 50.0);
  // A trace that ends caps the estimate at its length, however long the horizon.
  const double times[] = {0.5, 1.0, 1.5};
  const auto trace = std::make_shared<Replay>(std::span<const double>(times));
  EXPECT_EQ(Workload(trace, apps, kUnlimitedCount, seconds_to_nanos(1e9)).expected_queries(), 3.0);
}

TEST(WorkloadMemory, TooManyQueriesNameCountOrHorizon) {
  const auto poisson = std::make_shared<Poisson>(1000.0);
  const std::vector<Application> apps = {app("a", 1, 1, nullptr)};
  expect_error<MemoryError>([&] { Workload(poisson, apps, 1'000'000'000'000'000).check_memory(100, "the records"); },
                            {"count=1000000000000000: the records would need about 100 PB (100 bytes per query), "
                             "more than the ",
                             " of memory available: lower count"});
  expect_error<MemoryError>(
      [&] { Workload(poisson, apps, kUnlimitedCount, seconds_to_nanos(1e9)).check_memory(100, "the records"); },
      {"horizon_s=1000000000 at about 1000 queries/s means about 1000000000000 queries: the records would need "
       "about 100 TB",
       ": lower horizon_s or give a count"});
  EXPECT_NO_THROW(Workload(poisson, apps, 1000).check_memory(100, "the records"));
}

}  // namespace
}  // namespace servelab::workload
