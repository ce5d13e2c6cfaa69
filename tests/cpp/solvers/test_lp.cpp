// The LP/MILP adapter: the model builder's validation, and solutions of small problems whose
// answers (and duals) can be checked by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/solvers/lp/lp.hpp"

namespace {

namespace lp = servelab::solvers::lp;
using lp::kInf;

#define SKIP_WITHOUT_LP() \
  if (!lp::available()) GTEST_SKIP() << "servelab was built without an LP solver"

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

// max 3x + 2y  s.t.  x + y <= 5,  x + 3y <= 9,  0 <= x <= 4,  y >= 0  ->  x = 4, y = 1, 14.
lp::Model small_lp(lp::Sense sense = lp::Sense::Maximize) {
  lp::Model m(sense);
  const double s = sense == lp::Sense::Maximize ? 1.0 : -1.0;
  const auto x = m.add_variable("x", 0.0, 4.0, lp::VarType::Continuous, 3.0 * s);
  const auto y = m.add_variable("y", 0.0, kInf, lp::VarType::Continuous, 2.0 * s);
  m.add_constraint("capacity", {{x, 1.0}, {y, 1.0}}, -kInf, 5.0);
  m.add_constraint("other", {{x, 1.0}, {y, 3.0}}, -kInf, 9.0);
  return m;
}

TEST(LpModel, NamesIndicesAndSparseRows) {
  lp::Model m;
  const auto a = m.add_variable("a");
  const auto b = m.add_variable();  // default name
  EXPECT_EQ(m.variable("a"), a);
  EXPECT_EQ(m.variable_name(b), "x1");
  // Repeated variables in a row are summed; entries come out sorted by variable.
  const auto r = m.add_constraint("", {{b, 1.0}, {a, 2.0}, {b, 0.5}}, 1.0, 1.0);
  EXPECT_EQ(m.constraint_name(r), "c0");
  EXPECT_EQ(m.constraint("c0"), r);
  EXPECT_EQ(m.num_nonzeros(), 2);
  EXPECT_EQ(m.row_vars(), (std::vector<std::int32_t>{a, b}));
  EXPECT_EQ(m.row_coefs(), (std::vector<double>{2.0, 1.5}));
  EXPECT_FALSE(m.has_integers());
  m.add_binary("z");
  EXPECT_TRUE(m.has_integers());
}

TEST(LpModel, BadInputNamesTheFieldAndValue) {
  lp::Model m;
  const auto x = m.add_variable("x");
  EXPECT_NE(error_of([&] { m.add_variable("x"); }).find("variable name 'x' is already used"), std::string::npos);
  EXPECT_NE(error_of([&] { m.add_variable("y", 2.0, 1.0); }).find("lower bound 2 > upper bound 1"), std::string::npos);
  EXPECT_NE(error_of([&] { m.add_variable("y", NAN); }).find("'y': lower bound nan"), std::string::npos);
  EXPECT_NE(error_of([&] { m.add_variable("y", 0.0, -kInf); }).find("upper bound -inf"), std::string::npos);
  EXPECT_NE(error_of([&] { m.add_variable("y", 0.0, 1.0, lp::VarType::Continuous, kInf); }).find("objective"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              m.add_constraint("c", {{7, 1.0}}, 0.0, 1.0);
            }).find("variable index 7 is out of range"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              m.add_constraint("c", {{x, NAN}}, 0.0, 1.0);
            }).find("coefficient of variable 'x'"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              m.add_constraint("c", {{x, 1.0}}, 3.0, 1.0);
            }).find("lower bound 3 > upper bound 1"),
            std::string::npos);
  EXPECT_THROW(m.variable("nope"), servelab::KeyError);
  EXPECT_THROW(m.set_bounds(5, 0, 1), servelab::ValueError);
  // A failed add leaves the model unchanged.
  EXPECT_EQ(m.num_variables(), 1);
  EXPECT_EQ(m.num_constraints(), 0);
  lp::Options no_time;
  no_time.time_limit_s = 0.0;
  EXPECT_THROW(lp::solve(m, no_time), servelab::ValueError);
  lp::Options bad_gap;
  bad_gap.mip_relative_gap = -1.0;
  EXPECT_THROW(lp::solve(m, bad_gap), servelab::ValueError);
}

TEST(LpSolve, WithoutTheBackendTheErrorSaysHowToGetIt) {
  if (lp::available()) GTEST_SKIP() << "built with " << lp::backend_version();
  const auto message = error_of([] { lp::solve(small_lp()); });
  EXPECT_NE(message.find("built without an LP solver"), std::string::npos) << message;
}

TEST(LpSolve, SmallLpWithDuals) {
  SKIP_WITHOUT_LP();
  const auto s = lp::solve(small_lp());
  ASSERT_EQ(s.status, lp::Status::Optimal) << s.message;
  EXPECT_NEAR(s.objective, 14.0, 1e-9);
  EXPECT_NEAR(s.values[0], 4.0, 1e-9);
  EXPECT_NEAR(s.values[1], 1.0, 1e-9);
  // One more unit of capacity buys one more y: +2. The other row is slack: 0.
  ASSERT_EQ(s.duals.size(), 2u);
  EXPECT_NEAR(s.duals[0], 2.0, 1e-9);
  EXPECT_NEAR(s.duals[1], 0.0, 1e-9);
  // Raising x's upper bound 4 -> 5 trades a y (2) for an x (3): +1.
  EXPECT_NEAR(s.reduced_costs[0], 1.0, 1e-9);
  EXPECT_NE(s.solver.find("clp"), std::string::npos);

  // The same problem minimised with the objective negated: everything flips sign.
  const auto neg = lp::solve(small_lp(lp::Sense::Minimize));
  ASSERT_EQ(neg.status, lp::Status::Optimal);
  EXPECT_NEAR(neg.objective, -14.0, 1e-9);
  EXPECT_NEAR(neg.duals[0], -2.0, 1e-9);
}

TEST(LpSolve, EqualityRangesAndOffset) {
  SKIP_WITHOUT_LP();
  // min x + y + 10  s.t.  x - y = 1,  2 <= x + y <= 6,  free variables  ->  x = 1.5, y = 0.5.
  lp::Model m;
  const auto x = m.add_variable("x", -kInf, kInf, lp::VarType::Continuous, 1.0);
  const auto y = m.add_variable("y", -kInf, kInf, lp::VarType::Continuous, 1.0);
  m.set_objective_offset(10.0);
  m.add_constraint("diff", {{x, 1.0}, {y, -1.0}}, 1.0, 1.0);
  m.add_constraint("sum", {{x, 1.0}, {y, 1.0}}, 2.0, 6.0);
  const auto s = lp::solve(m);
  ASSERT_EQ(s.status, lp::Status::Optimal) << s.message;
  EXPECT_NEAR(s.objective, 12.0, 1e-9);
  EXPECT_NEAR(s.values[x], 1.5, 1e-9);
  EXPECT_NEAR(s.duals[1], 1.0, 1e-9);  // the lower side of "sum" is active
}

TEST(LpSolve, MilpOptimum) {
  SKIP_WITHOUT_LP();
  auto m = small_lp();
  m.set_type(1, lp::VarType::Integer);
  m.set_bounds(0, 0.0, 3.5);
  m.set_objective(1, 2.5);
  // x <= 3.5, integer y: (3.5, 1) gives 13, (3, 2) gives 14.
  const auto s = lp::solve(m);
  ASSERT_EQ(s.status, lp::Status::Optimal) << s.message;
  EXPECT_NEAR(s.objective, 14.0, 1e-9);
  EXPECT_EQ(s.values[1], 2.0);  // exact integers
  EXPECT_TRUE(s.duals.empty());
  EXPECT_NE(s.solver.find("cbc"), std::string::npos);
}

TEST(LpSolve, KnapsackAgainstEnumeration) {
  SKIP_WITHOUT_LP();
  const std::vector<double> value = {10, 13, 7, 8, 12, 3, 9, 11}, weight = {5, 7, 3, 4, 6, 2, 5, 6};
  const double capacity = 17;
  lp::Model m(lp::Sense::Maximize);
  std::vector<lp::Term> row;
  for (std::size_t k = 0; k < value.size(); ++k) {
    const auto v = m.add_binary("", value[k]);
    row.push_back({v, weight[k]});
  }
  m.add_constraint("capacity", row, -kInf, capacity);
  double best = 0;
  for (unsigned mask = 0; mask < (1u << value.size()); ++mask) {
    double w = 0, v = 0;
    for (std::size_t k = 0; k < value.size(); ++k)
      if (mask >> k & 1) w += weight[k], v += value[k];
    if (w <= capacity) best = std::max(best, v);
  }
  const auto s = lp::solve(m);
  ASSERT_EQ(s.status, lp::Status::Optimal) << s.message;
  EXPECT_NEAR(s.objective, best, 1e-9);
}

TEST(LpSolve, InfeasibleAndUnbounded) {
  SKIP_WITHOUT_LP();
  lp::Model infeasible;
  const auto x = infeasible.add_variable("x", 0.0, 1.0);
  infeasible.add_constraint("", {{x, 1.0}}, 2.0, kInf);
  EXPECT_EQ(lp::solve(infeasible).status, lp::Status::Infeasible);
  EXPECT_FALSE(lp::solve(infeasible).has_solution);
  infeasible.set_type(x, lp::VarType::Integer);
  EXPECT_EQ(lp::solve(infeasible).status, lp::Status::Infeasible);

  lp::Model parity;  // 2a = 3 has no integer solution although its relaxation does
  const auto a = parity.add_variable("a", 0.0, 10.0, lp::VarType::Integer);
  parity.add_constraint("", {{a, 2.0}}, 3.0, 3.0);
  EXPECT_EQ(lp::solve(parity).status, lp::Status::Infeasible);

  lp::Model unbounded;
  unbounded.add_variable("x", 0.0, kInf, lp::VarType::Continuous, -1.0);
  EXPECT_EQ(lp::solve(unbounded).status, lp::Status::Unbounded);
  unbounded.set_type(0, lp::VarType::Integer);
  EXPECT_EQ(lp::solve(unbounded).status, lp::Status::Unbounded);
}

TEST(LpSolve, EmptyModel) {
  SKIP_WITHOUT_LP();
  lp::Model m;
  m.set_objective_offset(3.0);
  const auto s = lp::solve(m);
  EXPECT_EQ(s.status, lp::Status::Optimal);
  EXPECT_EQ(s.objective, 3.0);
  m.add_constraint("impossible", {}, 1.0, 2.0);  // 0 in [1, 2]
  EXPECT_EQ(lp::solve(m).status, lp::Status::Infeasible);
}

TEST(LpSolve, IterationLimitStopsTheSimplex) {
  SKIP_WITHOUT_LP();
  // A dense 40 x 40 LP needs many pivots; one is not enough.
  lp::Model m(lp::Sense::Maximize);
  const int n = 40;
  for (int j = 0; j < n; ++j) m.add_variable("", 0.0, kInf, lp::VarType::Continuous, 1.0 + (j * 7 % 11));
  for (int i = 0; i < n; ++i) {
    std::vector<lp::Term> row;
    for (int j = 0; j < n; ++j) row.push_back({j, 1.0 + ((i * 31 + j * 17) % 13)});
    m.add_constraint("", row, -kInf, 100.0 + i);
  }
  lp::Options one_pivot;
  one_pivot.iteration_limit = 1;
  const auto s = lp::solve(m, one_pivot);
  EXPECT_EQ(s.status, lp::Status::IterationLimit) << s.message;
  EXPECT_EQ(lp::solve(m).status, lp::Status::Optimal);
}

}  // namespace
