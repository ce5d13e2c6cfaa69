// The HTTP engine over a real serve::Session: requests over loopback answered from their
// outcomes, bad ones refused, many clients at once each answered, the counters agreeing, and
// stop() answering a request still waiting before it returns.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

// clang-format off
#include <utility>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on

#include "servelab/frontend/http_engine.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/serve/session.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::frontend {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using nlohmann::json;

cluster::RunSpec make_spec(double service_s) {
  cluster::RunSpec spec;
  auto p = std::make_shared<profile::Profile>();
  p->set_price("cpu", 0.36);
  p->set_accuracy("m", 0.7);
  for (const int b : {1, 8}) p->set_latency("cpu", "m", b, profile::LatencyDistribution::from_samples({service_s}));
  spec.profile = p;
  spec.workers = {{"cpu", 1, {"m"}}};
  workload::Application a{"rm2", 1.0, 100 * kNanosPerMilli, nullptr, 0.0};
  spec.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(1.0),
                                                       std::vector<workload::Application>{a}, 1);
  return spec;
}

// One keep-alive client connection.
class Client {
 public:
  explicit Client(std::uint16_t port) : socket_(io_) { socket_.connect({asio::ip::make_address("127.0.0.1"), port}); }
  http::response<http::string_body> send(http::verb verb, const std::string& target, const std::string& body = "") {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "x");
    req.body() = body;
    req.prepare_payload();
    http::write(socket_, req);
    http::response<http::string_body> res;
    http::read(socket_, buffer_, res);
    return res;
  }

 private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  beast::flat_buffer buffer_;
};

TEST(FrontendEngine, ServesInferenceAndRefusesBadRequestsByName) {
  serve::Session session(make_spec(0.0005), sched::make_fcfs(""));
  HttpEngine engine(session, EngineOptions{});
  Client c(engine.port());
  EXPECT_EQ(c.send(http::verb::get, "/v2/health/ready").result_int(), 200);
  EXPECT_EQ(json::parse(c.send(http::verb::get, "/v2/models/rm2").body())["parameters"]["slo_ms"], 100.0);
  auto r = c.send(http::verb::post, "/v2/models/rm2/infer", R"({"id": "x", "inputs": []})");
  ASSERT_EQ(r.result_int(), 200) << r.body();
  const auto doc = json::parse(r.body());
  EXPECT_EQ(doc["id"], "x");
  EXPECT_EQ(doc["parameters"]["servelab_query"], 0);
  EXPECT_EQ(doc["parameters"]["servelab_model"], "m");
  r = c.send(http::verb::post, "/v2/models/nope/infer", "{");
  EXPECT_EQ(r.result_int(), 404);
  EXPECT_EQ(json::parse(r.body())["error"],
            "unknown model 'nope'; this server's models (the scenario's applications): rm2");
  r = c.send(http::verb::post, "/v2/models/rm2/infer", R"({"inputs": [{"name": "INPUT0"}]})");
  EXPECT_EQ(r.result_int(), 400);
  EXPECT_EQ(json::parse(r.body())["error"], "inputs[0] (INPUT0).datatype=None must be a data type name such as 'FP32'");
  EXPECT_EQ(c.send(http::verb::get, "/v2/nothing").result_int(), 404);
  EXPECT_EQ(c.send(http::verb::put, "/v2/models/rm2/infer").result_int(), 405);
  const auto counters = engine.counters();
  EXPECT_EQ(counters.values[0][0], 1);  // success
  EXPECT_EQ(counters.refused.at("not_found"), 1);
  EXPECT_EQ(counters.refused.at("invalid"), 1);
  engine.stop(std::chrono::seconds(1));
  session.close();
  EXPECT_EQ(session.result().queries.size_of(), 1u);
}

TEST(FrontendEngine, ManyClientsAtOnceAreEachAnswered) {
  serve::Session session(make_spec(0.0002), sched::make_fcfs(""));
  EngineOptions options;
  options.limits.max_concurrent = 1000;
  HttpEngine engine(session, options);
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int k = 0; k < 8; ++k) {
    clients.emplace_back([&] {
      Client c(engine.port());
      for (int j = 0; j < 25; ++j) {
        if (c.send(http::verb::post, "/v2/models/rm2/infer", R"({"inputs": []})").result_int() == 200) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok, 200);
  EXPECT_EQ(engine.counters().values[0][0], 200);
  EXPECT_EQ(engine.inflight(), 0);
  engine.stop(std::chrono::seconds(1));
}

TEST(FrontendEngine, StoppingAnswersTheRequestsStillWaiting) {
  serve::Session session(make_spec(2.0), sched::make_fcfs(""));  // 2 s batches
  HttpEngine engine(session, EngineOptions{});
  std::thread client([&] {
    Client c(engine.port());
    const auto r = c.send(http::verb::post, "/v2/models/rm2/infer", R"({"inputs": []})");
    EXPECT_EQ(r.result_int(), 503);
    EXPECT_NE(r.body().find("the server stopped before this request's outcome"), std::string::npos) << r.body();
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (engine.inflight() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(engine.inflight(), 1);
  engine.stop(std::chrono::milliseconds(50));
  client.join();
  session.abort();
}

}  // namespace
}  // namespace servelab::frontend
