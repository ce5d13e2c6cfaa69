#include "connection.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>

#include "servelab/core/errors.hpp"
#include "servelab/frontend/content_encoding.hpp"
#include "servelab/frontend/py_text.hpp"

namespace servelab::frontend::detail {
namespace {

using nlohmann::json;

constexpr auto kIdleKeepAlive = std::chrono::seconds(75);  // as aiohttp closes idle connections
constexpr auto kLinger = std::chrono::seconds(2);          // reading a refused body before closing
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
constexpr const char* kHeaderLength = "Inference-Header-Content-Length";

// Compares in time independent of where they differ.
bool same_secret(std::string_view a, std::string_view b) {
  std::size_t diff = a.size() ^ b.size();
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

std::chrono::steady_clock::duration seconds(double s) {
  // At most about 31 years: longer would overflow the clock's nanoseconds.
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::min(s, 1e9)));
}

}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, std::shared_ptr<Shared> shared, asio::thread_pool& forward_pool)
    : stream_(std::move(socket)),
      executor_(stream_.get_executor()),
      timer_(executor_),
      shared_(std::move(shared)),
      forward_pool_(forward_pool) {}

Connection::~Connection() {
  if (busy_) --shared_->busy;
  if (reading_counted_) shared_->admission.done_reading();
}

void Connection::start() {
  asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_header(); });
}

void Connection::read_header() {
  if (shared_->stopping) return close();
  parser_.emplace();
  parser_->header_limit(kHeaderLimit);
  // Unlimited until the route has checked Content-Length (boost::none would refuse any body).
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  stream_.expires_after(kIdleKeepAlive);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
}

void Connection::on_header(beast::error_code ec) {
  stream_.expires_never();
  if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted ||
      ec == asio::error::connection_reset || ec == asio::error::eof) {
    return close();
  }
  busy_ = true;
  ++shared_->busy;
  if (ec) return reply_error(400, "the request is not valid HTTP: " + ec.message(), true);
  dispatch();
}

void Connection::dispatch() {
  auto& req = parser_->get();
  const auto& token = shared_->options.token;
  if (token) {
    const auto it = req.find(http::field::authorization);
    if (it == req.end() || !same_secret(sv(it->value()), "Bearer " + *token)) {
      const std::string what = it == req.end() ? "no Authorization" : "a wrong Authorization";
      discard_ = true;
      after_discard_.emplace(ErrorKind::Unauthenticated,
                             what + ": this server requires 'Authorization: Bearer <token>'");
      return read_body();
    }
  }
  route_ = parse_route(sv(req.method_string()), sv(req.target()));
  model_ = -1;
  if (route_.kind == RouteKind::Infer) {
    try {
      model_ = shared_->models.check(route_.model, route_.version);  // an unknown model first
    } catch (const FrontendError& e) {
      discard_ = true;
      after_discard_ = e;
      return read_body();
    }
    const auto length = parser_->content_length();
    const auto limit = shared_->admission.limits().max_body_bytes;
    if (length && *length > static_cast<std::uint64_t>(limit)) {
      return refuse({ErrorKind::TooLarge,
                     str("the request body of ", *length, " bytes is over the limit max_body_bytes=", limit)},
                    std::nullopt, true);
    }
    try {
      shared_->admission.start_reading();
    } catch (const FrontendError& e) {
      return refuse(e, std::nullopt, true);
    }
    reading_counted_ = true;
  }
  read_body();
}

void Connection::read_body() {
  const auto limit = shared_->admission.limits().max_body_bytes;
  parser_->body_limit(limit);
  body_late_ = false;
  if (parser_->is_done()) return on_body({});
  if (discard_) {
    // A refused request's body is read only when small and of known length; else the
    // connection closes after the answer.
    const auto length = parser_->content_length();
    if (!length || *length > static_cast<std::uint64_t>(limit)) {
      discard_ = false;
      const auto e = *after_discard_;
      after_discard_.reset();
      return refuse(e, std::nullopt, true);
    }
  }
  start_timer(nullptr);
  auto read = [self = shared_from_this()] {
    http::async_read(self->stream_, self->buffer_, *self->parser_,
                     [self](beast::error_code ec, std::size_t) { self->on_body(ec); });
  };
  if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
    auto interim = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
    http::async_write(stream_, *interim, [interim, read](beast::error_code, std::size_t) { read(); });
    return;
  }
  read();
}

void Connection::start_timer(void (Connection::*on_expiry)(std::uint64_t)) {
  timer_.expires_after(seconds(shared_->admission.limits().request_timeout_s));
  timer_.async_wait(
      [self = shared_from_this(), on_expiry, generation = generation_, epoch = ++timer_epoch_](beast::error_code ec) {
        if (ec || epoch != self->timer_epoch_) return;  // cancelled, or expired as it was cancelled
        if (on_expiry) return (self.get()->*on_expiry)(generation);
        // The body is late: stop reading it (on_body answers 504).
        self->body_late_ = true;
        self->stream_.socket().cancel();
      });
}

void Connection::on_body(beast::error_code ec) {
  stop_timer();
  if (reading_counted_) {
    reading_counted_ = false;
    shared_->admission.done_reading();
  }
  const auto limits = shared_->admission.limits();
  if (body_late_) {
    return refuse({ErrorKind::Timeout,
                   "the request body did not arrive within request_timeout_s=" + py_g(limits.request_timeout_s)},
                  std::nullopt, true);
  }
  if (ec == http::error::body_limit) {
    return refuse(
        {ErrorKind::TooLarge, str("the request body is over the limit max_body_bytes=", limits.max_body_bytes)},
        std::nullopt, true);
  }
  if (ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
      ec == asio::error::connection_reset) {
    // The client left halfway through its body: nobody to answer.
    if (route_.kind == RouteKind::Infer && !discard_) shared_->counters.refused("disconnected");
    return close();
  }
  if (ec) {
    return refuse({ErrorKind::Invalid, "the request body could not be read: " + ec.message()}, std::nullopt, true);
  }
  if (discard_) {
    discard_ = false;
    const auto e = *after_discard_;
    after_discard_.reset();
    return refuse(e, std::nullopt);
  }
  if (route_.kind == RouteKind::Infer) return infer_body();
  answer_simple();
}

void Connection::answer_simple() {
  auto& req = parser_->get();
  auto& s = *shared_;
  try {
    switch (route_.kind) {
      case RouteKind::None:
        return reply_error(
            404, "no route " + std::string(sv(req.method_string())) + " " + std::string(target_path(sv(req.target()))));
      case RouteKind::WrongMethod:
        return reply_error(405, "method " + std::string(sv(req.method_string())) + " is not allowed on " +
                                    std::string(target_path(sv(req.target()))));
      case RouteKind::Live:
        return reply(200, "", "text/plain");
      case RouteKind::Ready:
        return reply(s.admission.draining() ? 503 : 200, "", "text/plain");
      case RouteKind::ServerMetadata:
        return reply(200, s.server_metadata, "application/json");
      case RouteKind::ModelMetadata:
        return reply(200, s.models.metadata(s.models.check(route_.model, route_.version)).dump(), "application/json");
      case RouteKind::ModelReady:
        s.models.check(route_.model, route_.version);
        return reply(s.admission.draining() ? 503 : 200, "", "text/plain");
      case RouteKind::ModelConfig:
        return reply(200, s.models.config(s.models.check(route_.model, route_.version)).dump(), "application/json");
      case RouteKind::RepositoryIndex: {
        json index = json::array();
        const char* state = s.admission.draining() ? "UNAVAILABLE" : "READY";
        for (const auto& m : s.models.models())
          index.push_back({{"name", m.name}, {"version", kVersion}, {"state", state}});
        return reply(200, index.dump(), "application/json");
      }
      case RouteKind::Forwarded:
        return forward();
      case RouteKind::Infer:
        break;
    }
  } catch (const FrontendError& e) {
    return refuse(e, std::nullopt);
  }
}

void Connection::forward() {
  if (!shared_->options.forward) {
    auto& req = parser_->get();
    return reply_error(
        404, "no route " + std::string(sv(req.method_string())) + " " + std::string(target_path(sv(req.target()))));
  }
  auto& req = parser_->get();
  asio::post(forward_pool_, [self = shared_from_this(), method = std::string(sv(req.method_string())),
                             target = std::string(sv(req.target()))] {
    ForwardedAnswer a;
    try {
      a = self->shared_->options.forward(method, target);
    } catch (const std::exception& e) {
      a = {500, "application/json",
           json{{"error", std::string("the front-end failed: ") + e.what()}}.dump(-1, ' ', false,
                                                                                  json::error_handler_t::replace)};
    }
    asio::post(self->executor(), [self, a = std::move(a)]() mutable {
      self->reply(a.status, std::move(a.body), a.content_type.c_str());
    });
  });
}

void Connection::infer_body() {
  auto& req = parser_->get();
  std::optional<std::int64_t> header_length;
  InferRequest request;
  try {
    const auto it = req.find(kHeaderLength);
    if (it != req.end()) header_length = parse_header_length(sv(it->value()));
  } catch (const FrontendError& e) {
    return refuse(e, std::nullopt);
  }
  try {
    req.body() = decode_content(std::move(req.body()), sv(req[http::field::content_encoding]),
                                shared_->admission.limits().max_body_bytes);
  } catch (const FrontendError& e) {
    return refuse(e, std::nullopt);
  }
  try {
    request = decode_request(req.body(), header_length);
  } catch (const FrontendError& e) {
    return refuse(e, model_);
  }
  req.body().clear();
  req.body().shrink_to_fit();
  submit(model_, std::move(request));
}

void Connection::submit(std::int32_t model, InferRequest request) {
  auto& s = *shared_;
  SessionQuery q;
  try {
    q = s.models.query(model, request);
    s.admission.start_inflight();
  } catch (const FrontendError& e) {
    return refuse(e, model);
  }
  received_ = std::chrono::steady_clock::now();
  const auto generation = ++generation_;
  s.counters.accepted(model);
  auto done = [shared = shared_, weak = weak_from_this(), model, size = q.size, received = received_,
               generation](serve::Outcome&& o) {
    // On the serving loop's thread: count, then hand the answer to the connection's strand.
    shared->admission.done_inflight();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - received).count();
    shared->counters.answered(model, o, wall, size);
    std::lock_guard gate(shared->gate);
    if (!shared->open) return;
    if (auto self = weak.lock()) {
      asio::post(self->executor(), [self, o = std::move(o), generation]() mutable { self->on_outcome(generation, o); });
    }
  };
  pending_ = std::move(request);
  waiting_ = true;
  try {
    s.session.submit(q.app, q.size, std::move(q.input), std::move(done), q.slo, q.accuracy_floor);
  } catch (const std::exception& e) {
    waiting_ = false;
    s.admission.done_inflight();
    s.counters.withdrawn(model);
    const std::string name = py_repr(model_name());
    if (dynamic_cast<const ValueError*>(&e)) return refuse(invalid("model " + name + ": " + e.what()), model);
    if (dynamic_cast<const RuntimeError*>(&e)) {
      return refuse({ErrorKind::Unavailable, std::string("the session is closed: ") + e.what()}, model);
    }
    return refuse({ErrorKind::Internal, "model " + name + ": submit failed: " + e.what()}, model);
  }
  start_timer(&Connection::on_timeout);
}

void Connection::stop_timer() {
  ++timer_epoch_;
  timer_.cancel();
}

std::string Connection::model_name() const {
  return model_ >= 0 ? shared_->models.models()[model_].name : route_.model;
}

void Connection::on_timeout(std::uint64_t generation) {
  if (!waiting_ || generation != generation_) return;
  waiting_ = false;
  refuse({ErrorKind::Timeout, "model " + py_repr(model_name()) + ": no outcome within request_timeout_s=" +
                                  py_g(shared_->admission.limits().request_timeout_s) +
                                  "; the query stays queued and is counted when it ends"},
         std::nullopt);
}

void Connection::on_outcome(std::uint64_t generation, serve::Outcome& o) {
  if (!waiting_ || generation != generation_) return;  // answered already (timeout, stopping)
  waiting_ = false;
  stop_timer();
  const std::string name = model_name();
  if (o.status != cluster::QueryStatus::Completed) {
    const std::string reason = o.reason.empty() ? "no reason given" : o.reason;
    auto kind = ErrorKind::Unavailable;
    if (reason.rfind("executor failed", 0) == 0) {
      // The executor's refusal of the input this request sent is the client's error.
      kind = reason.find(str("submitted for query ", o.id, " ")) != std::string::npos ? ErrorKind::Invalid
                                                                                      : ErrorKind::Internal;
    }
    const FrontendError e(kind, str("model ", py_repr(name), ": query ", o.id, " dropped: ", reason));
    return reply_error(http_status(e.kind()), e.what());  // counted as a failure with the outcome
  }
  const auto& models = shared_->profile_models;
  const json parameters = {
      {"servelab_query", o.id},
      {"servelab_late", o.finish > o.deadline},
      {"servelab_worker", o.worker},
      {"servelab_model", o.model >= 0 && o.model < static_cast<std::int32_t>(models.size()) ? models[o.model] : ""},
      {"servelab_queue_us", static_cast<double>(o.start - o.arrival) / 1e3},
      {"servelab_compute_us", static_cast<double>(o.finish - o.start) / 1e3},
  };
  std::vector<OutputTensor> outputs;
  if (o.output) outputs.push_back({kOutputName, &*o.output});
  auto encoded = encode_response(name, kVersion, pending_, outputs, parameters);
  pending_ = {};
  if (encoded.json_length) {
    return reply(200, std::move(encoded.body), "application/octet-stream", encoded.json_length);
  }
  reply(200, std::move(encoded.body), "application/json");
}

void Connection::fail_waiting() {
  if (!waiting_) return;
  waiting_ = false;
  stop_timer();
  // Counted when its outcome comes.
  reply_error(503, "the server stopped before this request's outcome; its query still runs in the session");
}

void Connection::refuse(const FrontendError& e, std::optional<std::int32_t> model, bool close) {
  shared_->counters.refused(std::string(kind_name(e.kind())), model);
  reply_error(http_status(e.kind()), e.what(), close);
}

void Connection::reply_error(int status, const std::string& message, bool close) {
  // Messages quote what the client sent, which need not be UTF-8.
  reply(status, json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace), "application/json",
        std::nullopt, close);
}

void Connection::reply(int status, std::string body, const char* content_type, std::optional<std::size_t> header_length,
                       bool close) {
  const bool keep_alive = !close && parser_ && parser_->get().keep_alive() && !shared_->stopping;
  response_ = {};
  response_.result(static_cast<unsigned>(status));
  response_.version(11);
  response_.set(http::field::content_type, content_type);
  if (header_length) response_.set(kHeaderLength, std::to_string(*header_length));
  response_.keep_alive(keep_alive);
  response_.body() = std::move(body);
  response_.prepare_payload();
  if (parser_ && parser_->get().method() == http::verb::head) response_.body().clear();  // its length stays
  http::async_write(stream_, response_, [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
    self->on_write(ec, !keep_alive);
  });
}

void Connection::on_write(beast::error_code ec, bool close_after) {
  if (busy_) {
    busy_ = false;
    --shared_->busy;
  }
  if (ec) return close();
  if (close_after) return linger();
  read_header();
}

void Connection::linger() {
  // Closing with unread input would reset the connection before the client read the answer
  // (it may still be sending the body refused): stop sending, read and drop what comes for a
  // while, then close.
  beast::error_code ignored;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  stream_.expires_after(kLinger);
  auto drop = std::make_shared<std::array<char, 4096>>();
  struct Drain {
    std::shared_ptr<Connection> self;
    std::shared_ptr<std::array<char, 4096>> buffer;
    void operator()(beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->stream_.async_read_some(asio::buffer(*buffer), std::move(*this));
    }
  };
  stream_.async_read_some(asio::buffer(*drop), Drain{shared_from_this(), drop});
}

void Connection::close() {
  beast::error_code ignored;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  stream_.socket().close(ignored);
}

}  // namespace servelab::frontend::detail
