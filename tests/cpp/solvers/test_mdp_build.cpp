// The MDP container: builder, validation messages, per-transition rewards, policy helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "servelab/core/errors.hpp"
#include "servelab/solvers/mdp/mdp.hpp"
#include "servelab/solvers/mdp/solve.hpp"

namespace mdp = servelab::solvers::mdp;

namespace {

// Two states: state 0 has two actions, state 1 one.
mdp::Mdp two_states() {
  mdp::MdpBuilder b;
  b.add_state();
  b.add_action(1.0);
  b.add_transition(0, 0.5);
  b.add_transition(1, 0.5);
  b.add_action(2.0);
  b.add_transition(1, 1.0);
  b.add_state();
  b.add_action(0.0);
  b.add_transition(0, 1.0);
  return b.finish();
}

// Runs validate() and returns its message ("" if it passed).
std::string validation_message(const mdp::Mdp& m, double tolerance = 1e-9) {
  try {
    m.validate(tolerance);
  } catch (const servelab::ValueError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MdpBuild, BuilderLaysOutCsr) {
  const auto m = two_states();
  EXPECT_EQ(m.num_states(), 2);
  EXPECT_EQ(m.num_pairs(), 3);
  EXPECT_EQ(m.num_transitions(), 4);
  EXPECT_EQ(m.state_begin, (std::vector<std::int64_t>{0, 2, 3}));
  EXPECT_EQ(m.pair_begin, (std::vector<std::int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(m.next_state, (std::vector<std::int32_t>{0, 1, 1, 0}));
  EXPECT_EQ(m.num_actions(0), 2);
  EXPECT_EQ(m.pair_of(1, 0), 2);
}

TEST(MdpBuild, FinishRestartsTheBuilder) {
  mdp::MdpBuilder b;
  b.add_state();
  b.add_action(0.0);
  b.add_transition(0, 1.0);
  EXPECT_EQ(b.finish().num_states(), 1);
  EXPECT_EQ(b.num_states(), 0);
  EXPECT_THROW(b.finish(), servelab::ValueError);  // empty now: no states
}

TEST(MdpBuild, BuilderMisuseIsAValueError) {
  mdp::MdpBuilder b;
  EXPECT_THROW(b.add_action(1.0), servelab::ValueError);
  b.add_state();
  EXPECT_THROW(b.add_transition(0, 1.0), servelab::ValueError);
  EXPECT_THROW(b.reserve(-1, 0, 0), servelab::ValueError);
}

TEST(MdpBuild, PerTransitionRewardsAreFoldedIntoExpectations) {
  mdp::MdpBuilder b;
  b.add_state();
  b.add_action(0.5);  // the action's own reward, plus the transitions'
  b.add_transition(0, 0.25, 4.0);
  b.add_transition(0, 0.75, -2.0);
  const auto m = b.finish();
  EXPECT_DOUBLE_EQ(m.reward[0], 0.5 + 1.0 - 1.5);

  const std::vector<double> per_transition{4.0, -2.0};
  EXPECT_EQ(mdp::expected_rewards(m, per_transition), (std::vector<double>{-0.5}));
  EXPECT_THROW(mdp::expected_rewards(m, std::vector<double>{1.0}), servelab::ValueError);
}

TEST(MdpValidate, MessagesNameTheStatePairAndValue) {
  auto m = two_states();
  EXPECT_EQ(validation_message(m), "");

  auto bad = m;
  bad.probability[1] = 0.6;
  EXPECT_NE(validation_message(bad).find("pair 0 (state 0, action 0): transition probabilities sum to 1.1"),
            std::string::npos)
      << validation_message(bad);
  EXPECT_EQ(validation_message(bad, 0.2), "");  // within a loose tolerance

  bad = m;
  bad.probability[2] = std::nan("");
  EXPECT_NE(validation_message(bad).find("transition 2 of pair 1 (state 0, action 1): probability=nan"),
            std::string::npos)
      << validation_message(bad);

  bad = m;
  bad.probability = {1.5, -0.5, 1.0, 1.0};
  EXPECT_NE(validation_message(bad).find("probability=1.5 is outside [0, 1]"), std::string::npos);

  bad = m;
  bad.next_state[3] = 7;
  EXPECT_NE(validation_message(bad).find("transition 3 of pair 2 (state 1, action 0): next_state=7 is out of range"),
            std::string::npos)
      << validation_message(bad);

  bad = m;
  bad.reward[2] = std::numeric_limits<double>::infinity();
  EXPECT_NE(validation_message(bad).find("pair 2 (state 1, action 0): reward=inf"), std::string::npos);

  bad = m;
  bad.state_begin = {0, 3, 3};
  EXPECT_NE(validation_message(bad).find("state 1 has no actions"), std::string::npos) << validation_message(bad);

  bad = m;
  bad.reward.pop_back();
  EXPECT_NE(validation_message(bad).find("reward has 2 entries"), std::string::npos);

  bad = m;
  bad.pair_begin = {0, 2, 1, 4};
  EXPECT_NE(validation_message(bad).find("pair_begin[2]=1 is below pair_begin[1]=2"), std::string::npos);

  bad = m;
  bad.pair_begin = {0, 2, 2, 4};
  bad.next_state = {0, 1, 0, 0};
  EXPECT_NE(validation_message(bad).find("pair 1 (state 0, action 1) has no transitions"), std::string::npos)
      << validation_message(bad);

  EXPECT_NE(validation_message(mdp::Mdp{}).find("no states"), std::string::npos);
  EXPECT_NE(validation_message(m, -1.0).find("tolerance=-1"), std::string::npos);
}

TEST(MdpValidate, PolicyChecks) {
  const auto m = two_states();
  EXPECT_NO_THROW(mdp::validate_policy(m, {1, 0}));
  EXPECT_EQ(mdp::policy_pairs(m, {1, 0}), (std::vector<std::int64_t>{1, 2}));
  try {
    mdp::validate_policy(m, {0, 1});
    FAIL() << "expected a ValueError";
  } catch (const servelab::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("policy[1]=1 is not an action of state 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(mdp::validate_policy(m, {0}), servelab::ValueError);
}

TEST(MdpValidate, SolverOptionsAreChecked) {
  const auto m = two_states();
  const auto message = [&](mdp::SolveOptions o) -> std::string {
    try {
      mdp::value_iteration(m, o);
    } catch (const servelab::ValueError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message({.discount = 1.5}).find("discount=1.5"), std::string::npos);
  EXPECT_NE(message({.discount = std::nan("")}).find("discount=nan"), std::string::npos);
  EXPECT_NE(message({.tolerance = -1}).find("tolerance=-1"), std::string::npos);
  EXPECT_NE(message({.max_iterations = 5, .min_iterations = 6}).find("min_iterations=6"), std::string::npos);
  EXPECT_NE(message({.threads = -2}).find("threads=-2"), std::string::npos);
  EXPECT_NE(message({.discount = 0.9, .relative = true}).find("relative=true needs discount=1"), std::string::npos);
  EXPECT_NE(message({.reference_state = 2}).find("reference_state=2"), std::string::npos);
  EXPECT_NE(message({.initial_values = {1.0}}).find("initial_values has 1 entries"), std::string::npos);

  mdp::Mdp broken = m;
  broken.reward.pop_back();
  EXPECT_THROW(mdp::value_iteration(broken), servelab::ValueError);
  EXPECT_THROW(mdp::stationary_distribution(m, {0, 0}, {}, std::vector<double>{0.0, 0.0}), servelab::ValueError);
  EXPECT_THROW(mdp::stationary_distribution(m, {0, 0}, {}, std::vector<double>{1.0, -0.5}), servelab::ValueError);
  EXPECT_THROW(mdp::expectation(m, {0, 0}, std::vector<double>{0.5, 0.5}, std::vector<double>{1.0}),
               servelab::ValueError);
}
