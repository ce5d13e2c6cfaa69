// Kairos+ (Algorithm 1) over a bound table, through the generic searches.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/systems/kairos/kairos_plus.hpp"

namespace servelab::kairos {
namespace {

BoundProfile inputs() {
  AuxiliaryProfile a;
  a.type = "cpu";
  a.qps = 4;
  a.vio_batch = 500;
  a.small_ratio = 0.8;
  a.time_ratio = 0.5;
  a.all_batch = {{500, 4.0}};
  return {"gpu", 10.0, {a}};
}

BoundTable table() { return upper_bounds(inputs(), {{"gpu", "cpu"}, {1.0, 0.25}, {3, 8}, 3.0}); }

// A throughput at 90% of each bound: monotone, below the bound.
double value_of(const BoundTable& t, const solvers::search::Config& c) {
  for (std::size_t i = 0; i < t.configs.size(); ++i) {
    if (t.configs.config(i) == c) return 0.9 * t.bound[i];
  }
  throw KeyError("unknown config");
}

TEST(KairosPlus, EvaluatesInBoundOrderAndStopsWhenTheNextBoundIsNoBetter) {
  const BoundTable t = table();
  int calls = 0;
  const auto result = kairos_plus(t, [&](const solvers::search::Config& c) {
    ++calls;
    return value_of(t, c);
  });
  ASSERT_TRUE(result.found);
  EXPECT_EQ(result.best_config, t.configs.config(t.order[0]));
  EXPECT_DOUBLE_EQ(result.best_value, 0.9 * t.bound[t.order[0]]);
  EXPECT_EQ(result.evaluations(), calls);
  // Every configuration whose bound exceeds 0.9 x the top bound may still be evaluated; no other.
  std::int64_t above = 0;
  for (double b : t.bound) above += b > 0.9 * t.bound[t.order[0]];
  EXPECT_LE(result.evaluations(), above);
  EXPECT_LT(result.evaluations(), static_cast<std::int64_t>(t.configs.size()));
  EXPECT_EQ(result.space_points, static_cast<std::int64_t>(t.configs.size()));
  for (std::size_t i = 1; i < result.trace.size(); ++i) {
    const auto rank = [&](const solvers::search::Config& c) {
      for (std::size_t j = 0; j < t.configs.size(); ++j) {
        if (t.configs.config(j) == c) return t.rank[j];
      }
      return std::int64_t{-1};
    };
    EXPECT_LT(rank(result.trace[i - 1].config), rank(result.trace[i].config));
  }
}

TEST(KairosPlus, CompetitorsReachTheSameOptimumWithSubConfigPruningOnly) {
  const BoundTable t = table();
  const auto objective = [&](const solvers::search::Config& c) { return value_of(t, c); };
  const auto kplus = kairos_plus(t, objective);
  for (const char* method : {"random", "genetic", "exhaustive"}) {
    solvers::search::SearchOptions o;
    o.seed = 5;
    const auto r = search_configs(t, objective, method, o);
    EXPECT_DOUBLE_EQ(r.best_value, kplus.best_value) << method;
    EXPECT_GE(r.evaluations(), kplus.evaluations()) << method;
  }
}

TEST(KairosPlus, BadInput) {
  EXPECT_THROW(search_configs(BoundTable{}, [](const solvers::search::Config&) { return 1.0; }), ValueError);
  EXPECT_THROW(search_configs(
                   table(), [](const solvers::search::Config&) { return 1.0; }, "sgd"),
               KeyError);
}

}  // namespace
}  // namespace servelab::kairos
