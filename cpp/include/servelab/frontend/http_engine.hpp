// The Open Inference Protocol's HTTP/REST front-end in C++: health, server and model metadata,
// readiness, model config, repository index and inference (JSON and binary) answered on an asio
// io_context run by a few threads, each inference submitted to the serve::Session directly (no
// interpreter on the request path). It answers as the Python engine (servelab/frontend/
// http_server.py): the same routes, status codes, {"error": message} bodies, token, limits.
//
// Routes it does not serve itself (GET /metrics and the statistics) go to `forward`, called on a
// thread of its own (they read the Python side's live metrics, which count this engine's requests
// too through counters()).
//
// Every request is answered: stop() refuses new ones, waits up to its grace for those in flight,
// answers any still waiting with 503 (their queries run on in the session) and closes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "servelab/frontend/admission.hpp"
#include "servelab/frontend/live_counters.hpp"
#include "servelab/frontend/models.hpp"
#include "servelab/serve/session.hpp"

namespace servelab::frontend {

struct ForwardedAnswer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

struct EngineOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;            // 0: any free port
  int threads = 2;                   // running the io_context
  std::optional<std::string> token;  // set: every request needs "Authorization: Bearer <token>"
  Limits limits;
  std::map<std::string, InputSpec> inputs;  // per model (application)
  std::optional<std::int64_t> float_width;  // see ModelTable
  std::string server_version;               // GET /v2's version
  // (method, target) -> the answer, for the routes the engine does not serve; null: 404.
  std::function<ForwardedAnswer(const std::string&, const std::string&)> forward;
};

class HttpEngine {
 public:
  // Binds (OSError-like RuntimeError naming the address when it cannot) and starts serving.
  // `session` must outlive the engine.
  HttpEngine(serve::Session& session, EngineOptions options);
  ~HttpEngine();
  HttpEngine(const HttpEngine&) = delete;
  HttpEngine& operator=(const HttpEngine&) = delete;

  std::uint16_t port() const;
  // New inference requests are refused (503), ready turns false.
  void drain();
  // Waits until no accepted request awaits its outcome, at most `timeout`; true if so.
  bool wait_idle(std::chrono::steady_clock::duration timeout);
  // drain(), wait_idle(grace), answer those still waiting with 503, close. Idempotent.
  void stop(std::chrono::steady_clock::duration grace);

  // max_concurrent shared with another engine (Admission::add_external, load).
  void add_external(std::int64_t delta);
  std::int64_t load() const;

  CountersSnapshot counters() const;
  std::int64_t inflight() const;
  std::int64_t reading() const;

  struct Core;

 private:
  std::shared_ptr<Core> core_;
};

}  // namespace servelab::frontend
