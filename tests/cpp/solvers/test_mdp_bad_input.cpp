// MDP input at the edges of double precision: messages show the exact offending value, and value
// iteration refuses to report values (or a gain) that overflowed.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "servelab/core/errors.hpp"
#include "servelab/solvers/mdp/mdp.hpp"
#include "servelab/solvers/mdp/solve.hpp"

namespace mdp = servelab::solvers::mdp;

namespace {

// One state whose one action pays `reward` and stays.
mdp::Mdp one_state(double reward, double probability = 1.0) {
  mdp::Mdp m;
  m.state_begin = {0, 1};
  m.pair_begin = {0, 1};
  m.next_state = {0};
  m.probability = {probability};
  m.reward = {reward};
  return m;
}

// Two states swapping places, paying +reward and -reward.
mdp::Mdp alternating(double reward) {
  mdp::Mdp m;
  m.state_begin = {0, 1, 2};
  m.pair_begin = {0, 1, 2};
  m.next_state = {1, 0};
  m.probability = {1.0, 1.0};
  m.reward = {reward, -reward};
  return m;
}

template <typename Call>
std::string value_error(Call call) {
  try {
    call();
  } catch (const servelab::ValueError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ValueError";
  return "";
}

}  // namespace

TEST(MdpBadInput, ProbabilityJustAboveOneIsShownExactly) {
  const auto m = one_state(1.0, 1.0 + 1e-12);
  const std::string message = value_error([&] { m.validate(); });
  EXPECT_NE(message.find("probability=1.000000000001 is outside [0, 1]"), std::string::npos) << message;
}

TEST(MdpBadInput, OverflowingValuesNameTheRewardScale) {
  mdp::SolveOptions o;
  o.min_iterations = 5;  // the second sweep already doubles 1e308 past the largest double
  const std::string message = value_error([&] { mdp::value_iteration(one_state(1e308), o); });
  EXPECT_NE(message.find("value_iteration: the values overflowed after 2 sweeps (state 0: inf)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("rewards up to |reward|=1e+308"), std::string::npos) << message;
}

TEST(MdpBadInput, OverflowingChangeBetweenSweepsIsRefusedToo) {
  // Values stay finite (+-1e308) but their change spans 2e308.
  const std::string message = value_error([&] { mdp::value_iteration(alternating(1e308)); });
  EXPECT_NE(message.find("the values overflowed after 1 sweep (their change between sweeps overflowed)"),
            std::string::npos)
      << message;
}

TEST(MdpBadInput, PolicyEvaluationChecksTheSameWay) {
  mdp::SolveOptions o;
  o.max_iterations = 3;
  o.tolerance = 0;
  const std::string message = value_error([&] { mdp::policy_evaluation(one_state(1e308), {0}, o); });
  EXPECT_NE(message.find("the values overflowed after 2 sweeps"), std::string::npos) << message;
}

TEST(MdpBadInput, LargeButFiniteGainIsNotInfinity) {
  // One sweep: values 1e308, converged (their change has no spread); the gain is 1e308, not
  // the infinity that adding the two change bounds first would give.
  const auto solution = mdp::value_iteration(one_state(1e308));
  EXPECT_TRUE(solution.converged);
  EXPECT_EQ(solution.gain, 1e308);
  EXPECT_TRUE(std::isfinite(solution.values[0]));
}
