// The remote protocol's framing (encode/decode round trips, malformed input named) and a worker
// server driven by a remote executor in one process, over a Unix socket.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "servelab/catalogue/executors.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/serve/remote/address.hpp"
#include "servelab/serve/remote/protocol.hpp"
#include "servelab/serve/remote/remote_executor.hpp"
#include "servelab/serve/remote/worker_server.hpp"

namespace servelab::serve::remote {
namespace {

std::span<const std::uint8_t> body_of(const Bytes& frame) {
  return std::span<const std::uint8_t>(frame).subspan(kHeaderBytes);
}

TEST(RemoteProtocol, BatchRoundTripsWithItsHeader) {
  Batch batch;
  batch.model = 3;
  batch.items = 5;
  batch.queries = {10, 11};
  batch.sizes = {2, 3};
  batch.config = {{"intra_op_threads", 2}};
  batch.padding_bytes = 40;
  Bytes frame;
  encode(7, batch, frame);
  const Header header = decode_header(std::span<const std::uint8_t>(frame).first(kHeaderBytes));
  EXPECT_EQ(header.type, MessageType::Batch);
  EXPECT_EQ(header.batch, 7u);
  ASSERT_EQ(header.length, frame.size() - kHeaderBytes);
  const Batch back = decode_batch(body_of(frame));
  EXPECT_EQ(back.queries, batch.queries);
  EXPECT_EQ(back.sizes, batch.sizes);
  EXPECT_EQ(back.config, batch.config);
  EXPECT_EQ(back.items, 5);
  EXPECT_EQ(back.padding_bytes, 40u);
  EXPECT_TRUE(back.inputs.empty());
}

TEST(RemoteProtocol, RepliesRoundTrip) {
  Bytes frame;
  encode(9, BatchReply{Status::ExecutorFailed, 12, 34, "boom"}, frame);
  const BatchReply reply = decode_batch_reply(body_of(frame));
  EXPECT_EQ(reply.status, Status::ExecutorFailed);
  EXPECT_EQ(reply.exec_ns, 12);
  EXPECT_EQ(reply.worker_ns, 34);
  EXPECT_EQ(reply.error, "boom");
  encode(HelloReply{Status::Ok, "constant(latency_ms=0)", {"k"}}, frame);
  EXPECT_EQ(decode_hello_reply(body_of(frame)).knobs, std::vector<std::string>{"k"});
}

TEST(RemoteProtocol, MalformedInputIsNamed) {
  Bytes frame;
  encode(Hello{1, 0, 5, ""}, frame);
  auto bad = frame;
  bad[0] = 'X';
  EXPECT_THROW(decode_header(std::span<const std::uint8_t>(bad).first(kHeaderBytes)), ProtocolError);
  bad = frame;
  bad[4] = 2;  // version 2, before replies carried outputs
  try {
    decode_header(std::span<const std::uint8_t>(bad).first(kHeaderBytes));
    FAIL() << "version 2 accepted";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("version=2"), std::string::npos) << e.what();
  }
  // A hello cut short, and a batch whose sizes do not add up to its items.
  EXPECT_THROW(decode_hello(body_of(frame).first(10)), ProtocolError);
  Batch batch;
  batch.items = 4;
  batch.queries = {1};
  batch.sizes = {3};
  EXPECT_THROW(encode(1, batch, frame); decode_batch(body_of(frame)), ProtocolError);
}

TEST(RemoteAddress, ParsesAndChecksLoopback) {
  EXPECT_TRUE(parse_address("unix:/tmp/a.sock", "address").loopback());
  EXPECT_TRUE(parse_address("tcp:127.0.0.1:80", "address").loopback());
  EXPECT_TRUE(parse_address("tcp:[::1]:80", "address").loopback());
  EXPECT_FALSE(parse_address("tcp:0.0.0.0:0", "listen", true).loopback());
  EXPECT_EQ(parse_address("tcp:[::1]:80", "address").text(), "tcp:[::1]:80");
  EXPECT_THROW(parse_address("tcp:127.0.0.1:0", "address"), ValueError);  // port 0 only to listen
  EXPECT_THROW(parse_address("tcp:host.example:80", "listen", true), ValueError);
  EXPECT_THROW(parse_address("unix:", "address"), ValueError);
}

TEST(RemoteExecutor, RunsBatchesOnAWorkerServerAndFailsOnceItStops) {
  const auto path = std::filesystem::temp_directory_path() / ("servelab-remote-test-" + std::to_string(::getpid()));
  const auto& registry = catalogue::executors();
  WorkerServer server(registry.make("constant(latency_ms=1)"),
                      {parse_address("unix:" + path.string(), "listen"), false}, &registry);
  std::thread serving([&] { server.serve(); });
  {
    const auto builder = registry.make(str("remote(address='", server.address(), "')"));
    auto executor = builder->build(ExecutorContext{0, 0, nullptr, 1});
    EXPECT_NE(executor->describe().find("constant(latency_ms=1)"), std::string::npos);
    const std::vector<workload::QueryId> queries = {0, 1};
    const ConfigKnobs config;
    Rng rng(1, "service");
    ExecReport report;
    executor->run(ExecRequest{0, 0, 0, 2, queries, config, rng, {}, {}, &report});
    EXPECT_GE(report.compute, 1'000'000);
    server.stop();
    serving.join();
    EXPECT_THROW(executor->run(ExecRequest{0, 0, 0, 2, queries, config, rng, {}, {}, &report}), RuntimeError);
  }
}

TEST(RemoteExecutor, ConnectionsOfSeveralControllerThreadsRunAtOnce) {
  // One worker server, four controller threads with a connection each (as a run's worker threads
  // are): every batch is answered and logged once. Also what ThreadSanitizer checks (make test-tsan).
  const auto path = std::filesystem::temp_directory_path() / ("servelab-remote-many-" + std::to_string(::getpid()));
  const auto& registry = catalogue::executors();
  WorkerServer server(registry.make("constant(latency_ms=0)"),
                      {parse_address("unix:" + path.string(), "listen"), false}, &registry);
  std::thread serving([&] { server.serve(); });
  std::int64_t not_kept = 0;
  TransportLog::global().take(not_kept);
  constexpr int kThreads = 4, kBatches = 25;
  {
    const auto builder = registry.make(str("remote(address='", server.address(), "')"));
    std::vector<std::thread> controllers;
    std::atomic<int> done{0};
    for (int t = 0; t < kThreads; ++t) {
      controllers.emplace_back([&, t] {
        auto executor = builder->build(ExecutorContext{t, 0, nullptr, 1});
        const ConfigKnobs config;
        Rng rng(1, "service");
        for (int b = 0; b < kBatches; ++b) {
          const std::vector<workload::QueryId> queries = {t * kBatches + b};
          executor->run(ExecRequest{t, 0, 0, 1, queries, config, rng, {}, {}, nullptr});
          ++done;
        }
      });
    }
    for (auto& c : controllers) c.join();
    EXPECT_EQ(done.load(), kThreads * kBatches);
  }
  const auto logged = TransportLog::global().take(not_kept);
  EXPECT_EQ(logged.size(), static_cast<std::size_t>(kThreads * kBatches));
  for (const auto& b : logged) EXPECT_TRUE(b.ok);
  server.stop();
  serving.join();
}

}  // namespace
}  // namespace servelab::serve::remote
