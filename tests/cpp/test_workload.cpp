// Arrival processes and trace readers. Statistical checks use fixed seeds, so they are
// deterministic; each tolerance is stated next to it and is at least 4 standard errors wide.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/trace_readers.hpp"

namespace servelab::workload {
namespace {

using namespace std::chrono_literals;

struct Moments {
  double mean, cv;
};

std::vector<double> gaps_s(const std::vector<Nanos>& times) {
  std::vector<double> gaps;
  Nanos previous = 0;
  for (const Nanos t : times) {
    gaps.push_back(nanos_to_seconds(t - previous));
    previous = t;
  }
  return gaps;
}

Moments moments(const std::vector<double>& x) {
  double sum = 0, sum_sq = 0;
  for (const double v : x) sum += v;
  const double mean = sum / static_cast<double>(x.size());
  for (const double v : x) sum_sq += (v - mean) * (v - mean);
  return {mean, std::sqrt(sum_sq / static_cast<double>(x.size() - 1)) / mean};
}

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

std::vector<std::shared_ptr<ArrivalProcess>> random_processes() {
  return {std::make_shared<Poisson>(100.0),
          std::make_shared<PoissonIntegerMs>(1000.0 / 10.5),
          std::make_shared<Gamma>(100.0, 0.5),
          std::make_shared<Gamma>(100.0, 2.0),
          std::make_shared<Mmpp>(200.0, 20.0, 0.5, 1.5),
          std::make_shared<Mmpp>(100.0, 0.0, 1.0, 1.0),
          std::make_shared<PiecewiseRate>(1.0, std::vector<double>{100, 0, 300, 50}, 1.0, true)};
}

TEST(Arrivals, SameSeedSameTimesDifferentSeedDifferentTimes) {
  for (const auto& p : random_processes()) {
    SCOPED_TRACE(p->describe());
    const auto a = generate_arrivals(*p, 42, 5000);
    EXPECT_EQ(a, generate_arrivals(*p, 42, 5000));
    EXPECT_NE(a, generate_arrivals(*p, 43, 5000));
  }
}

TEST(Arrivals, CursorGivesTheSameTimesAsBulkGeneration) {
  for (const auto& p : random_processes()) {
    SCOPED_TRACE(p->describe());
    const auto bulk = generate_arrivals(*p, 9, 1000);
    auto cursor = p->start(Rng(9, kArrivalStream));
    for (const Nanos t : bulk) ASSERT_EQ(cursor->next(), t);
    const auto seconds = generate_arrival_seconds(*p, 9, 1000);
    ASSERT_EQ(seconds.size(), bulk.size());
    for (std::size_t i = 0; i < bulk.size(); ++i) EXPECT_EQ(seconds[i], nanos_to_seconds(bulk[i]));
  }
}

TEST(Arrivals, BlocksOfTimesAreTheCursorsTimes) {
  // next_times() in blocks of any size gives what next() gives; mixing the two keeps the order.
  for (const auto& p : random_processes()) {
    SCOPED_TRACE(p->describe());
    const auto bulk = generate_arrivals(*p, 9, 3000);
    for (const std::size_t block : {1u, 3u, 128u, 1000u}) {
      auto cursor = p->start(Rng(9, kArrivalStream));
      std::vector<Nanos> got, buffer(block);
      while (got.size() < bulk.size()) {
        const std::size_t n = cursor->next_times(buffer.data(), std::min(block, bulk.size() - got.size()));
        ASSERT_GE(n, 1u);
        got.insert(got.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(n));
        if (got.size() < bulk.size() && got.size() % 5 == 0) got.push_back(*cursor->next());
      }
      EXPECT_EQ(got, bulk) << block;
    }
  }
}

TEST(Arrivals, ABlockOfTimesStopsBeforeATimeBeyondTheRange) {
  // Gaps of about 200 years: the second time is out of range. The block gives the first; the next
  // call throws, as next() would.
  const Gamma p(1.0 / (200.0 * 365.25 * 86400.0), 0.01);
  auto cursor = p.start(Rng(1, kArrivalStream));
  Nanos buffer[8];
  ASSERT_EQ(cursor->next_times(buffer, 8), 1u);
  expect_error<RuntimeError>([&] { cursor->next_times(buffer, 8); }, {"292 years"});
  const Replay finite(std::vector<double>{0.5, 1.0});
  auto trace = finite.start(Rng(1, kArrivalStream));
  ASSERT_EQ(trace->next_times(buffer, 8), 1u);  // the default: one time per call
  ASSERT_EQ(trace->next_times(buffer, 8), 1u);
  EXPECT_EQ(buffer[0], kNanosPerSecond);
  EXPECT_EQ(trace->next_times(buffer, 8), 0u);
}

TEST(Arrivals, TimesAreNonNegativeAndNonDecreasing) {
  for (const auto& p : random_processes()) {
    SCOPED_TRACE(p->describe());
    const auto t = generate_arrivals(*p, 5, 20000);
    ASSERT_EQ(t.size(), 20000u);
    EXPECT_GE(t.front(), 0);
    EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  }
}

TEST(Arrivals, CountAndHorizonStopWhicheverComesFirst) {
  const Poisson p(1000.0);
  EXPECT_EQ(generate_arrivals(p, 1, 0).size(), 0u);
  EXPECT_EQ(generate_arrivals(p, 1, kUnlimitedCount, 0).size(), 0u);
  EXPECT_EQ(generate_arrivals(p, 1, 777).size(), 777u);

  const Nanos horizon = 2 * kNanosPerSecond;
  const auto by_horizon = generate_arrivals(p, 1, kUnlimitedCount, horizon);
  ASSERT_GT(by_horizon.size(), 1800u);  // about 2000 expected
  EXPECT_LT(by_horizon.back(), horizon);
  // The same stream without the horizon: the next arrival is the first at or after it.
  const auto longer = generate_arrivals(p, 1, static_cast<std::int64_t>(by_horizon.size()) + 1);
  EXPECT_TRUE(std::equal(by_horizon.begin(), by_horizon.end(), longer.begin()));
  EXPECT_GE(longer.back(), horizon);
  // Both limits: the count wins when it is smaller, the horizon otherwise.
  EXPECT_EQ(generate_arrivals(p, 1, 10, horizon).size(), 10u);
  EXPECT_EQ(generate_arrivals(p, 1, 1'000'000, horizon), by_horizon);
}

TEST(Arrivals, GenerateChecksItsLimits) {
  const Poisson p(10.0);
  expect_error<ValueError>([&] { generate_arrivals(p, 1, -1); }, {"max_count=-1", ">= 0"});
  expect_error<ValueError>([&] { generate_arrivals(p, 1, 5, -7); }, {"horizon=-7"});
  expect_error<ValueError>([&] { generate_arrivals(p, 1); }, {"both unlimited"});
}

TEST(Arrivals, GenerationStopsWhenInterrupted) {
  const Poisson p(1e6);
  core::InterruptScope scope([] { return true; }, 0ns);
  EXPECT_THROW(generate_arrivals(p, 1, 100'000'000), Interrupted);
}

TEST(Arrivals, TimesBeyondTheNanosecondRangeAreAnError) {
  const Poisson p(1e-12);  // mean gap ~31,700 years
  expect_error<RuntimeError>([&] { generate_arrivals(p, 1, 10); }, {"292 years"});
}

TEST(Poisson, MeanGapAndCvMatchTheRate) {
  const Poisson p(100.0);
  EXPECT_EQ(p.describe(), "poisson(rate=100)");
  EXPECT_EQ(p.mean_rate(), 100.0);
  const auto m = moments(gaps_s(generate_arrivals(p, 2024, 200'000)));
  // Standard errors on 200k exponential gaps: mean 0.22%, CV 0.32%.
  EXPECT_NEAR(m.mean, 0.01, 0.01 * 0.01);
  EXPECT_NEAR(m.cv, 1.0, 0.02);
}

TEST(Poisson, ValidatesTheRate) {
  expect_error<ValueError>([] { Poisson(-3); }, {"rate=-3 must be positive and finite"});
  expect_error<ValueError>([] { Poisson(0); }, {"rate=0"});
  expect_error<ValueError>([] { Poisson(std::nan("")); }, {"rate=nan"});
  expect_error<ValueError>([] { Poisson{INFINITY}; }, {"rate=inf"});
}

TEST(PoissonIntegerMs, GapsAreWholeMillisecondsWithPoissonMoments) {
  const PoissonIntegerMs p(1000.0 / 10.5);  // Kairos' default mean gap
  EXPECT_DOUBLE_EQ(p.mean_gap_ms(), 10.5);
  const auto times = generate_arrivals(p, 7, 200'000);
  for (const Nanos t : times) ASSERT_EQ(t % kNanosPerMilli, 0) << t;
  std::vector<double> gaps_ms;
  for (const double g : gaps_s(times)) gaps_ms.push_back(g * 1e3);
  const auto m = moments(gaps_ms);
  // Poisson(10.5): mean 10.5 (standard error 0.07%), variance = mean (standard error ~0.3%).
  EXPECT_NEAR(m.mean, 10.5, 10.5 * 0.01);
  const double variance = std::pow(m.cv * m.mean, 2);
  EXPECT_NEAR(variance, 10.5, 10.5 * 0.03);
}

TEST(PoissonIntegerMs, SmallMeanGapsGiveTies) {
  const PoissonIntegerMs p(2000.0);  // mean gap 0.5 ms: P(gap = 0) = exp(-0.5) = 0.6065
  const auto gaps = gaps_s(generate_arrivals(p, 3, 100'000));
  const double zeros =
      static_cast<double>(std::count(gaps.begin(), gaps.end(), 0.0)) / static_cast<double>(gaps.size());
  EXPECT_NEAR(zeros, std::exp(-0.5), 0.01);  // standard error 0.0015
}

TEST(PoissonIntegerMs, ValidatesTheRate) {
  expect_error<ValueError>([] { PoissonIntegerMs(-1); }, {"rate=-1"});
  expect_error<ValueError>([] { PoissonIntegerMs(1e-12); }, {"rate=1e-12 gives a mean gap of 1000000000000000 ms"});
}

TEST(Gamma, MeanAndCvMatchTheParameters) {
  for (const double cv : {0.5, 1.0, 2.0}) {
    const Gamma p(50.0, cv);
    const auto m = moments(gaps_s(generate_arrivals(p, 11, 200'000)));
    // Standard errors on 200k gaps: mean cv * 0.22%, CV below 0.8% even for cv=2 (shape 0.25).
    EXPECT_NEAR(m.mean, 0.02, 0.02 * 0.02) << "cv=" << cv;
    EXPECT_NEAR(m.cv, cv, cv * 0.04) << "cv=" << cv;
  }
  EXPECT_EQ(Gamma(50, 0.5).describe(), "gamma(rate=50, cv=0.5)");
}

TEST(Gamma, ValidatesItsParameters) {
  expect_error<ValueError>([] { Gamma(-5, 1); }, {"rate=-5"});
  expect_error<ValueError>([] { Gamma(10, 0); }, {"cv=0 must be positive and finite"});
  expect_error<ValueError>([] { Gamma(10, std::nan("")); }, {"cv=nan"});
  expect_error<ValueError>([] { Gamma(10, -2); }, {"cv=-2"});
  expect_error<ValueError>([] { Gamma(10, 1e-5); }, {"cv=1e-05 is outside the supported range [0.0001, 10000]"});
  expect_error<ValueError>([] { Gamma(10, 2e4); }, {"cv=20000 is outside"});
  EXPECT_NO_THROW(Gamma(10, 1e-4));
}

TEST(Mmpp, LongRunRateIsTheTimeWeightedAverage) {
  const Mmpp p(200.0, 20.0, 0.5, 1.5);
  EXPECT_DOUBLE_EQ(p.mean_rate(), (200 * 0.5 + 20 * 1.5) / 2.0);  // 65/s
  const double horizon_s = 50'000;
  const auto n = static_cast<double>(generate_arrivals(p, 5, kUnlimitedCount, seconds_to_nanos(horizon_s)).size());
  // Count variance ~ 2 Var(rate) tau T (tau = 0.375 s correlation time): relative standard error 0.46%.
  EXPECT_NEAR(n / horizon_s, 65.0, 65.0 * 0.03);
}

TEST(Mmpp, OnOffWithSilentOffPeriodsIsBursty) {
  const Mmpp p(100.0, 0.0, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(p.mean_rate(), 50.0);
  const double horizon_s = 40'000;
  const auto times = generate_arrivals(p, 8, kUnlimitedCount, seconds_to_nanos(horizon_s));
  // Relative standard error of the count: sqrt(2 * 2500 * 0.5 * T) / (50 T) = 0.5%.
  EXPECT_NEAR(static_cast<double>(times.size()) / horizon_s, 50.0, 50.0 * 0.03);
  // Off periods (mean 1 s) show up as rare long gaps: the gaps' CV is far above Poisson's 1 (about 7).
  EXPECT_GT(moments(gaps_s(times)).cv, 1.3);
  EXPECT_EQ(p.describe(), "mmpp(rate_on=100, rate_off=0, mean_on_s=1, mean_off_s=1)");
}

TEST(Mmpp, ValidatesItsParameters) {
  expect_error<ValueError>([] { Mmpp(0, 1, 1, 1); }, {"rate_on=0 must be positive"});
  expect_error<ValueError>([] { Mmpp(1, -1, 1, 1); }, {"rate_off=-1 must be non-negative"});
  expect_error<ValueError>([] { Mmpp(1, std::nan(""), 1, 1); }, {"rate_off=nan"});
  expect_error<ValueError>([] { Mmpp(1, 1, 0, 1); }, {"mean_on_s=0"});
  expect_error<ValueError>([] { Mmpp(1, 1, 1, -2); }, {"mean_off_s=-2"});
  expect_error<ValueError>([] { Mmpp(1, 1, 1e-9, 1); }, {"mean_on_s=1e-09 is below the supported minimum of 1e-06 s"});
}

std::vector<std::size_t> counts_per_interval(const std::vector<Nanos>& times, Nanos interval, std::size_t n) {
  std::vector<std::size_t> counts(n, 0);
  for (const Nanos t : times) counts.at(static_cast<std::size_t>(t / interval))++;
  return counts;
}

TEST(PiecewiseRate, CountsPerIntervalFollowTheRates) {
  const std::vector<double> rates{1000, 0, 3000, 500};
  const PiecewiseRate p(100.0, rates);
  EXPECT_EQ(p.duration_ns(), 400 * kNanosPerSecond);
  EXPECT_DOUBLE_EQ(p.mean_rate(), 1125.0);
  // The trace ends after its last interval: a count limit alone is enough.
  const auto times = generate_arrivals(p, 21, 10'000'000);
  auto cursor = p.start(Rng(21, kArrivalStream));
  for (std::size_t i = 0; i < times.size(); ++i) cursor->next();
  EXPECT_EQ(cursor->next(), std::nullopt);
  EXPECT_EQ(cursor->next(), std::nullopt);
  const auto counts = counts_per_interval(times, 100 * kNanosPerSecond, 4);
  for (std::size_t i = 0; i < rates.size(); ++i) {
    const double expected = rates[i] * 100;  // Poisson: standard deviation sqrt(expected)
    EXPECT_NEAR(static_cast<double>(counts[i]), expected, 5 * std::sqrt(expected) + 1e-9) << "interval " << i;
  }
  EXPECT_EQ(counts[1], 0u);
}

TEST(PiecewiseRate, TimeScaleStretchesIntervalsAndRepeatStartsOver) {
  const PiecewiseRate p(10.0, {200, 50}, 2.0, true);  // intervals of 20 s
  EXPECT_EQ(p.interval_ns(), 20 * kNanosPerSecond);
  const auto times = generate_arrivals(p, 4, kUnlimitedCount, 400 * kNanosPerSecond);  // 10 passes
  const auto counts = counts_per_interval(times, 20 * kNanosPerSecond, 20);
  double even = 0, odd = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) (i % 2 ? odd : even) += static_cast<double>(counts[i]);
  EXPECT_NEAR(even, 200 * 20 * 10, 5 * std::sqrt(40000.0));
  EXPECT_NEAR(odd, 50 * 20 * 10, 5 * std::sqrt(10000.0));
  EXPECT_GT(counts.back(), 0u);  // the last pass still produces arrivals
}

TEST(PiecewiseRate, EqualRatesAreAPoissonProcessAcrossBoundaries) {
  // Restarting at each boundary is exact (memorylessness): 2000 one-second intervals at 100/s
  // must look like one Poisson process, including gaps that span boundaries.
  const PiecewiseRate p(1.0, std::vector<double>(2000, 100.0));
  const auto m = moments(gaps_s(generate_arrivals(p, 13, 10'000'000)));
  EXPECT_NEAR(m.mean, 0.01, 0.01 * 0.01);  // same tolerances as Poisson.MeanGapAndCvMatchTheRate
  EXPECT_NEAR(m.cv, 1.0, 0.02);
}

TEST(PiecewiseRate, ValidatesItsParameters) {
  expect_error<ValueError>([] { PiecewiseRate(0, {1}); }, {"interval_s=0 must be positive and finite"});
  expect_error<ValueError>([] { PiecewiseRate(std::nan(""), {1}); }, {"interval_s=nan"});
  expect_error<ValueError>([] { PiecewiseRate(1, {}); }, {"rates is empty"});
  expect_error<ValueError>([] { PiecewiseRate(1, {1, -5}); }, {"rates[1]=-5 must be non-negative"});
  expect_error<ValueError>([] { PiecewiseRate(1, {1, 2, std::nan("")}); }, {"rates[2]=nan"});
  expect_error<ValueError>([] { PiecewiseRate(1, {1}, -1); }, {"time_scale=-1"});
  expect_error<ValueError>([] { PiecewiseRate(1, {0, 0}, 1, true); }, {"all 0", "repeat=true"});
  expect_error<ValueError>([] { PiecewiseRate(1e-12, {1}); }, {"interval_s=1e-12", "1 ns"});
  EXPECT_NO_THROW(PiecewiseRate(1, {0, 0}));  // a silent finite trace is fine
}

TEST(PiecewiseRate, DescribeAbbreviatesLongRateLists) {
  EXPECT_EQ(PiecewiseRate(10, {1, 2}).describe(),
            "piecewise_rate(interval_s=10, rates=[1, 2] (2 intervals), time_scale=1, repeat=false)");
  EXPECT_EQ(PiecewiseRate(10, {1, 2, 3, 4, 5, 6, 7}, 0.5, true).describe(),
            "piecewise_rate(interval_s=10, rates=[1, 2, 3, ..., 7] (7 intervals), time_scale=0.5, repeat=true)");
}

TEST(Replay, ReplaysTimestampsExactly) {
  const std::vector<double> ts{0.0, 0.5, 0.5, 2.25};
  const Replay r(ts);
  EXPECT_EQ(generate_arrivals(r, 1, 100), (std::vector<Nanos>{0, 500'000'000, 500'000'000, 2'250'000'000}));
  EXPECT_EQ(generate_arrivals(r, 2, 100), generate_arrivals(r, 1, 100));  // draws nothing
  EXPECT_DOUBLE_EQ(r.mean_rate(), 4 / 2.25);
  EXPECT_EQ(r.describe(), "replay(n=4, first_s=0, last_s=2.25)");
}

TEST(Replay, PeriodRepeatsTheTrace) {
  const std::vector<double> ts{0.25, 1.0};
  const Replay r(ts, 2.0);
  EXPECT_EQ(generate_arrivals(r, 1, 5),
            (std::vector<Nanos>{250'000'000, 1'000'000'000, 2'250'000'000, 3'000'000'000, 4'250'000'000}));
  EXPECT_DOUBLE_EQ(r.mean_rate(), 1.0);
}

TEST(Replay, FromGapsSumsExactlyAndCanCycle) {
  std::vector<double> gaps(1'000'000, 1e-3 / 3);  // one third of a millisecond, a million times
  const auto r = Replay::from_gaps(gaps);
  EXPECT_EQ(r.times().back(), 333'333'333'333);  // 333.33 s: no accumulated rounding drift
  const std::vector<double> small{0.001, 0.002, 0.0};
  const auto cyclic = Replay::from_gaps(small, true);
  EXPECT_EQ(generate_arrivals(cyclic, 1, 7),
            (std::vector<Nanos>{1'000'000, 3'000'000, 3'000'000, 4'000'000, 6'000'000, 6'000'000, 7'000'000}));
}

// Gaps on both sides of 2^31 ns (the fast conversion's bound) and up to 512 s: each time is the
// sum of the gaps in nanoseconds (each gap to 2^-32 ns, truncated), rounded to nearest, computed
// here with 128-bit integers from the exact long double scale.
TEST(Replay, FromGapsIsExactOnBothSidesOfTheFastPath) {
  Rng rng(11, "gaps");
  std::vector<double> gaps;
  for (const double edge : {0x1p31 / 1e9, 0x1p32 / 1e9}) {
    for (int k = -3; k <= 3; ++k) gaps.push_back(edge * (1 + k * 0x1p-50));
  }
  for (int i = 0; i < 3000; ++i) gaps.push_back(std::ldexp(rng.uniform(), static_cast<int>(rng.uniform() * 40) - 30));
  __extension__ using U128 = unsigned __int128;
  U128 sum = 0;
  std::vector<Nanos> expected;
  for (const double g : gaps) {
    const long double scaled = static_cast<long double>(g * 1e9) * 0x1p32L;  // exact: a power-of-two scale
    sum += static_cast<U128>(std::floor(scaled));
    expected.push_back(static_cast<Nanos>((sum + (U128{1} << 31)) >> 32));
  }
  EXPECT_EQ(Replay::from_gaps(gaps).times(), expected);
}

TEST(Replay, ValidatesTheTimes) {
  expect_error<ValueError>([] { Replay(std::vector<double>{}); }, {"timestamps_s is empty"});
  expect_error<ValueError>([] { Replay(std::vector<double>{1, -1}); }, {"timestamps_s[1]=-1 must be non-negative"});
  expect_error<ValueError>([] { Replay(std::vector<double>{0, std::nan("")}); }, {"timestamps_s[1]=nan"});
  expect_error<ValueError>(
      [] {
        Replay(std::vector<double>{0, 2, 1});
      },
      {"timestamps_s[2]=1 is before timestamps_s[1]=2", "non-decreasing"});
  expect_error<ValueError>([] { Replay(std::vector<double>{0, 2}, 1.5); }, {"period_s=1.5 is shorter"});
  expect_error<ValueError>([] { Replay(std::vector<double>{0, 2}, 0.0); }, {"period_s=0 must be positive"});
  expect_error<ValueError>([] { Replay::from_gaps(std::vector<double>{0.1, -0.2}); }, {"gaps_s[1]=-0.2"});
  expect_error<ValueError>([] { Replay::from_gaps(std::vector<double>{INFINITY}); }, {"gaps_s[0]=inf"});
  expect_error<ValueError>([] { Replay::from_gaps(std::vector<double>{0, 0}, true); }, {"sum to 0 s"});
  expect_error<ValueError>([] { Replay::from_gaps(std::vector<double>{}); }, {"gaps_s is empty"});
}

// --- Readers ---

class TraceFile : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& content) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const auto path =
        std::filesystem::temp_directory_path() / ("servelab_" + std::to_string(::getpid()) + "_" + info->name() + "_" +
                                                  std::to_string(created_.size()) + ".txt");
    std::ofstream(path) << content;
    created_.push_back(path);
    return path;
  }

  // Reading a file holding `content` with `read` throws ValueError "<path>:<line>: ...<what>...".
  template <typename Read>
  void expect_line_error(const std::string& content, int line, const std::string& what, Read read) {
    const auto path = write(content);
    SCOPED_TRACE(content);
    expect_error<ValueError>([&] { read(path); }, {path.string() + ":" + std::to_string(line) + ": ", what});
  }

  void TearDown() override {
    for (const auto& p : created_) std::filesystem::remove(p);
  }

  std::vector<std::filesystem::path> created_;
};

const auto kTimestamps = [](const std::filesystem::path& p) { read_timestamps_csv(p); };
const auto kRateTrace = [](const std::filesystem::path& p) { read_rate_trace(p); };
const auto kAzure = [](const std::filesystem::path& p) { read_azure_functions_counts(p); };

TEST_F(TraceFile, TimestampsWithHeaderCommentsAndCrlf) {
  const auto path = write("time_ms\r\n# a comment\r\n0\r\n\r\n1.5  # inline comment\r\n+2.5\r\n");
  EXPECT_EQ(read_timestamps_csv(path, "ms"), (std::vector<double>{0, 1.5e-3, 2.5e-3}));
  EXPECT_EQ(read_timestamps_csv(path, "s"), (std::vector<double>{0, 1.5, 2.5}));
}

TEST_F(TraceFile, TimestampErrorsNameFileAndLine) {
  expect_line_error("0\n1\n# c\nabc\n", 4, "timestamp 'abc' is not a number", kTimestamps);
  expect_line_error("t\n1\n3\n2\n", 4, "timestamp 2 is before the previous one, 3", kTimestamps);
  expect_line_error("-1\n", 1, "timestamp -1 must be non-negative", kTimestamps);
  expect_line_error("1,2\n", 1, "got 2 fields", kTimestamps);
  expect_line_error("1.5x\n", 1, "'1.5x' is not a number", kTimestamps);
  expect_line_error("0\nt\n", 2, "'t' is not a number", kTimestamps);  // only the first line may be a header
  // nan / inf are numbers, never a header: the first line is checked like any other.
  expect_line_error("nan\n1\n2\n", 1, "timestamp nan must be non-negative and finite", kTimestamps);
  expect_line_error("inf\n1\n", 1, "must be non-negative and finite", kTimestamps);
  expect_line_error("INF,3\n1 2\n", 1, "t 'INF' is not a finite number", kRateTrace);
  const auto comment_only = write("# only a comment\n");
  expect_error<ValueError>([&] { read_timestamps_csv(comment_only); }, {"holds no timestamps"});
  const auto one = write("1\n");
  expect_error<ValueError>([&] { read_timestamps_csv(one, "min"); }, {"unit='min'"});
  expect_error<RuntimeError>([&] { read_timestamps_csv("/nonexistent/servelab/trace.csv"); },
                             {"cannot open '/nonexistent/servelab/trace.csv'"});
}

TEST_F(TraceFile, GapsInUnitsReplay) {
  const auto path = write("gap_us\n1000\n2000.5\n0\n");
  const auto gaps = read_gaps_csv(path, "us");
  ASSERT_EQ(gaps.size(), 3u);
  EXPECT_DOUBLE_EQ(gaps[1], 2000.5e-6);
  EXPECT_EQ(Replay::from_gaps(gaps).times(), (std::vector<Nanos>{1'000'000, 3'000'500, 3'000'500}));
  expect_line_error("1\n2\nnan\n", 3, "gap nan must be non-negative",
                    [](const std::filesystem::path& p) { read_gaps_csv(p); });
}

TEST_F(TraceFile, RateTraceInfersTheInterval) {
  const auto p = read_rate_trace(write("# t rate\nt rate\n0 1850\n10 1617\n20\t1880\n"), 300.0 / 270, true);
  EXPECT_EQ(p.interval_s(), 10.0);
  EXPECT_EQ(p.rates(), (std::vector<double>{1850, 1617, 1880}));
  EXPECT_EQ(p.interval_ns(), 11'111'111'111);
  EXPECT_TRUE(p.repeat());
  EXPECT_EQ(read_rate_trace(write("5,2\n7.5,3\n")).interval_s(), 2.5);  // commas; t0 is the origin
}

TEST_F(TraceFile, RateTraceErrorsNameFileAndLine) {
  expect_line_error("0 1\n10 2\n20 3\n31 4\n", 4, "t=31 breaks the equal spacing of 10 s", kRateTrace);
  expect_line_error("0 1\n10 -2\n", 2, "rate -2 must be non-negative", kRateTrace);
  expect_line_error("0 1\n10 2 3\n", 2, "expected 2 fields 't rate', got 3", kRateTrace);
  expect_line_error("0 1\n0 2\n", 2, "t=0 must be after the first t=0", kRateTrace);
  expect_line_error("0 x\n", 1, "rate 'x' is not a number", kRateTrace);
  const auto one_line = write("0 1\n");
  expect_error<ValueError>([&] { read_rate_trace(one_line); }, {"holds 1 't rate' lines"});
  const auto two_lines = write("0 1\n10 2\n");
  expect_error<ValueError>([&] { read_rate_trace(two_lines, 0.0); }, {"time_scale=0"});
}

constexpr const char* kAzureHeader = "HashOwner,HashApp,HashFunction,Trigger,1,2,3\n";

TEST_F(TraceFile, AzureCountsSumRowsIntoPerMinuteRates) {
  const auto path = write(std::string(kAzureHeader) + "o1,a1,f1,http,60,0,120\no1,a1,f2,timer,6,6,6\n");
  const auto all = read_azure_functions_counts(path);
  EXPECT_EQ(all.interval_s(), 60.0);
  EXPECT_EQ(all.rates(), (std::vector<double>{66.0 / 60, 6.0 / 60, 126.0 / 60}));
  const auto f1 = read_azure_functions_counts(path, "f1", 0.5);
  EXPECT_EQ(f1.rates(), (std::vector<double>{1, 0, 2}));
  EXPECT_EQ(f1.interval_ns(), 30 * kNanosPerSecond);
  expect_error<KeyError>([&] { read_azure_functions_counts(path, std::string("nope")); },
                         {"function='nope' is not in", "(2 rows)"});
}

TEST_F(TraceFile, AzureErrorsNameFileAndLine) {
  const std::string h = kAzureHeader;
  expect_line_error(h + "o,a,f,http,1,2,3\no,a,f,http,1,x,3\n", 3, "minute 2: count 'x' is not a non-negative integer",
                    kAzure);
  expect_line_error(h + "o,a,f,http,1,-2,3\n", 2, "count '-2'", kAzure);
  expect_line_error(h + "o,a,f,http,1,2\n", 2, "expected 7 columns like the header, got 6", kAzure);
  expect_line_error("HashOwner,HashApp,Func,Trigger,1\n", 1, "header column 3 is 'Func', expected 'HashFunction'",
                    kAzure);
  expect_line_error("HashOwner,HashApp,HashFunction,Trigger,1,3\n", 1, "header column 6 is '3', expected minute '2'",
                    kAzure);
  const auto header_only = write(h);
  expect_error<ValueError>([&] { read_azure_functions_counts(header_only); }, {"no function rows"});
}

}  // namespace
}  // namespace servelab::workload
