// Pinning the serving loop's workers to cores (servelab/serve/affinity.hpp), as Hera's node
// control uses it: the plan's checks, a thread pinned by its own call, and a served run whose
// workers each report the core they were pinned to.
#include <gtest/gtest.h>
#include <sched.h>

#include <string>
#include <thread>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/serve/affinity.hpp"
#include "servelab/serve/server.hpp"
#include "sim_fixture.hpp"

namespace servelab::serve {
namespace {

std::string message_of(const CorePlan& plan, std::size_t groups) {
  try {
    check_core_plan(plan, groups);
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

TEST(HeraNodePinning, APlanNamesTheGroupAndTheCoreItCannotUse) {
  const auto allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  EXPECT_EQ(message_of(CorePlan{{{allowed[0]}, {}}}, 2), "");
  EXPECT_NE(message_of(CorePlan{{{}, {100000}}}, 2).find("workers[1].cores: core 100000 does not exist"),
            std::string::npos);
  EXPECT_NE(message_of(CorePlan{{{-1}}}, 1).find("core -1 does not exist"), std::string::npos);
  EXPECT_NE(message_of(CorePlan{{{0}}}, 2).find("1 lists for 2 worker groups"), std::string::npos);
}

TEST(HeraNodePinning, AThreadPinsItselfAndOthersKeepTheirAffinity) {
  const auto allowed = allowed_cpus();
  const int core = allowed.back();
  std::vector<int> applied;
  std::thread([&] { applied = pin_this_thread(std::span<const int>(&core, 1)); }).join();
  EXPECT_EQ(applied, std::vector<int>{core});
  EXPECT_EQ(allowed_cpus(), allowed);  // this thread was not touched
}

TEST(HeraNodePinning, ServedWorkersRunOnTheirGroupsCores) {
  const auto allowed = allowed_cpus();
  auto spec = testing::replay_spec({0.0, 0.001, 0.002, 0.003, 0.004, 0.005}, {{"fast", 2, {}}});
  auto log = std::make_shared<PinLog>();
  ServeOptions options;
  options.executor = pinned_executors(emulated_executors(), CorePlan{{{allowed.back(), allowed.front()}}}, log);
  auto scheduler = catalogue::schedulers().make("fcfs");
  const auto result = serve(spec, *scheduler, options);
  EXPECT_EQ(result.world, "serve");
  const auto records = log->records();
  ASSERT_FALSE(records.empty());
  for (const auto& r : records) {
    const int expected = r.worker == 0 ? allowed.back() : allowed.front();
    EXPECT_EQ(r.core, expected);
    EXPECT_EQ(r.applied, std::vector<int>{expected});
    EXPECT_EQ(r.group, 0);
    EXPECT_GT(r.thread_id, 0);
    EXPECT_TRUE(r.error.empty()) << r.error;
  }
}

}  // namespace
}  // namespace servelab::serve
