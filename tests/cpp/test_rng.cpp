#include <gtest/gtest.h>

#include <boost/random/exponential_distribution.hpp>
#include <cmath>
#include <random>
#include <set>

#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/core/seed_sequence.hpp"
#include "servelab/core/time.hpp"

namespace servelab {
namespace {

TEST(Rng, SameSeedAndNameSameStream) {
  Rng a(42, "arrivals"), b(42, "arrivals");
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.engine()(), b.engine()());
}

TEST(Rng, NamesSeedsAndChildrenGiveDistinctStreams) {
  std::set<std::uint64_t> first_draws;
  for (const auto& rng : {Rng(42, "arrivals"), Rng(42, "sizes"), Rng(43, "arrivals"), Rng(42, "arrivals").derive("a"),
                          Rng(42, "arrivals").derive("b")}) {
    Rng copy = rng;
    first_draws.insert(copy.engine()());
  }
  EXPECT_EQ(first_draws.size(), 5u);
  EXPECT_EQ(Rng(1, "x").derive("y").identity(), Rng(1, "x").derive("y").identity());
}

TEST(Rng, KnownValuesAreStableAcrossPlatforms) {
  // mt19937_64, seed_seq and Boost's exponential are fully specified, so these values must never
  // change; a change here would silently alter every published servelab result.
  Rng rng(2024, "golden");
  EXPECT_EQ(rng.identity(), 12979171137450226961ULL);
  EXPECT_EQ(rng.engine()(), 15666412830217652ULL);
  boost::random::exponential_distribution<double> exp(2.0);
  EXPECT_DOUBLE_EQ(exp(rng.engine()), 0.81554385781400718);
  EXPECT_EQ(Rng(2024, "golden").derive("child").engine()(), 11901473034272228301ULL);
}

TEST(Rng, EngineGivesStdMt19937_64sNumbers) {
  // The engine is Boost's MT19937-64 for its branch-free state update; it must give exactly the
  // standard engine's numbers from the same seed sequence, across several state updates (312
  // numbers each), so results stay those of std::mt19937_64.
  for (std::uint32_t s = 0; s < 300; ++s) {
    std::seed_seq a{s, s * 2654435761u, 7u, s ^ 0xdeadbeefu}, b{s, s * 2654435761u, 7u, s ^ 0xdeadbeefu};
    std::mt19937_64 reference(a);
    Rng::Engine engine(b);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(engine(), reference()) << "seed " << s << ", number " << i;
  }
}

TEST(Rng, StateGeneratedTogetherIsStdSeedSeqs) {
  // The interleaved seed_seq::generate against std::seed_seq, for 1 to 21 lists at once (whole
  // groups of eight, then of four, and the rest) and random seed words.
  std::mt19937_64 words(99);
  for (std::size_t count = 1; count <= 21; ++count) {
    std::vector<detail::SeedWords> seeds(count);
    for (auto& seed : seeds)
      for (auto& w : seed) w = static_cast<std::uint32_t>(words());
    std::vector<detail::StateWords> got(count);
    detail::generate_states(seeds, got);
    for (std::size_t i = 0; i < count; ++i) {
      std::seed_seq reference(seeds[i].begin(), seeds[i].end());
      detail::StateWords want;
      reference.generate(want.begin(), want.end());
      ASSERT_EQ(got[i], want) << count << " lists, list " << i;
    }
  }
}

TEST(Rng, ChildrenDerivedTogetherAreDerivesStreams) {
  const Rng parent(5, "service");
  std::vector<std::string> names;
  for (int i = 0; i < 70; ++i) names.push_back(str("worker", i));  // a chunk of 64 and the rest
  auto together = parent.derive_all(names);
  ASSERT_EQ(together.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    Rng alone = parent.derive(names[i]);
    EXPECT_EQ(together[i].identity(), alone.identity());
    for (int d = 0; d < 400; ++d) ASSERT_EQ(together[i].engine()(), alone.engine()()) << names[i] << " draw " << d;
  }
  EXPECT_TRUE(parent.derive_all({}).empty());
}

TEST(Rng, UniformMeanIsAHalf) {
  Rng rng(7, "u");
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) sum += rng.uniform();
  EXPECT_NEAR(sum / n, 0.5, 0.005);
}

TEST(Time, ConversionsRoundAndValidate) {
  EXPECT_EQ(seconds_to_nanos(1.5), 1'500'000'000);
  EXPECT_EQ(seconds_to_nanos(1e-9 * 0.6), 1);
  EXPECT_EQ(millis_to_nanos(10.5), 10'500'000);
  EXPECT_DOUBLE_EQ(nanos_to_seconds(2'500'000'000), 2.5);
  EXPECT_DOUBLE_EQ(nanos_to_millis(1'500'000), 1.5);
  EXPECT_THROW(seconds_to_nanos(std::nan(""), "arrival"), ValueError);
  EXPECT_THROW(seconds_to_nanos(1e12), ValueError);
  try {
    seconds_to_nanos(INFINITY, "slo");
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()), "slo=inf is not a finite time in seconds");
  }
}

TEST(Time, FiniteTimesBeyondTheNanosecondRangeSaySo) {
  try {
    seconds_to_nanos(1e12, "horizon_s");
    ADD_FAILURE() << "no ValueError";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "horizon_s=1e+12 is finite but beyond the range of int64 nanoseconds: |horizon_s| must be below "
              "9.2e+09 seconds (about 292 years)");
  }
  try {
    millis_to_nanos(1e300, "slo_ms");  // shown in ms, as given
    ADD_FAILURE() << "no ValueError";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "slo_ms=1e+300 is finite but beyond the range of int64 nanoseconds: |slo_ms| must be below 9.2e+12 ms "
              "(about 292 years)");
  }
  EXPECT_EQ(millis_to_nanos(-1.5), -1'500'000);
}

}  // namespace
}  // namespace servelab
