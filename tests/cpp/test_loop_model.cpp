// The simulator under a loop model (cluster/loop_model.hpp): a batch starts its wake-up after its
// dispatch, its worker is free to the scheduler its notice delay after it ends, an arrival reaches
// the scheduler its arrival delay after its time; records keep the query's own times.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/cluster/loop_model.hpp"
#include "servelab/core/errors.hpp"
#include "sim_fixture.hpp"

namespace servelab {
namespace {

using testing::ms;
using testing::replay_spec;
using testing::run;

TEST(LoopModel, FixedDelaysShiftEachStageExactly) {
  // 11 ms service; arrivals at 0, 5, 30 ms; wake 1 ms, notice 2 ms, arrival 0.5 ms. The second query
  // waits until the first batch's end is noticed (14.5 ms), then wakes its worker.
  auto spec = replay_spec({0.0, 0.005, 0.030}, {{"fast", 1, {}, {}}});
  spec.loop_model = catalogue::loop_models().make("fixed_loop(wake_us=1000, notice_us=2000, arrival_us=500)");
  const auto r = run(spec, "fcfs");
  ASSERT_EQ(r.queries.size_of(), 3u);
  const std::vector<double> arrival{0, 5, 30}, dispatch{0.5, 14.5, 30.5}, start{1.5, 15.5, 31.5},
      finish{12.5, 26.5, 42.5};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(ms(r.queries.arrival[i]), arrival[i]) << i;
    EXPECT_DOUBLE_EQ(ms(r.queries.dispatch[i]), dispatch[i]) << i;
    EXPECT_DOUBLE_EQ(ms(r.queries.start[i]), start[i]) << i;
    EXPECT_DOUBLE_EQ(ms(r.queries.finish[i]), finish[i]) << i;
  }
  EXPECT_EQ(r.workers.busy[0], millis_to_nanos(33));  // the batches' own time, not the loop's
  EXPECT_DOUBLE_EQ(ms(r.duration), 44.5);             // the last end, once noticed
}

TEST(LoopModel, ZeroDelaysGiveTheRecordsOfNoLoopModel) {
  std::vector<double> times;
  for (int i = 0; i < 300; ++i) times.push_back(0.004 * i + 0.003 * std::sin(i));
  std::sort(times.begin(), times.end());
  for (const char* policy : {"fcfs", "least_finish_time", "round_robin"}) {
    auto plain = replay_spec(times, {{"fast", 2, {}, {}}, {"slow", 1, {}, {}}});
    auto looped = plain;
    looped.loop_model = catalogue::loop_models().make("measured_loop(wake_us=[0, 0], notice_us=[0])");
    const auto a = run(plain, policy), b = run(looped, policy);
    EXPECT_EQ(a.queries.dispatch, b.queries.dispatch) << policy;
    EXPECT_EQ(a.queries.start, b.queries.start) << policy;
    EXPECT_EQ(a.queries.finish, b.queries.finish) << policy;
    EXPECT_EQ(a.queries.worker, b.queries.worker) << policy;
  }
}

TEST(LoopModel, MeasuredDelaysAreDeterministicAndFollowTheQuantiles) {
  std::vector<double> times;
  for (int i = 0; i < 400; ++i) times.push_back(0.02 * i);  // an idle worker at every arrival
  auto spec = replay_spec(times, {{"fast", 1, {}, {}}});
  spec.seed = 7;
  spec.loop_model = catalogue::loop_models().make("measured_loop(wake_us=[0, 100, 200], notice_us=[50])");
  const auto a = run(spec, "fcfs"), b = run(spec, "fcfs");
  EXPECT_EQ(a.queries.start, b.queries.start);
  double sum = 0;
  for (std::size_t i = 0; i < a.queries.size_of(); ++i) {
    const Nanos wake = a.queries.start[i] - a.queries.dispatch[i];
    ASSERT_GE(wake, 0);
    ASSERT_LE(wake, 200'000);
    EXPECT_EQ(a.queries.finish[i] - a.queries.start[i], millis_to_nanos(11));
    sum += static_cast<double>(wake);
  }
  // Uniform on [0, 200] us: mean 100 us, standard error 58 / sqrt(400) = 2.9 us.
  EXPECT_NEAR(sum / static_cast<double>(a.queries.size_of()), 100'000, 12'000);
  spec.seed = 8;
  EXPECT_NE(run(spec, "fcfs").queries.start, a.queries.start);
}

TEST(LoopModel, BadQuantilesNameTheField) {
  const auto& models = catalogue::loop_models();
  auto message = [&](const char* spec) {
    try {
      models.make(spec);
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("measured_loop(wake_us=[5, 3])").find("wake_us[1]=3"), std::string::npos);
  EXPECT_NE(message("measured_loop(notice_us=[])").find("notice_us"), std::string::npos);
  EXPECT_NE(message("measured_loop(arrival_us=[-1])").find("arrival_us"), std::string::npos);
  EXPECT_NE(message("fixed_loop(wake_us=-2)").find("wake_us"), std::string::npos);
  EXPECT_THROW(models.make("fixed_loop(latency_us=2)"), KeyError);
}

}  // namespace
}  // namespace servelab
