// The assignment solver: known cases, ties, forbidden entries, rectangular shapes, bad input, and
// random matrices against an exhaustive search.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/solvers/lap/assignment.hpp"

namespace {

using servelab::solvers::AssignmentSolver;
using servelab::solvers::linear_sum_assignment;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Every row (rows <= cols) or column gets exactly one partner, and the cost is the sum of the
// chosen entries.
void expect_valid(const std::vector<double>& cost, std::int64_t rows, std::int64_t cols,
                  const servelab::solvers::Assignment& a) {
  ASSERT_EQ(static_cast<std::int64_t>(a.row_to_col.size()), rows);
  std::vector<int> used(cols, 0);
  std::int64_t assigned = 0;
  double total = 0.0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto j = a.row_to_col[i];
    if (j < 0) continue;
    ASSERT_LT(j, cols);
    EXPECT_EQ(used[j]++, 0) << "column " << j << " assigned twice";
    total += cost[i * cols + j];
    ++assigned;
  }
  EXPECT_EQ(assigned, std::min(rows, cols));
  EXPECT_DOUBLE_EQ(a.cost, total);
}

// The optimum by trying every injective map from the smaller side (small sizes only); +inf when
// every complete assignment uses a forbidden entry.
double brute_force(const std::vector<double>& cost, int rows, int cols, bool maximize) {
  const bool transpose = rows > cols;
  const int n = transpose ? cols : rows, m = transpose ? rows : cols;
  const auto at = [&](int i, int j) { return transpose ? cost[j * cols + i] : cost[i * cols + j]; };
  std::vector<int> perm(m);
  std::iota(perm.begin(), perm.end(), 0);
  double best = kInf;
  // Permutations of all m columns visit every choice for the first n (with repeats; fine here).
  do {
    double total = 0.0;
    for (int i = 0; i < n; ++i) total += maximize ? -at(i, perm[i]) : at(i, perm[i]);
    best = std::min(best, total);
  } while (std::next_permutation(perm.begin(), perm.end()));
  return maximize ? -best : best;
}

TEST(Lap, SmallKnownCase) {
  const std::vector<double> cost = {4, 1, 3, 2, 0, 5, 3, 2, 2};
  const auto a = linear_sum_assignment(cost, 3, 3);
  EXPECT_EQ(a.row_to_col, (std::vector<std::int32_t>{1, 0, 2}));
  EXPECT_DOUBLE_EQ(a.cost, 5.0);
}

TEST(Lap, Maximize) {
  const std::vector<double> cost = {4, 1, 3, 2, 0, 5, 3, 2, 2};
  const auto a = linear_sum_assignment(cost, 3, 3, /*maximize=*/true);
  expect_valid(cost, 3, 3, a);
  EXPECT_DOUBLE_EQ(a.cost, 11.0);  // 4 + 5 + 2
}

TEST(Lap, OneByOneAndEmpty) {
  EXPECT_DOUBLE_EQ(linear_sum_assignment(std::vector<double>{7.5}, 1, 1).cost, 7.5);
  const auto empty = linear_sum_assignment(std::vector<double>{}, 0, 4);
  EXPECT_TRUE(empty.row_to_col.empty());
  EXPECT_EQ(empty.cost, 0.0);
  const auto no_cols = linear_sum_assignment(std::vector<double>{}, 3, 0);
  EXPECT_EQ(no_cols.row_to_col, (std::vector<std::int32_t>{-1, -1, -1}));
}

TEST(Lap, AllTiesGiveAPermutation) {
  for (int n : {1, 2, 5, 17, 64}) {
    const std::vector<double> cost(n * n, 3.0);
    const auto a = linear_sum_assignment(cost, n, n);
    expect_valid(cost, n, n, a);
    EXPECT_DOUBLE_EQ(a.cost, 3.0 * n);
  }
}

TEST(Lap, RectangularBothWays) {
  // 2 x 3: row 0 -> col 2 (1), row 1 -> col 0 (2).
  const std::vector<double> wide = {5, 4, 1, 2, 8, 9};
  const auto a = linear_sum_assignment(wide, 2, 3);
  EXPECT_EQ(a.row_to_col, (std::vector<std::int32_t>{2, 0}));
  EXPECT_DOUBLE_EQ(a.cost, 3.0);
  // Its transpose, 3 x 2: row 1 is left out.
  const std::vector<double> tall = {5, 2, 4, 8, 1, 9};
  const auto b = linear_sum_assignment(tall, 3, 2);
  EXPECT_EQ(b.row_to_col, (std::vector<std::int32_t>{1, -1, 0}));
  EXPECT_DOUBLE_EQ(b.cost, 3.0);
}

TEST(Lap, InfinityIsForbidden) {
  // The cheap diagonal is forbidden; the only way around it is the anti-diagonal.
  const std::vector<double> cost = {kInf, 10, 1, kInf};
  const auto a = linear_sum_assignment(cost, 2, 2);
  EXPECT_EQ(a.row_to_col, (std::vector<std::int32_t>{1, 0}));
  EXPECT_DOUBLE_EQ(a.cost, 11.0);
  // Maximising, -inf is the forbidden value.
  const std::vector<double> neg = {-kInf, 10, 1, -kInf};
  EXPECT_DOUBLE_EQ(linear_sum_assignment(neg, 2, 2, true).cost, 11.0);
}

TEST(Lap, InfeasibleIsAValueError) {
  const auto expect_infeasible = [](const std::vector<double>& cost, std::int64_t rows, std::int64_t cols) {
    try {
      linear_sum_assignment(cost, rows, cols);
      ADD_FAILURE() << "no error for an infeasible matrix";
    } catch (const servelab::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("cost matrix is infeasible"), std::string::npos) << e.what();
    }
  };
  expect_infeasible({kInf, 1, kInf, 2}, 2, 2);  // both rows need column 1
  expect_infeasible({kInf, kInf, kInf, kInf}, 2, 2);
  expect_infeasible({1, kInf, kInf, 2, kInf, kInf}, 2, 3);  // both rows can only take column 0
  expect_infeasible({kInf, kInf, kInf, 1, 2, 3}, 2, 3);     // row 0 has nothing allowed
  expect_infeasible({1, kInf, 2, kInf, 3, kInf}, 3, 2);     // column 1 all forbidden
}

TEST(Lap, BadEntriesNameRowColumnAndValue) {
  const auto message = [](const std::vector<double>& cost, std::int64_t rows, std::int64_t cols, bool maximize) {
    try {
      linear_sum_assignment(cost, rows, cols, maximize);
    } catch (const servelab::ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto m = message({1, 2, 3, nan}, 2, 2, false);
  EXPECT_NE(m.find("row 1, column 1"), std::string::npos) << m;
  EXPECT_NE(m.find("nan"), std::string::npos) << m;
  m = message({1, -kInf, 3, 4}, 2, 2, false);
  EXPECT_NE(m.find("row 0, column 1"), std::string::npos) << m;
  EXPECT_NE(m.find("-inf"), std::string::npos) << m;
  m = message({1, 2, kInf, 4}, 2, 2, true);
  EXPECT_NE(m.find("row 1, column 0"), std::string::npos) << m;
  m = message({1, 2, 3}, 2, 2, false);
  EXPECT_NE(m.find("expected rows*cols"), std::string::npos) << m;
  m = message({}, -1, 0, false);
  EXPECT_NE(m.find("shape (-1, 0)"), std::string::npos) << m;
}

TEST(Lap, RandomMatricesMatchExhaustiveSearch) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  AssignmentSolver solver;  // reused across shapes on purpose
  int feasible = 0, infeasible = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int rows = 1 + static_cast<int>(rng() % 6), cols = 1 + static_cast<int>(rng() % 6);
    const int kind = trial % 5;
    const bool maximize = kind == 0 && (rng() & 1);
    std::vector<double> cost(rows * cols);
    for (auto& x : cost) {
      switch (kind) {
        case 0:
          x = uniform(rng);
          break;  // continuous
        case 1:
          x = static_cast<double>(rng() % 3);
          break;  // many ties
        case 2:
          x = uniform(rng) < 0.3 ? 1e12 : uniform(rng);
          break;  // huge entries
        case 3:
          x = uniform(rng) < 0.4 ? kInf : static_cast<double>(rng() % 4);
          break;  // forbidden
        default:
          x = static_cast<double>(static_cast<int>(rng() % 21) - 10);
          break;  // negative
      }
    }
    const double expected = brute_force(cost, rows, cols, maximize);
    SCOPED_TRACE(testing::Message() << "trial " << trial << " shape " << rows << "x" << cols);
    if (std::isinf(expected)) {
      EXPECT_THROW(solver.solve(cost, rows, cols, maximize), servelab::ValueError);
      ++infeasible;
      continue;
    }
    const auto& a = solver.solve(cost, rows, cols, maximize);
    expect_valid(cost, rows, cols, a);
    EXPECT_NEAR(a.cost, expected, 1e-9 * std::max(1.0, std::fabs(expected)));
    ++feasible;
  }
  EXPECT_GT(infeasible, 20);  // the forbidden-entry cases really exercise both outcomes
  EXPECT_GT(feasible, 2000);
}

TEST(Lap, LargeRandomSquareIsAValidOptimum) {
  // Too big for exhaustive search: check a necessary condition of optimality instead.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const int n = 200;
  std::vector<double> cost(n * n);
  for (auto& x : cost) x = uniform(rng);
  const auto a = linear_sum_assignment(cost, n, n);
  expect_valid(cost, n, n, a);
  // No pair of rows gains by swapping their columns (2-opt optimality, implied by optimality).
  for (int i = 0; i < n; ++i)
    for (int k = i + 1; k < n; ++k) {
      const auto ji = a.row_to_col[i], jk = a.row_to_col[k];
      EXPECT_LE(cost[i * n + ji] + cost[k * n + jk], cost[i * n + jk] + cost[k * n + ji] + 1e-12);
    }
}

}  // namespace
