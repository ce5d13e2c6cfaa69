// The RunProfile message: a run's latency curves reach a worker process intact (the same draws from
// the same stream), malformed profiles are named, and the emulated executor runs in a worker server.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "servelab/catalogue/executors.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/serve/remote/remote_executor.hpp"
#include "servelab/serve/remote/run_profile.hpp"
#include "servelab/serve/remote/worker_server.hpp"

namespace servelab::serve::remote {
namespace {

std::shared_ptr<profile::Profile> two_curves() {
  auto p = std::make_shared<profile::Profile>();
  p->add_hardware("cpu");
  p->add_hardware("gpu");
  p->add_model("a");
  p->add_model("b");
  p->set_price("cpu", 1.0);
  p->set_latency("cpu", "b", 1, profile::LatencyDistribution::from_samples({0.004, 0.001, 0.002}));
  p->set_latency("cpu", "b", 8, profile::LatencyDistribution::from_samples({0.009, 0.011}));
  p->set_latency("gpu", "a", 4, profile::LatencyDistribution::from_percentiles({{50, 0.003}, {99, 0.005}}));
  return p;
}

std::span<const std::uint8_t> body_of(const Bytes& frame) {
  return std::span<const std::uint8_t>(frame).subspan(kHeaderBytes);
}

std::string malformed(const Bytes& body) {
  try {
    decode_run_profile(body);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(RemoteRunProfile, CurvesArriveIntactAndDrawTheSameServiceTimes) {
  const auto sent = two_curves();
  Bytes frame;
  encode(RunProfile{sent, profile::Statistic::P95}, frame);
  const RunProfile back = decode_run_profile(body_of(frame));
  ASSERT_TRUE(back.service.has_value());
  EXPECT_EQ(*back.service, profile::Statistic::P95);
  EXPECT_EQ(back.profile->hardware(), sent->hardware());
  EXPECT_EQ(back.profile->models(), sent->models());
  for (const auto& [h, m] : std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}) {
    EXPECT_EQ(back.profile->batches(h, m), sent->batches(h, m));
    for (const auto s : {profile::Statistic::Mean, profile::Statistic::P99}) {
      EXPECT_EQ(back.profile->decision_table(h, m, s), sent->decision_table(h, m, s));
    }
    Rng here(7, "service"), there(7, "service");
    for (std::int64_t items = 1; items <= sent->max_batch(h, m); ++items) {
      EXPECT_EQ(back.profile->sample_ns(h, m, items, there), sent->sample_ns(h, m, items, here));
    }
  }
  encode(RunProfile{sent, std::nullopt}, frame);
  EXPECT_FALSE(decode_run_profile(body_of(frame)).service.has_value());
}

TEST(RemoteRunProfile, MalformedFieldsAreNamed) {
  auto p = std::make_shared<profile::Profile>();
  p->add_hardware("cpu");
  p->add_model("m");
  p->set_latency("cpu", "m", 2, profile::LatencyDistribution::from_samples({0.5}));
  Bytes frame;
  encode(RunProfile{p, std::nullopt}, frame);
  const Bytes good(frame.begin() + kHeaderBytes, frame.end());
  ASSERT_EQ(malformed(good), "accepted");
  // service u8 | 1 | "cpu" (4+3) | 1 | "m" (4+1) | curves 1 | h u32, m u32, batches u32 | batch i64 | kind u8,
  // count u32, sample f64
  constexpr std::size_t kCurves = 1 + 4 + 7 + 4 + 5, kBatch = kCurves + 4 + 12, kKind = kBatch + 8;
  auto bad = good;
  bad[0] = 9;
  EXPECT_NE(malformed(bad).find("service=9 is not 0 (sampled) or 1..5"), std::string::npos) << malformed(bad);
  bad = good;
  bad[kCurves + 4] = 3;  // hardware index 3 of 1
  EXPECT_NE(malformed(bad).find("curve hardware=3 is not one of the 1 hardware"), std::string::npos) << malformed(bad);
  bad = good;
  bad[kBatch] = 0;  // batch 0
  EXPECT_NE(malformed(bad).find("batch=0 is not above the previous 0"), std::string::npos) << malformed(bad);
  bad = good;
  bad[kKind] = 4;
  EXPECT_NE(malformed(bad).find("(cpu, m, batch 2) latency kind=4"), std::string::npos) << malformed(bad);
  bad = good;
  bad[kKind + 1] = 200;  // 200 samples in 8 bytes
  EXPECT_NE(malformed(bad).find("latency count=200 does not fit the 8 bytes left"), std::string::npos)
      << malformed(bad);
  bad = good;
  const double negative = -1.0;
  std::memcpy(&bad[kKind + 5], &negative, 8);
  EXPECT_NE(malformed(bad).find("(cpu, m, batch 2): "), std::string::npos) << malformed(bad);
  bad = good;
  bad[1] = 0xFF;  // hardware count far past the body
  EXPECT_NE(malformed(bad).find("hardware count="), std::string::npos) << malformed(bad);
}

TEST(RemoteRunProfile, AWorkerServerHostsTheEmulatedExecutorWithTheRunsProfile) {
  const auto path = std::filesystem::temp_directory_path() / ("servelab-profile-test-" + std::to_string(::getpid()));
  const auto& registry = catalogue::executors();
  WorkerServerOptions options;
  options.listen = parse_address("unix:" + path.string(), "listen");
  WorkerServer server(registry.make("emulated(service='run')"), options, &registry);
  std::thread serving([&] { server.serve(); });
  {
    const auto builder = registry.make(str("remote(address='", server.address(), "')"));
    // Outside a run there is no profile to send: refused, naming why.
    EXPECT_THROW(builder->build(ExecutorContext{0, 0, nullptr, 1}), ValueError);
    cluster::RunSpec run;
    run.profile = two_curves();
    run.service_statistic = profile::Statistic::P99;
    auto executor = builder->build(ExecutorContext{0, 0, &run, 1});
    EXPECT_NE(executor->describe().find("-> emulated("), std::string::npos) << executor->describe();
    const std::vector<workload::QueryId> queries = {0, 1};
    const ConfigKnobs config;
    Rng rng(1, "service");
    ExecReport report;
    executor->run(ExecRequest{0, 0, 1, 2, queries, config, rng, {}, {}, &report});  // cpu, model b, 2 items
    // The worker waited at least the run's p99 for 2 items of (cpu, b).
    EXPECT_GE(report.compute, run.profile->decision_table(0, 1, profile::Statistic::P99)[2]);
  }
  server.stop();
  serving.join();
}

}  // namespace
}  // namespace servelab::serve::remote
