// One client connection of the HTTP engine: reads a request, answers it, reads the next
// (keep-alive). Everything runs on the connection's strand; the session's outcome callback only
// posts to it. Internal to the engine.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

// <utility> first: Boost 1.74's asio/awaitable.hpp uses std::exchange without including it.
// clang-format off
#include <utility>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on

#include "servelab/frontend/http_engine.hpp"
#include "servelab/frontend/routes.hpp"

namespace servelab::frontend::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

class Connection;

// Beast's string_view (boost's, in Boost 1.74) as the standard one.
inline std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

// What the engine, its connections and the session's callbacks share. Callbacks may outlive the
// engine (a query answered after it stopped): they hold this, never the engine or a connection.
struct Shared {
  Shared(serve::Session& session, EngineOptions options);

  serve::Session& session;
  EngineOptions options;
  ModelTable models;
  Admission admission;
  LiveCounters counters;
  std::vector<std::string> profile_models;  // the session's model names, by model id
  std::string server_metadata;              // GET /v2's body

  // Open while the io_context runs: a callback posts to a connection only under it.
  std::mutex gate;
  bool open = true;
  std::atomic<bool> stopping{false};
  std::atomic<int> busy{0};  // requests taken whose answer is not written yet

  std::mutex connections_mutex;
  std::vector<std::weak_ptr<Connection>> connections;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::ip::tcp::socket socket, std::shared_ptr<Shared> shared, asio::thread_pool& forward_pool);
  ~Connection();
  void start();
  // Stopping: a request still waiting for its outcome is answered 503 now. Post to the strand.
  void fail_waiting();
  // Its strand; read from any thread (set once, at construction).
  const asio::any_io_executor& executor() const { return executor_; }

 private:
  void read_header();
  void on_header(beast::error_code ec);
  void dispatch();
  void read_body();
  void on_body(beast::error_code ec);
  void answer_simple();
  void infer_body();
  void submit(std::int32_t model, InferRequest request);
  void on_outcome(std::uint64_t generation, serve::Outcome& outcome);
  void on_timeout(std::uint64_t generation);
  void forward();
  void refuse(const FrontendError& e, std::optional<std::int32_t> model, bool close = false);
  void reply_error(int status, const std::string& message, bool close = false);
  void reply(int status, std::string body, const char* content_type, std::optional<std::size_t> header_length = {},
             bool close = false);
  void on_write(beast::error_code ec, bool close);
  void linger();  // closes after reading (and dropping) what the client still sends
  void close();
  // on_expiry(generation) after request_timeout_s; null: the body is late (on_body answers 504).
  void start_timer(void (Connection::*on_expiry)(std::uint64_t));
  void stop_timer();
  std::string model_name() const;

  beast::tcp_stream stream_;
  const asio::any_io_executor executor_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  asio::steady_timer timer_;
  std::shared_ptr<Shared> shared_;
  asio::thread_pool& forward_pool_;

  Route route_;
  std::int32_t model_ = -1;
  bool reading_counted_ = false;  // holds a place among max_concurrent while its body arrives
  bool body_late_ = false;        // the body did not arrive in time
  bool discard_ = false;          // the body is read only to keep the connection in step
  std::optional<FrontendError> after_discard_;
  bool waiting_ = false;           // an inference awaits its outcome
  bool busy_ = false;              // counted in shared_->busy
  std::uint64_t timer_epoch_ = 0;  // a timer's expiry counts only if no stop_timer() came since
  std::uint64_t generation_ = 0;   // of the request waiting (stale outcomes and timers are ignored)
  InferRequest pending_;           // its id and output choices
  std::chrono::steady_clock::time_point received_;
};

}  // namespace servelab::frontend::detail
