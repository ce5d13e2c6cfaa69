// serve::Session: the serving loop fed by submit(). Each submitted query is answered once, its
// outcome agrees with its record, outputs go to the query they belong to, and the session ends
// (closed, aborted or destroyed) with every query answered and every thread joined.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/serve/session.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::serve {
namespace {

using cluster::QueryStatus;
using cluster::RunSpec;
using profile::LatencyDistribution;

constexpr Nanos kMs = kNanosPerMilli;

RunSpec make_spec(double service_s, std::int32_t workers) {
  RunSpec spec;
  auto p = std::make_shared<profile::Profile>();
  p->set_price("cpu", 0.36);
  p->set_accuracy("m", 0.7);
  p->set_latency("cpu", "m", 1, LatencyDistribution::from_samples({service_s}));
  p->set_latency("cpu", "m", 8, LatencyDistribution::from_samples({2 * service_s}));
  spec.profile = p;
  spec.workers = {{"cpu", workers, {"m"}}};
  workload::Application a{"a", 1.0, 50 * kMs, nullptr, 0.0};
  workload::Application b{"b", 1.0, 200 * kMs, nullptr, 0.0};
  // The arrivals are never read: a session's queries are its submissions.
  spec.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(1.0),
                                                       std::vector<workload::Application>{a, b}, 1);
  spec.seed = 3;
  return spec;
}

// Copies each query's float32 input to its output, times 2.
class Doubling final : public Executor {
 public:
  void run(const ExecRequest& r) override {
    for (std::size_t q = 0; q < r.queries.size(); ++q) {
      InputArray in = r.inputs->array(r.queries[q], "doubling");
      std::vector<float> v(in.data.size() / sizeof(float));
      std::memcpy(v.data(), in.data.data(), in.data.size());
      for (auto& x : v) x *= 2;
      std::memcpy(in.data.data(), v.data(), in.data.size());
      if (r.outputs) r.outputs->put(r.queries[q], std::move(in));
    }
  }
  std::string describe() const override { return "doubling"; }
};

InputArray floats(std::vector<float> v) {
  InputArray a;
  a.shape = {static_cast<std::int64_t>(v.size())};
  a.data.resize(v.size() * sizeof(float));
  std::memcpy(a.data.data(), v.data(), a.data.size());
  return a;
}

struct Answers {
  std::mutex mutex;
  std::vector<Outcome> got;
  OutcomeCallback callback() {
    return [this](Outcome&& o) {
      std::lock_guard lock(mutex);
      got.push_back(std::move(o));
    };
  }
};

TEST(Session, AnswersEverySubmissionOnceAndTheOutcomesAreTheRecords) {
  Answers answers;
  Session session(make_spec(0.002, 2), catalogue::schedulers().make("fcfs"));
  for (int i = 0; i < 30; ++i) session.submit(i % 2, 1 + i % 3, std::nullopt, answers.callback());
  session.close();
  const auto result = session.result();
  ASSERT_EQ(answers.got.size(), 30u);
  ASSERT_EQ(result.queries.size_of(), 30u);
  std::vector<int> seen(30, 0);
  for (const auto& o : answers.got) {
    ASSERT_GE(o.id, 0);
    const auto i = static_cast<std::size_t>(o.id);
    ++seen[i];
    EXPECT_EQ(o.status, QueryStatus::Completed) << o.reason;
    EXPECT_EQ(o.app, result.queries.app[i]);
    EXPECT_EQ(o.app, o.id % 2);  // ids in submission order
    EXPECT_EQ(result.queries.size[i], 1 + o.id % 3);
    EXPECT_EQ(o.arrival, result.queries.arrival[i]);
    EXPECT_EQ(o.deadline - o.arrival, o.app == 0 ? 50 * kMs : 200 * kMs);
    EXPECT_EQ(o.start, result.queries.start[i]);
    EXPECT_EQ(o.finish, result.queries.finish[i]);
    EXPECT_EQ(o.worker, result.queries.worker[i]);
    EXPECT_FALSE(o.output.has_value());  // the emulated executor writes none
  }
  for (const int n : seen) EXPECT_EQ(n, 1);
}

TEST(Session, OutputsGoToTheQueryTheyBelongTo) {
  auto spec = make_spec(0.001, 2);
  ServeOptions options;
  options.executor = [](sched::WorkerId, sched::HardwareId, const RunSpec&) { return std::make_unique<Doubling>(); };
  Session session(std::move(spec), catalogue::schedulers().make("jsq"), options);
  std::vector<std::promise<Outcome>> promises(20);
  for (int i = 0; i < 20; ++i) {
    session.submit(0, 1, floats({static_cast<float>(i), 1.5f}),
                   [&p = promises[i]](Outcome&& o) { p.set_value(std::move(o)); });
  }
  for (int i = 0; i < 20; ++i) {
    auto o = promises[i].get_future().get();
    ASSERT_EQ(o.status, QueryStatus::Completed) << o.reason;
    ASSERT_TRUE(o.output.has_value());
    std::vector<float> v(2);
    std::memcpy(v.data(), o.output->data.data(), sizeof(float) * 2);
    EXPECT_EQ(v[0], 2.0f * static_cast<float>(i));
    EXPECT_EQ(v[1], 3.0f);
  }
  session.close();
  EXPECT_EQ(session.result().queries.size_of(), 20u);
}

TEST(Session, AbortDropsWhatIsQueuedAndSubmitThenFails) {
  Answers answers;
  Session session(make_spec(0.2, 1), catalogue::schedulers().make("fcfs"));
  for (int i = 0; i < 4; ++i) session.submit(0, 1, std::nullopt, answers.callback());
  session.abort();
  const auto result = session.result();
  ASSERT_EQ(answers.got.size(), 4u);
  for (const auto& o : answers.got) {
    EXPECT_EQ(o.status, QueryStatus::Dropped);
    EXPECT_EQ(o.reason, "session stopped");
  }
  EXPECT_EQ(result.queries.size_of(), 4u);
  EXPECT_THROW(session.submit(0, 1, std::nullopt, answers.callback()), RuntimeError);
}

TEST(Session, AbortWhileSubmissionsAreBeingTakenStillAnswersEachOnce) {
  // The loop may hold a submission taken from the queue but not arrived yet when the abort comes:
  // it must be answered too. Many rounds, since the window is short.
  for (int round = 0; round < 100; ++round) {
    Answers answers;
    Session session(make_spec(0.05, 1), catalogue::schedulers().make("fcfs"));
    for (int i = 0; i < 8; ++i) session.submit(0, 1, std::nullopt, answers.callback());
    session.abort();
    const auto result = session.result();
    ASSERT_EQ(answers.got.size(), 8u) << "round " << round;
    EXPECT_EQ(result.queries.size_of(), 8u);
  }
}

TEST(Session, BadSubmissionsAreRefusedNamingTheField) {
  Session session(make_spec(0.001, 1), catalogue::schedulers().make("fcfs"));
  const auto ignore = [](Outcome&&) {};
  try {
    session.submit(2, 1, std::nullopt, ignore);
    FAIL() << "app=2 was taken";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("app=2 is not one of the session's 2 applications"), std::string::npos);
  }
  EXPECT_THROW(session.submit(0, 0, std::nullopt, ignore), ValueError);
  EXPECT_THROW(session.submit(0, kMaxQuerySize + 1, std::nullopt, ignore), ValueError);
  EXPECT_THROW(session.submit(0, 1, std::nullopt, nullptr), ValueError);
  session.close();
  EXPECT_EQ(session.result().queries.size_of(), 0u);
}

TEST(Session, DestroyingAnOpenSessionAnswersEveryQuery) {
  Answers answers;
  {
    Session session(make_spec(0.05, 1), catalogue::schedulers().make("fcfs"));
    for (int i = 0; i < 3; ++i) session.submit(1, 1, std::nullopt, answers.callback());
  }  // aborted and joined here
  EXPECT_EQ(answers.got.size(), 3u);
}

TEST(Session, SubmissionsFromManyThreadsArriveInOrder) {
  Answers answers;
  Session session(make_spec(0.0005, 3), catalogue::schedulers().make("jsq"));
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&] {
      for (int i = 0; i < 50; ++i) session.submit(0, 1, std::nullopt, answers.callback());
    });
  }
  for (auto& c : clients) c.join();
  session.close();
  const auto result = session.result();
  EXPECT_EQ(answers.got.size(), 200u);
  for (std::size_t i = 1; i < result.queries.size_of(); ++i) {
    EXPECT_LE(result.queries.arrival[i - 1], result.queries.arrival[i]);  // stamped in queue order
  }
}

}  // namespace
}  // namespace servelab::serve
