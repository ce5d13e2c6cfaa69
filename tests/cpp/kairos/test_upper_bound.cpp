// Kairos's configuration space, upper bound (Eq. 9-15, paper and artifact aggregation) and the
// derivation of its inputs from a latency profile.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/systems/kairos/bound_profile.hpp"
#include "servelab/systems/kairos/config_space.hpp"
#include "servelab/systems/kairos/upper_bound.hpp"
#include "servelab/workload/sizes.hpp"

namespace servelab::kairos {
namespace {

InstanceSpace artifact_space() {
  return {{"g4dn.xlarge", "c5n.2xlarge", "r5n.large", "t3.xlarge"}, {0.526, 0.432, 0.149, 0.1664}, {5, 6, 17, 15}, 2.5};
}

TEST(ConfigSpace, MatchesBruteForceInLexicographicOrder) {
  const InstanceSpace space = artifact_space();
  const ConfigTable t = enumerate_configs(space);
  std::vector<std::vector<std::int64_t>> expected;
  for (std::int64_t a = 0; a <= 5; ++a)
    for (std::int64_t b = 0; b <= 6; ++b)
      for (std::int64_t c = 0; c <= 17; ++c)
        for (std::int64_t d = 0; d <= 15; ++d) {
          const double cost = 0.0 + 0.526 * a + 0.432 * b + 0.149 * c + 0.1664 * d;
          if (a >= 1 && cost <= 2.5) expected.push_back({a, b, c, d});
        }
  ASSERT_EQ(t.size(), expected.size());
  EXPECT_EQ(t.size(), 331u);  // the artifact's search space under $2.5/h
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto r = t.row(i);
    EXPECT_EQ(std::vector<std::int64_t>(r.begin(), r.end()), expected[i]) << i;
    EXPECT_DOUBLE_EQ(t.cost(i), config_cost(space.prices, r));
  }
}

TEST(ConfigSpace, SameSetAsTheGenericSearchSpace) {
  const InstanceSpace space = artifact_space();
  const ConfigTable t = enumerate_configs(space);
  const auto generic = space.to_search_space().enumerate();
  ASSERT_EQ(generic.size(), t.size());
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_EQ(generic[i], t.config(i));
}

TEST(ConfigSpace, BudgetEqualToACostIsIncludedDespiteFloatRounding) {
  // 0.1 + 0.2 > 0.3 in binary floating point.
  const InstanceSpace space{{"a", "b"}, {0.1, 0.2}, {1, 1}, 0.3};
  EXPECT_EQ(enumerate_configs(space).size(), 2u);  // (1, 0) and (1, 1)
}

TEST(ConfigSpace, BadInputNamesTheField) {
  InstanceSpace s = artifact_space();
  s.budget = 0.5;  // below one g4dn.xlarge
  EXPECT_THROW(enumerate_configs(s), ValueError);
  try {
    enumerate_configs(s);
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("budget=0.5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no feasible configuration"), std::string::npos) << e.what();
  }
  s = artifact_space();
  s.prices[2] = -1;
  EXPECT_THROW(enumerate_configs(s), ValueError);
  s = artifact_space();
  s.max_count.pop_back();
  EXPECT_THROW(enumerate_configs(s), ValueError);
  s = artifact_space();
  s.types[3] = "g4dn.xlarge";
  EXPECT_THROW(enumerate_configs(s), ValueError);
  s = artifact_space();
  s.max_count[0] = 0;  // min_base = 1 cannot be met
  EXPECT_THROW(enumerate_configs(s), ValueError);
  s = artifact_space();
  s.budget = std::nan("");
  EXPECT_THROW(enumerate_configs(s), ValueError);
}

TEST(ConfigSpace, MinBaseZeroAllowsAuxiliaryOnlyConfigs) {
  const InstanceSpace space{{"gpu", "cpu"}, {1.0, 0.5}, {2, 2}, 1.0, 0};
  const ConfigTable t = enumerate_configs(space);
  // (0,0) (0,1) (0,2) (1,0)
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t.count(3, 0), 1);
}

// One base + one auxiliary type with round numbers: Q_b = 10, f = 0.8, t = 0.5, Q_a = 4, so
// Q_b^{s+} = 10 * 0.2 / 0.5 = 4.
BoundProfile two_types() {
  AuxiliaryProfile a;
  a.type = "cpu";
  a.qps = 4;
  a.vio_batch = 500;
  a.small_ratio = 0.8;
  a.time_ratio = 0.5;
  a.all_batch = {{500, 4.0}};
  return {"gpu", 10.0, {a}};
}

TEST(UpperBound, EquationsTwelveAndThirteen) {
  const UpperBound ub(two_types(), {"gpu", "cpu"}, Aggregation::Paper);
  Regime r{};
  // u = 1, v = 1: C = 4 * 0.2 / 0.8 = 1 < 4: the auxiliary is the bottleneck (Eq. 13).
  EXPECT_DOUBLE_EQ(ub.bound(std::vector<std::int64_t>{1, 1}, &r), 4 / 0.8 + (4.0 - 1.0) / 4.0 * 10.0);
  EXPECT_EQ(r, Regime::AuxiliaryBottleneck);
  // u = 1, v = 8: C = 8 >= 4: the base is the bottleneck (Eq. 12): 4 / 0.2.
  EXPECT_DOUBLE_EQ(ub.bound(std::vector<std::int64_t>{1, 8}, &r), 4 / 0.2);
  EXPECT_EQ(r, Regime::BaseBottleneck);
  // u = 2, v = 8: C = 8 = u Q_b^{s+}: the boundary belongs to Eq. 12 and both cases agree there.
  EXPECT_DOUBLE_EQ(ub.bound(std::vector<std::int64_t>{2, 8}, &r), 8 / 0.2);
  EXPECT_EQ(r, Regime::BaseBottleneck);
  EXPECT_NEAR(8 / 0.2, 32 / 0.8 + 0.0, 1e-12);
  // Base only: u Q_b.
  EXPECT_DOUBLE_EQ(ub.bound(std::vector<std::int64_t>{3, 0}, &r), 30.0);
  EXPECT_EQ(r, Regime::BaseOnly);
}

TEST(UpperBound, BoundNeverDecreasesWithMoreInstances) {
  const UpperBound ub(two_types(), {"gpu", "cpu"}, Aggregation::Artifact);
  for (std::int64_t u = 1; u <= 4; ++u) {
    for (std::int64_t v = 0; v <= 20; ++v) {
      const double here = ub.bound(std::vector<std::int64_t>{u, v});
      EXPECT_LE(here, ub.bound(std::vector<std::int64_t>{u + 1, v}) + 1e-12);
      EXPECT_LE(here, ub.bound(std::vector<std::int64_t>{u, v + 1}) + 1e-12);
    }
  }
}

TEST(UpperBound, EdgeCasesTheArtifactDividesByZeroOn) {
  BoundProfile p = two_types();
  p.auxiliaries[0].small_ratio = 0;
  p.auxiliaries[0].time_ratio = 0;
  Regime r{};
  EXPECT_DOUBLE_EQ(UpperBound(p, {"gpu", "cpu"}, Aggregation::Artifact).bound(std::vector<std::int64_t>{2, 3}, &r),
                   20.0);
  EXPECT_EQ(r, Regime::BaseBottleneck);
  p.auxiliaries[0].small_ratio = 1;
  p.auxiliaries[0].time_ratio = 1;
  EXPECT_DOUBLE_EQ(UpperBound(p, {"gpu", "cpu"}, Aggregation::Artifact).bound(std::vector<std::int64_t>{2, 3}, &r),
                   3 * 4.0 + 20.0);
  EXPECT_EQ(r, Regime::AuxiliaryServesAll);
  // No base instance: large queries cannot be served at all.
  EXPECT_DOUBLE_EQ(
      UpperBound(two_types(), {"gpu", "cpu"}, Aggregation::Artifact).bound(std::vector<std::int64_t>{0, 3}), 0.0);
}

// Two auxiliary types whose parameters do not grow together: the aggregations differ.
BoundProfile non_monotone() {
  BoundProfile p = two_types();
  AuxiliaryProfile b;
  b.type = "small_cpu";
  b.qps = 3;
  b.vio_batch = 300;
  b.small_ratio = 0.85;  // larger f at a smaller s: only possible with a non-monotone input
  b.time_ratio = 0.6;
  b.all_batch = {{300, 3.0}, {500, 2.0}};
  p.auxiliaries[0].all_batch[300] = 5.0;
  p.auxiliaries.push_back(b);
  return p;
}

TEST(UpperBound, PaperAndArtifactAggregation) {
  const BoundProfile p = non_monotone();
  const std::vector<std::int64_t> c{1, 1, 1};
  const auto paper = UpperBound(p, {"gpu", "cpu", "small_cpu"}, Aggregation::Paper).aggregate(0b11);
  EXPECT_EQ(paper.s, 500);  // the type with the largest s stands for all
  EXPECT_DOUBLE_EQ(paper.f, 0.8);
  EXPECT_DOUBLE_EQ(paper.t, 0.5);
  EXPECT_DOUBLE_EQ(paper.aux_qps[2], 2.0);
  const auto art = UpperBound(p, {"gpu", "cpu", "small_cpu"}, Aggregation::Artifact).aggregate(0b11);
  EXPECT_EQ(art.s, 500);
  EXPECT_DOUBLE_EQ(art.f, 0.85);  // maxima taken separately
  EXPECT_DOUBLE_EQ(art.t, 0.6);
  // The artifact's arithmetic, written out.
  const double a_total = 4.0 + 2.0, glq = 10.0 * (1 - 0.85) / (1 - 0.6), max_qps = a_total / 0.85;
  const double target = max_qps - a_total;
  ASSERT_LT(target, glq);
  const double expected = max_qps + 10.0 * 1 * (1 - target / (glq * 1));
  EXPECT_EQ(UpperBound(p, {"gpu", "cpu", "small_cpu"}, Aggregation::Artifact).bound(c), expected);
}

TEST(UpperBound, MissingAllBatchEntryIsAKeyErrorNamingIt) {
  BoundProfile p = non_monotone();
  p.auxiliaries[1].all_batch.erase(500);
  const UpperBound ub(p, {"gpu", "cpu", "small_cpu"}, Aggregation::Artifact);
  EXPECT_NO_THROW(ub.bound(std::vector<std::int64_t>{1, 0, 2}));  // alone, small_cpu needs only 300
  try {
    ub.bound(std::vector<std::int64_t>{1, 1, 1});
    FAIL() << "expected KeyError";
  } catch (const KeyError& e) {
    EXPECT_NE(std::string(e.what()).find("small_cpu"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("500"), std::string::npos) << e.what();
  }
}

TEST(UpperBound, BadProfilesAndTypes) {
  BoundProfile p = two_types();
  EXPECT_THROW(UpperBound(p, {"cpu", "gpu"}, Aggregation::Paper), ValueError);  // base not first
  EXPECT_THROW(UpperBound(p, {"gpu", "tpu"}, Aggregation::Paper), KeyError);
  p.base_qps = std::nan("");
  EXPECT_THROW(p.validate(), ValueError);
  p = two_types();
  p.auxiliaries[0].small_ratio = 1.5;
  EXPECT_THROW(p.validate(), ValueError);
  p = two_types();
  p.auxiliaries[0].time_ratio = 1.0;  // with f < 1: Q_b^{s+} would be infinite
  EXPECT_THROW(p.validate(), ValueError);
  EXPECT_THROW(parse_aggregation("exact"), ValueError);
  EXPECT_THROW(UpperBound(two_types(), {"gpu", "cpu"}, Aggregation::Paper).bound(std::vector<std::int64_t>{1}),
               ValueError);
  EXPECT_THROW(UpperBound(two_types(), {"gpu", "cpu"}, Aggregation::Paper).bound(std::vector<std::int64_t>{1, -1}),
               ValueError);
}

TEST(UpperBounds, RankedHighestFirstTiesInEnumerationOrder) {
  const InstanceSpace space{{"gpu", "cpu"}, {1.0, 0.25}, {3, 8}, 3.0};
  const BoundTable t = upper_bounds(two_types(), space, Aggregation::Artifact);
  ASSERT_EQ(t.order.size(), t.configs.size());
  for (std::size_t p = 1; p < t.order.size(); ++p) {
    const double prev = t.bound[t.order[p - 1]], here = t.bound[t.order[p]];
    EXPECT_GE(prev, here);
    if (prev == here) {
      EXPECT_LT(t.order[p - 1], t.order[p]);
    }
  }
  for (std::size_t i = 0; i < t.configs.size(); ++i) EXPECT_EQ(t.order[t.rank[i] - 1], i);
}

// --- derivation from a latency profile ---

// base latency 1 ms per item, auxiliary 2 ms per item, batches 1..10 measured.
profile::Profile linear_profile() {
  profile::Profile p;
  for (std::int64_t b = 1; b <= 10; ++b) {
    p.set_latency("gpu", "m", b, profile::LatencyDistribution::from_samples({0.001 * b}));
    p.set_latency("cpu", "m", b, profile::LatencyDistribution::from_samples({0.002 * b}));
  }
  return p;
}

TEST(DeriveBoundProfile, ArtifactAndPaperRegionsOnALinearProfile) {
  const profile::Profile p = linear_profile();
  const workload::UniformSize sizes(1, 10);
  DeriveOptions o;
  o.statistic = profile::Statistic::Mean;
  o.region = Region::Artifact;
  const BoundProfile art = derive_bound_profile(p, {"gpu", "cpu"}, "m", 0.0105, sizes, o);
  EXPECT_NEAR(art.base_qps, 1 / 0.0055, 1e-9);
  ASSERT_EQ(art.auxiliaries.size(), 1u);
  const AuxiliaryProfile& a = art.auxiliaries[0];
  EXPECT_EQ(a.vio_batch, 6);                      // 12 ms > 10.5 ms
  EXPECT_NEAR(a.small_ratio, 0.6, 1e-12);         // sizes <= 6
  EXPECT_NEAR(a.time_ratio, 21.0 / 55.0, 1e-12);  // (1+...+6) / (1+...+10)
  EXPECT_NEAR(a.qps, 0.6 / (0.002 * 21 / 10), 1e-9);
  EXPECT_NEAR(a.all_batch.at(6), a.qps, 0);
  EXPECT_DOUBLE_EQ(art.base_violation_share, 0.0);

  o.region = Region::Paper;
  const BoundProfile paper = derive_bound_profile(p, {"gpu", "cpu"}, "m", 0.0105, sizes, o);
  const AuxiliaryProfile& b = paper.auxiliaries[0];
  EXPECT_EQ(b.vio_batch, 6);
  EXPECT_NEAR(b.small_ratio, 0.5, 1e-12);  // sizes < 6: those that meet QoS
  EXPECT_NEAR(b.time_ratio, 15.0 / 55.0, 1e-12);
  EXPECT_NEAR(b.qps, 0.5 / (0.002 * 15 / 10), 1e-9);
  // Q_b^{s+} from the ratios is the base's rate on the large sizes alone: 1 / E[L | b >= 6].
  const double large = paper.base_qps * (1 - b.small_ratio) / (1 - b.time_ratio);
  EXPECT_NEAR(large, 1 / 0.008, 1e-9);
}

TEST(DeriveBoundProfile, AuxiliaryMeetingQoSEverywhereServesAll) {
  const BoundProfile d = derive_bound_profile(linear_profile(), {"gpu", "cpu"}, "m", 1.0, workload::UniformSize(1, 10));
  EXPECT_EQ(d.auxiliaries[0].vio_batch, kNoViolation);
  EXPECT_DOUBLE_EQ(d.auxiliaries[0].small_ratio, 1.0);
  const InstanceSpace space{{"gpu", "cpu"}, {1, 1}, {1, 1}, 2};
  const BoundTable t = upper_bounds(d, space, Aggregation::Paper);
  EXPECT_EQ(t.regime[1], Regime::AuxiliaryServesAll);
}

TEST(DeriveBoundProfile, BadInputIsNamed) {
  const profile::Profile p = linear_profile();
  const workload::UniformSize sizes(1, 10);
  EXPECT_THROW(derive_bound_profile(p, {"gpu", "tpu"}, "m", 0.01, sizes), KeyError);
  EXPECT_THROW(derive_bound_profile(p, {"gpu", "cpu"}, "other", 0.01, sizes), KeyError);
  EXPECT_THROW(derive_bound_profile(p, {"gpu", "cpu"}, "m", -1, sizes), ValueError);
  EXPECT_THROW(derive_bound_profile(p, {"gpu", "cpu"}, "m", std::nan(""), sizes), ValueError);
  // Sizes beyond the profiled batches.
  try {
    derive_bound_profile(p, {"gpu", "cpu"}, "m", 0.01, workload::UniformSize(1, 20));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("above batch 10"), std::string::npos) << e.what();
  }
  // QoS below every latency of the base.
  try {
    derive_bound_profile(p, {"gpu", "cpu"}, "m", 0.0005, sizes);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("no configuration can meet it"), std::string::npos) << e.what();
  }
}

TEST(DeriveBoundProfile, KairosMixSmallRatioMatchesTheAnalyticCdf) {
  // CDF of the artifact's sizes at 460 (rounded up to tens): 8/99 + 64/99 + 22/99 * 261/400.
  profile::Profile p;
  for (std::int64_t b = 10; b <= 1000; b += 10) {
    p.set_latency("gpu", "m", b, profile::LatencyDistribution::from_samples({0.0001 * b}));
    p.set_latency("cpu", "m", b, profile::LatencyDistribution::from_samples({0.0001 * b * (b > 460 ? 10 : 1)}));
  }
  const auto sizes = workload::kairos_sizes();
  const BoundProfile d = derive_bound_profile(p, {"gpu", "cpu"}, "m", 0.05, *sizes);
  EXPECT_EQ(d.auxiliaries[0].vio_batch, 470);
  // Sizes <= 470: uniform 200..599 contributes ceil(v/10)*10 <= 470, i.e. v <= 470: 271 of 400.
  const double cdf = 8.0 / 99 + 64.0 / 99 + 22.0 / 99 * 271 / 400;
  EXPECT_NEAR(d.auxiliaries[0].small_ratio, cdf, 1e-6);
}

}  // namespace
}  // namespace servelab::kairos

namespace servelab::kairos {
namespace {

TEST(ConfigSpace, HugeSpacesAreRefusedNotAllocated) {
  const InstanceSpace huge{{"a", "b", "c", "d", "e"}, {1, 1, 1, 1, 1}, {100, 100, 100, 100, 100}, 500};
  EXPECT_THROW(enumerate_configs(huge), ValueError);
}

}  // namespace
}  // namespace servelab::kairos
