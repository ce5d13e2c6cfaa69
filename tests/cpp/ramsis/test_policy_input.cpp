// Bad policy input: documents that are not policies (deeply nested, random bytes, wrong types)
// and policies whose generation fields are invalid are refused with a ValueError naming what is
// wrong, by every path that reads or runs a policy.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>

#include "ramsis/ramsis_fixtures.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/systems/ramsis/guarantees.hpp"
#include "servelab/systems/ramsis/policy_set.hpp"
#include "servelab/systems/ramsis/scheduler.hpp"

using namespace servelab;
using namespace servelab::ramsis;

namespace {

// The message of the ValueError `read` throws ("" and a test failure when it throws none).
template <typename Read>
std::string value_error(Read read) {
  try {
    read();
  } catch (const ValueError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ValueError";
  return "";
}

WorkerPolicy small_policy() {
  GenerateOptions o;
  o.mdp.slo = millis_to_nanos(40);
  o.mdp.load_qps = 300;
  o.mdp.workers = 3;
  o.mdp.max_queue = 4;
  o.mdp.intervals = 5;
  return generate_policy(servelab::ramsis::testing::three_model_table(), o).policy;
}

// The policy's JSON with the text of one field replaced (`field` as written: "\"balancer\":...").
std::string with_field(const WorkerPolicy& p, const std::string& key, const std::string& value) {
  std::string text = to_json(p);
  const std::string opening = "\"" + key + "\":";
  const auto start = text.find(opening) + opening.size();
  auto end = start;
  int depth = 0;
  for (; end < text.size(); ++end) {
    const char c = text[end];
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (depth < 0 || (depth == 0 && c == ',')) break;
  }
  return text.substr(0, start) + value + text.substr(end);
}

std::string nested_lists(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

PolicySet set_of(WorkerPolicy p) {
  PolicySet set;
  set.models = p.models;
  set.accuracy = p.accuracy;
  set.slo = p.slo;
  set.workers = p.workers;
  set.policies.push_back(std::move(p));
  return set;
}

}  // namespace

TEST(PolicyInput, HundredThousandNestedListsAreRefusedNotACrash) {
  const std::string deep = nested_lists(100000);
  EXPECT_NE(value_error([&] { worker_policy_from_json(deep); }).find("nested deeper than 64 levels"),
            std::string::npos);
  EXPECT_NE(value_error([&] { policy_set_from_json(deep); }).find("nested deeper than 64 levels"), std::string::npos);
}

TEST(PolicyInput, DeepValueInsideAFieldIsRefused) {
  const std::string doc = with_field(small_policy(), "balancer", nested_lists(5000));
  EXPECT_NE(value_error([&] { worker_policy_from_json(doc); }).find("nested deeper than 64 levels"), std::string::npos);
}

TEST(PolicyInput, AListWhereATextBelongsIsDescribedNotDumped) {
  // Nested as deep as allowed: the message describes the list instead of printing it.
  const std::string doc = with_field(small_policy(), "balancer", nested_lists(60));
  const std::string message = value_error([&] { worker_policy_from_json(doc); });
  EXPECT_NE(message.find("field 'balancer' must be a string, not a list of 1 item"), std::string::npos) << message;
}

TEST(PolicyInput, RandomBytesAreNotJson) {
  std::mt19937 random(7);
  std::string bytes(256, '\0');
  for (auto& c : bytes) c = static_cast<char>(random() & 0xff);
  bytes[0] = '\x8f';  // not a JSON value's first byte, nor valid UTF-8
  const std::string message = value_error([&] { worker_policy_from_json(bytes); });
  EXPECT_NE(message.find("policy JSON: not valid JSON at byte 1"), std::string::npos) << message;
}

TEST(PolicyInput, UnknownBalancerIsRefusedWhenRead) {
  const std::string doc = with_field(small_policy(), "balancer", "\"bogus\"");
  const std::string message = value_error([&] { worker_policy_from_json(doc); });
  EXPECT_NE(message.find("balancer='bogus' is not one of 'round_robin', 'shortest_queue'"), std::string::npos)
      << message;
}

TEST(PolicyInput, BadIntervalsAreRefusedWhenRead) {
  const WorkerPolicy p = small_policy();
  EXPECT_NE(value_error([&] {
              worker_policy_from_json(with_field(p, "intervals", "-3"));
            }).find("intervals=-3 must be in 1..100000 for discretisation='fld'"),
            std::string::npos);
  // Fewer intervals than the levels it has.
  EXPECT_NE(value_error([&] {
              worker_policy_from_json(with_field(p, "intervals", "2"));
            }).find("slack_levels has 6 entries but intervals=2 makes at most 3"),
            std::string::npos);
  EXPECT_NE(value_error([&] {
              worker_policy_from_json(with_field(p, "discretisation", "\"md\""));
            }).find("intervals=5 must be 0 for discretisation='md'"),
            std::string::npos);
}

TEST(PolicyInput, BadArrivalsAreRefusedWhenRead) {
  const WorkerPolicy p = small_policy();
  for (const std::string bad : {"\"erlang\"", "\"erlang0\"", "\"erlang1001\"", "\"gamma2\"", "\"erlang2.5\""}) {
    EXPECT_NE(value_error([&] {
                worker_policy_from_json(with_field(p, "arrivals", bad));
              }).find("is not 'poisson' or 'erlang<r>' with an integer r in 1..1000"),
              std::string::npos)
        << bad;
  }
  EXPECT_NO_THROW(worker_policy_from_json(with_field(p, "arrivals", "\"erlang3\"")));
}

TEST(PolicyInput, HugeMaxQueueNamesTheLimitNotAnOverflowedStateCount) {
  const std::string message =
      value_error([&] { worker_policy_from_json(with_field(small_policy(), "max_queue", "1000000000")); });
  EXPECT_NE(message.find("max_queue=1000000000 must be in 1..4096"), std::string::npos) << message;
}

TEST(PolicyInput, StateCountBeyondInt32NamesItsFactors) {
  WorkerPolicy p = small_policy();
  p.discretisation = Discretisation::ModelBased;
  p.intervals = 0;
  p.max_queue = 4096;
  p.slack_levels.clear();
  for (Nanos t = 0; t < 600000; ++t) p.slack_levels.push_back(t);
  const std::string message = value_error([&] { p.validate(); });
  EXPECT_NE(message.find("(max_queue + 1) x slack levels + 1 = (4096 + 1) x 600000 + 1 = 2458200001 states"),
            std::string::npos)
      << message;
}

TEST(PolicyInput, TheOnlineSchedulerRefusesWhatEvaluateRefuses) {
  WorkerPolicy p = small_policy();
  p.balancer = "bogus";
  RamsisOptions options;
  const std::string message = value_error([&] { make_ramsis(std::make_shared<const PolicySet>(set_of(p)), options); });
  EXPECT_NE(message.find("balancer='bogus'"), std::string::npos) << message;

  WorkerPolicy q = small_policy();
  q.intervals = 0;
  EXPECT_NE(value_error([&] {
              make_ramsis(std::make_shared<const PolicySet>(set_of(q)), options);
            }).find("intervals=0 must be in 1..100000"),
            std::string::npos);
}

TEST(PolicyInput, EitherDocumentIsToldApartByItsFormat) {
  const WorkerPolicy policy = small_policy();
  const PolicySet one = any_policy_set_from_json(to_json(policy));
  ASSERT_EQ(one.policies.size(), 1u);
  EXPECT_EQ(one.models, policy.models);
  EXPECT_EQ(to_json(one), to_json(policy_set_of(policy)));
  EXPECT_EQ(to_json(any_policy_set_from_json(to_json(one))), to_json(one));
  // Any other format is named, with the two known ones.
  std::string text = to_json(policy);
  const std::string other = R"("format":"servelab.ramsis.other")";
  text.replace(text.find(R"("format":"servelab.ramsis.worker_policy")"),
               std::string(R"("format":"servelab.ramsis.worker_policy")").size(), other);
  const auto message = value_error([&] { any_policy_set_from_json(text); });
  EXPECT_NE(message.find("format='servelab.ramsis.other' is neither"), std::string::npos) << message;
}
