// Kairos's similarity-based one-shot selection (Sec. 5.2).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/systems/kairos/selection.hpp"

namespace servelab::kairos {
namespace {

// A table with the given rows and bounds (ranked as upper_bounds() ranks).
BoundTable table_of(const std::vector<std::vector<std::int64_t>>& rows, const std::vector<double>& bounds) {
  BoundTable t;
  std::vector<std::int64_t> counts;
  for (const auto& r : rows) counts.insert(counts.end(), r.begin(), r.end());
  t.configs = ConfigTable(rows[0].size(), counts, std::vector<double>(rows.size(), 1.0));
  t.bound = bounds;
  t.order.resize(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) t.order[i] = i;
  std::stable_sort(t.order.begin(), t.order.end(), [&](std::size_t a, std::size_t b) { return bounds[a] > bounds[b]; });
  return t;
}

TEST(Selection, TopThreeWithTheSameBaseCountPickTheHighest) {
  const BoundTable t = table_of({{2, 0, 1}, {2, 1, 0}, {1, 5, 5}, {2, 2, 2}}, {9, 10, 1, 8});
  const Selection s = select_config(t);
  EXPECT_EQ(s.rule, "same_base");
  EXPECT_EQ(s.index, 1u);
  EXPECT_TRUE(s.distance_sums.empty());
}

TEST(Selection, OtherwiseTheCentroidOfTheTopTen) {
  // Top-3 base counts differ; (2, 1) sits in the middle of the top configurations.
  const BoundTable t = table_of({{1, 0}, {3, 0}, {2, 1}, {2, 2}, {0, 9}}, {10, 9, 8, 7, 0.5});
  const Selection s = select_config(t, 3, 4);
  EXPECT_EQ(s.rule, "min_distance_sum");
  ASSERT_EQ(s.candidates.size(), 4u);
  // Squared distances within {(1,0), (3,0), (2,1), (2,2)}.
  const std::vector<double> expected{0 + 4 + 2 + 5, 4 + 0 + 2 + 5, 2 + 2 + 0 + 1, 5 + 5 + 1 + 0};
  EXPECT_EQ(s.distance_sums, expected);
  EXPECT_EQ(s.index, 2u);
}

TEST(Selection, EqualSumsGoToTheHigherBound) {
  const BoundTable t = table_of({{1, 0}, {2, 0}, {3, 0}, {0, 0}}, {3, 1, 2, 0});
  // Top 3 by bound: (1,0) (3,0) (2,0): base counts differ. Sums: 5, 5, 2 -> (2,0).
  EXPECT_EQ(select_config(t, 3, 3).index, 1u);
  // Among (1,0) and (3,0) alone the sums tie: the higher bound wins.
  EXPECT_EQ(select_config(t, 2, 2).index, 0u);
}

TEST(Selection, SmallTablesAndBadArguments) {
  const BoundTable one = table_of({{1, 4}}, {5});
  EXPECT_EQ(select_config(one).index, 0u);
  EXPECT_EQ(select_config(one).rule, "same_base");
  EXPECT_THROW(select_config(BoundTable{}), ValueError);
  EXPECT_THROW(select_config(one, 0, 10), ValueError);
  EXPECT_THROW(select_config(one, 3, 0), ValueError);
}

}  // namespace
}  // namespace servelab::kairos
