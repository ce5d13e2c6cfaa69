#include "servelab/frontend/http_engine.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <system_error>
#include <thread>

#include "connection.hpp"
#include "servelab/core/errors.hpp"

namespace servelab::frontend {
namespace {

using detail::asio::ip::tcp;
namespace asio = detail::asio;

// How long stop() lets the answers it wrote reach their clients before it closes the rest.
constexpr auto kWriteGrace = std::chrono::seconds(1);

std::vector<Model> session_models(const serve::Session& session, const EngineOptions& options) {
  std::vector<Model> models;
  for (const auto& app : session.spec().workload->apps()) {
    Model m{app.name, static_cast<double>(app.slo) / 1e6, std::nullopt};
    if (const auto it = options.inputs.find(app.name); it != options.inputs.end()) m.input = it->second;
    models.push_back(std::move(m));
  }
  for (const auto& [name, spec] : options.inputs) {
    const bool known = std::any_of(models.begin(), models.end(), [&](const Model& m) { return m.name == name; });
    if (!known)
      throw ValueError(str("inputs names model '", name, "', which is not one of the session's applications"));
  }
  return models;
}

}  // namespace

namespace detail {

Shared::Shared(serve::Session& s, EngineOptions o)
    : session(s),
      options(std::move(o)),
      models(session_models(s, options), options.float_width),
      admission(options.limits),
      counters(models.models().size()),
      profile_models(s.spec().profile->models()) {
  server_metadata =
      nlohmann::json{{"name", "servelab"},
                     {"version", options.server_version},
                     {"extensions", {"binary_tensor_data", "model_configuration", "parameters", "statistics"}}}
          .dump();
}

}  // namespace detail

struct HttpEngine::Core {
  asio::io_context ioc;
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(ioc);
  asio::thread_pool forward_pool{1};
  tcp::acceptor acceptor{asio::make_strand(ioc)};
  std::shared_ptr<detail::Shared> shared;
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
  std::mutex stop_mutex;
  bool stopped = false;

  void accept() {
    acceptor.async_accept(asio::make_strand(ioc), [this](boost::system::error_code ec, tcp::socket socket) {
      if (!acceptor.is_open()) return;
      if (!ec) {
        boost::system::error_code ignored;  // small answers go out at once
        socket.set_option(tcp::no_delay(true), ignored);
        auto c = std::make_shared<detail::Connection>(std::move(socket), shared, forward_pool);
        {
          std::lock_guard lock(shared->connections_mutex);
          auto& list = shared->connections;
          list.erase(std::remove_if(list.begin(), list.end(), [](const auto& w) { return w.expired(); }), list.end());
          list.push_back(c);
        }
        c->start();
      }
      accept();
    });
  }
};

HttpEngine::HttpEngine(serve::Session& session, EngineOptions options) : core_(std::make_shared<Core>()) {
  options.limits.check();
  if (options.threads < 1) throw ValueError(str("threads=", options.threads, " must be at least 1"));
  const auto host = options.host;
  const auto port = options.port;
  const int threads = options.threads;
  core_->shared = std::make_shared<detail::Shared>(session, std::move(options));
  auto& acceptor = core_->acceptor;
  boost::system::error_code ec;
  const auto where = str(host.find(':') != std::string::npos ? "[" + host + "]" : host, ":", port);
  tcp::resolver resolver(core_->ioc);
  const auto endpoints = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || endpoints.empty()) throw std::system_error(ec, "HTTP could not resolve " + where);
  const tcp::endpoint endpoint = *endpoints.begin();
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::system_error(ec, "HTTP could not bind " + where);
  core_->port = acceptor.local_endpoint().port();
  core_->accept();
  for (int i = 0; i < threads; ++i) {
    core_->threads.emplace_back([core = core_.get()] {
      for (;;) {
        try {
          core->ioc.run();
          return;
        } catch (...) {  // one handler's failure (its connection is dropped): serve on
        }
      }
    });
  }
}

HttpEngine::~HttpEngine() { stop(std::chrono::steady_clock::duration::zero()); }

std::uint16_t HttpEngine::port() const { return core_->port; }

void HttpEngine::drain() { core_->shared->admission.begin_drain(); }

bool HttpEngine::wait_idle(std::chrono::steady_clock::duration timeout) {
  return core_->shared->admission.wait_idle(timeout);
}

void HttpEngine::stop(std::chrono::steady_clock::duration grace) {
  auto& core = *core_;
  std::lock_guard stopping(core.stop_mutex);
  if (core.stopped) return;
  core.stopped = true;
  auto& shared = *core.shared;
  shared.admission.begin_drain();
  shared.admission.wait_idle(grace);
  shared.stopping = true;
  asio::post(core.acceptor.get_executor(), [&core] {
    boost::system::error_code ignored;
    core.acceptor.close(ignored);
  });
  {
    std::lock_guard lock(shared.connections_mutex);
    for (const auto& weak : shared.connections) {
      if (auto c = weak.lock()) asio::post(c->executor(), [c] { c->fail_waiting(); });
    }
  }
  // Every request taken is answered (or its client gone) before the threads stop.
  const auto deadline = std::chrono::steady_clock::now() + kWriteGrace;
  while (shared.busy > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  core.forward_pool.join();
  {
    std::lock_guard gate(shared.gate);
    shared.open = false;
  }
  core.work.reset();
  core.ioc.stop();
  for (auto& t : core.threads) t.join();
  core.threads.clear();
}

void HttpEngine::add_external(std::int64_t delta) { core_->shared->admission.add_external(delta); }
std::int64_t HttpEngine::load() const { return core_->shared->admission.load(); }
CountersSnapshot HttpEngine::counters() const { return core_->shared->counters.snapshot(); }
std::int64_t HttpEngine::inflight() const { return core_->shared->admission.inflight(); }
std::int64_t HttpEngine::reading() const { return core_->shared->admission.reading(); }

}  // namespace servelab::frontend
