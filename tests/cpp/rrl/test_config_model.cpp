// The config-model hook of the simulator with RRL's CPU model: set_config knobs (here a worker
// group's initial config) and concurrently busy workers scale the profiled service times.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/systems/rrl/config_model.hpp"
#include "sim_fixture.hpp"

namespace servelab::rrl {
namespace {

using testing::ms;
using testing::replay_spec;
using testing::run;

// "fast" serves one item in 11 ms (sim_fixture.hpp).
constexpr double kProfiledMs = 11;

std::shared_ptr<const cluster::ConfigModel> model(const char* spec) { return catalogue::config_models().make(spec); }

TEST(RrlConfigModel, IntraOpKnobScalesServiceTimeAsTheModelSays) {
  auto spec = replay_spec({0.0, 1.0}, {{"fast", 1, {}, {{"intra_op_threads", 2}}}});
  spec.config_model = model("rrl_cpu(cores=2)");
  const auto r = run(spec, "fcfs");
  CpuModel cpu;
  cpu.cores = 2;
  const double scale = cpu.service_ms(1, 2, 1) / cpu.service_ms(1, 1, 1);
  EXPECT_LT(scale, 1.0);
  for (int q = 0; q < 2; ++q) {
    EXPECT_NEAR(ms(r.queries.finish[q] - r.queries.start[q]), kProfiledMs * scale, 1e-6);
  }
}

TEST(RrlConfigModel, BusyWorkersCountAsConcurrentRequests) {
  // Two workers with 2 threads each on 2 cores, both busy at once: demand 2 threads per core.
  auto spec = replay_spec({0.0, 0.0}, {{"fast", 2, {}, {{"intra_op_threads", 2}}}});
  spec.config_model = model("rrl_cpu(cores=2)");
  const auto r = run(spec, "fcfs");
  CpuModel cpu;
  cpu.cores = 2;
  const double first = cpu.service_ms(1, 2, 1) / cpu.service_ms(1, 1, 1);   // alone when it starts
  const double second = cpu.service_ms(1, 2, 2) / cpu.service_ms(1, 1, 1);  // the other is busy
  EXPECT_NEAR(ms(r.queries.finish[0] - r.queries.start[0]), kProfiledMs * first, 1e-6);
  EXPECT_NEAR(ms(r.queries.finish[1] - r.queries.start[1]), kProfiledMs * second, 1e-6);
}

TEST(RrlConfigModel, NoModelOrTheReferenceLeavesRecordsIdentical) {
  auto plain = replay_spec({0.0, 0.001, 0.002, 0.5}, {{"fast", 2, {}}});
  auto neutral = plain;
  neutral.config_model = model("rrl_cpu(request_parallelism=false)");
  const auto a = run(plain, "fcfs"), b = run(neutral, "fcfs");
  EXPECT_EQ(a.queries.start, b.queries.start);
  EXPECT_EQ(a.queries.finish, b.queries.finish);
  EXPECT_EQ(a.queries.worker, b.queries.worker);
}

TEST(RrlConfigModel, BadKnobsAndParametersNameTheField) {
  auto spec = replay_spec({0.0}, {{"fast", 1, {}, {{"intra_op_threads", 0}}}});
  spec.config_model = model("rrl_cpu");
  EXPECT_THROW(
      {
        try {
          run(spec, "fcfs");
        } catch (const ValueError& e) {
          EXPECT_NE(std::string(e.what()).find("intra_op_threads=0"), std::string::npos) << e.what();
          throw;
        }
      },
      ValueError);
  EXPECT_THROW(model("rrl_cpu(intra_fraction=2)"), ValueError);
  EXPECT_THROW(model("rrl_cpu(reference_inter=0)"), ValueError);
  EXPECT_THROW(model("no_such_model"), KeyError);
}

}  // namespace
}  // namespace servelab::rrl
