#include "servelab/serve/remote/worker_server.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <chrono>
#include <list>
#include <optional>
#include <string>
#include <thread>

#include "servelab/cluster/service_times.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/serve/remote/protocol.hpp"
#include "servelab/serve/remote/received_inputs.hpp"
#include "servelab/serve/remote/run_profile.hpp"
#include "socket_io.hpp"

namespace servelab::serve::remote {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(20);

// One controller connection and the thread that serves it. The socket is closed only by the
// server's thread, after joining, so a shutdown() from there never meets a reused descriptor.
struct Session {
  explicit Session(asio::io_context& io) : socket(io) {}
  Socket socket;
  std::jthread thread;
  std::atomic<bool> finished{false};
  // When the connection must have sent what it is reading now (steady clock ns; 0: no limit);
  // the server's thread shuts the socket past it, which ends the blocked read.
  std::atomic<std::int64_t> deadline{0};
  void expect_by(std::chrono::milliseconds limit) {
    deadline = std::chrono::duration_cast<std::chrono::nanoseconds>((Clock::now() + limit).time_since_epoch()).count();
  }
};

// Reads a body of `length` bytes into `body` as they arrive, a chunk at a time: a peer that
// announces a large body and sends little makes the worker hold only what it sent.
void read_body(Socket& socket, std::size_t length, Bytes& body, boost::system::error_code& ec) {
  constexpr std::size_t kFirstChunk = std::size_t{64} << 10;
  body.clear();
  while (body.size() < length && !ec) {
    // Chunks as large as what came so far: at most twice the bytes received, few reads.
    const std::size_t have = body.size(), chunk = std::min(std::max(kFirstChunk, have), length - have);
    body.resize(have + chunk);
    asio::read(socket, asio::buffer(body.data() + have, chunk), ec);
  }
}

// "name(a=1)" as the registry would describe it once built (every parameter, in spec order),
// without building it: what a Hello asks for, compared with what this worker hosts.
std::string full_spec(const ExecutorRegistry* registry, const std::string& spec) {
  if (registry == nullptr) return spec;
  const auto [name, args] = parse_spec(spec);
  const auto entry = registry->find(name);
  return Params(entry->name, entry->params, args).describe();
}

// A Unix socket file left by a worker that died: nothing accepts on it any more.
bool stale_socket(const std::string& path, asio::io_context& io) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISSOCK(info.st_mode)) return false;
  Socket probe(io);
  boost::system::error_code ec;
  probe.connect(Protocol::endpoint(asio::local::stream_protocol::endpoint(path)), ec);
  return ec == asio::error::connection_refused;
}

// After an error reply: stops sending and reads what the peer still sends (bounded in bytes and
// time) before the socket closes. Closing with unread bytes would reset the connection, and over
// TCP a reset may destroy the error reply before the peer reads it.
void close_gently(Socket& socket) {
  boost::system::error_code ignored;
  socket.shutdown(Socket::shutdown_send, ignored);
  const int fd = socket.native_handle();
  std::array<char, 4096> sink{};
  std::size_t total = 0;
  const auto until = Clock::now() + std::chrono::milliseconds(500);
  while (total < (std::size_t{1} << 20) && Clock::now() < until) {
    pollfd ready{fd, POLLIN, 0};
    const int events = ::poll(&ready, 1, 50);
    if (events < 0) return;
    if (events == 0) continue;
    const auto n = ::recv(fd, sink.data(), sink.size(), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return;
    if (n > 0) total += static_cast<std::size_t>(n);
  }
}

}  // namespace

struct WorkerServer::Impl {
  std::shared_ptr<const ExecutorBuilder> builder;
  const ExecutorRegistry* registry = nullptr;
  Address listen;
  TakesInputs inputs = TakesInputs::None;
  std::int64_t width = 0;
  // The hosted executor waits the latencies of a run's profile (emulated): it is built once the
  // controller has sent RunProfile.
  bool needs_profile = false;
  std::string bound;
  asio::io_context io;
  asio::basic_socket_acceptor<Protocol> acceptor{io};
  std::atomic<bool> stopping{false};
  std::list<std::unique_ptr<Session>> sessions;
  std::int32_t max_connections = 64;
  std::chrono::milliseconds hello_timeout{10'000}, message_timeout{30'000};

  void bind(const WorkerServerOptions& options) {
    listen = options.listen;
    if (options.max_connections < 1) {
      throw ValueError(str("worker: max_connections=", options.max_connections, " must be >= 1"));
    }
    if (options.hello_timeout.count() < 1 || options.message_timeout.count() < 1) {
      throw ValueError(str("worker: hello_timeout=", options.hello_timeout.count(),
                           " ms and message_timeout=", options.message_timeout.count(), " ms must be >= 1 ms"));
    }
    max_connections = options.max_connections;
    hello_timeout = options.hello_timeout;
    message_timeout = options.message_timeout;
    inputs = options.inputs;
    width = options.width;
    needs_profile = parse_spec(builder->describe()).first == "emulated";
    if (inputs == TakesInputs::FloatRows && width < 1) {
      throw ValueError(str("worker: width=", width, " must be >= 1 for an executor that takes float rows"));
    }
    if (!listen.loopback() && !options.allow_remote) {
      throw ValueError(str("listen='", listen.text(),
                           "' is not a loopback address: the protocol has no authentication and a worker runs any "
                           "batch sent to it, so binding it needs allow_remote=True (servelab worker --allow-remote)"));
    }
    if (listen.kind == Address::Kind::Unix && stale_socket(listen.path, io)) ::unlink(listen.path.c_str());
    const auto endpoint = endpoint_of(listen, io);
    boost::system::error_code ec;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec && listen.kind == Address::Kind::Tcp) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw RuntimeError(str("listen='", listen.text(), "': cannot listen: ", ec.message()));
    if (listen.kind == Address::Kind::Tcp) listen.port = port_of(acceptor.local_endpoint());
    bound = listen.text();
  }

  void serve() {
    stopping = false;
    std::unique_ptr<Session> pending;
    bool accepted = false;
    boost::system::error_code accept_error;
    try {
      while (!stopping) {
        if (!pending) {
          pending = std::make_unique<Session>(io);
          accepted = false;
          acceptor.async_accept(pending->socket, [&](const boost::system::error_code& ec) {
            accept_error = ec;
            accepted = true;
          });
        }
        io.restart();
        io.run_one_for(kPoll);
        if (accepted) {
          if (!accept_error) start(std::move(pending));
          pending.reset();
          if (accept_error) std::this_thread::sleep_for(kPoll);  // e.g. out of descriptors: retry later
        }
        reap();
        expire();
        core::check_interrupt();
      }
    } catch (...) {
      end(pending);
      throw;
    }
    end(pending);
  }

  // Cancels the pending accept, then stops and joins every session.
  void end(std::unique_ptr<Session>& pending) {
    boost::system::error_code ignored;
    acceptor.cancel(ignored);
    io.restart();
    io.run();  // the cancelled accept's handler refers to serve()'s locals
    pending.reset();
    for (auto& s : sessions) {
      s->thread.request_stop();                          // a running batch may return early
      ::shutdown(s->socket.native_handle(), SHUT_RDWR);  // wakes a blocked read
    }
    sessions.clear();  // joins each thread, then closes its socket
  }

  void reap() {
    sessions.remove_if([](const std::unique_ptr<Session>& s) { return s->finished.load(); });
  }

  // Shuts the sockets of connections past their deadline (their threads then end and are reaped).
  void expire() {
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
    for (auto& s : sessions) {
      const auto deadline = s->deadline.load();
      if (deadline > 0 && now > deadline && !s->finished) {
        s->deadline = 0;
        ::shutdown(s->socket.native_handle(), SHUT_RDWR);
      }
    }
  }

  void start(std::unique_ptr<Session> session) {
    set_no_delay(session->socket, listen);
    reap();
    if (static_cast<std::int64_t>(sessions.size()) >= max_connections) {  // refused, on this thread
      HelloReply reply;
      reply.status = Status::Refused;
      reply.text = str("the worker serves at most max_connections=", max_connections,
                       " connections at once; try again when one ends");
      Bytes out;
      encode(reply, out);
      boost::system::error_code ignored;
      session->socket.non_blocking(true, ignored);  // never wait on a peer that does not read
      asio::write(session->socket, asio::buffer(out), ignored);
      session->socket.shutdown(Socket::shutdown_both, ignored);
      return;
    }
    session->expect_by(hello_timeout);
    Session* s = session.get();
    sessions.push_back(std::move(session));
    s->thread = std::jthread([this, s](std::stop_token stop) {
      try {
        run_session(*s, stop);
      } catch (...) {  // a connection never takes the worker process down
      }
      boost::system::error_code ignored;
      s->socket.shutdown(Socket::shutdown_both, ignored);
      s->finished = true;
    });
  }

  // Reads messages until the controller closes the connection, the server stops, or a message
  // breaks the protocol (answered with a Malformed reply first).
  void run_session(Session& s, const std::stop_token& stop) {
    std::array<std::uint8_t, kHeaderBytes> header_bytes{};
    Bytes body, out;
    std::unique_ptr<Executor> executor;
    std::optional<Rng> rng;
    Hello hello;
    bool awaiting_profile = false;        // hello answered, the executor waits for RunProfile
    std::optional<cluster::RunSpec> run;  // what RunProfile gave, kept while the executor lives
    const auto send = [&] {
      boost::system::error_code ec;
      asio::write(s.socket, asio::buffer(out), ec);
      return !ec;
    };
    const auto reject = [&](std::uint64_t batch, const std::string& why) {
      encode(batch, BatchReply{Status::Malformed, -1, -1, why}, out);
      if (send()) close_gently(s.socket);
    };
    const auto reply_template = [&] {
      HelloReply reply;
      reply.inputs = inputs;
      reply.width = width;
      reply.needs_profile = needs_profile;
      return reply;
    };
    // Builds this connection's executor (with the run's profile when it needs one) and answers the
    // hello; false when the connection ends (refused, or the reply could not be sent).
    const auto build_and_reply = [&](const cluster::RunSpec* run_spec) {
      HelloReply reply = reply_template();
      reply.needs_profile = false;
      try {
        executor =
            builder->build(ExecutorContext{static_cast<sched::WorkerId>(hello.worker),
                                           static_cast<sched::HardwareId>(hello.hardware), run_spec, hello.seed});
        if (!executor) throw RuntimeError(str(builder->describe(), ": build() returned no executor"));
        rng.emplace(cluster::service_stream(hello.seed, static_cast<std::int32_t>(hello.worker)));
        reply.text = executor->describe();
        reply.knobs = executor->knobs();
      } catch (const std::exception& e) {
        executor.reset();
        reply.status = Status::Refused;
        reply.text = e.what();
      }
      encode(reply, out);
      return send() && reply.status == Status::Ok;
    };
    for (;;) {
      boost::system::error_code ec;
      // Before the hello, the hello deadline runs; between messages of a connection that has
      // said hello, none (a run may idle); within a message, the message deadline.
      if (executor || awaiting_profile) s.deadline = 0;
      asio::read(s.socket, asio::buffer(header_bytes), ec);
      if (ec || stop.stop_requested()) return;
      Header header;
      try {
        header = decode_header(header_bytes);
      } catch (const ProtocolError& e) {
        return reject(0, e.what());
      }
      if (executor || awaiting_profile) s.expect_by(message_timeout);
      read_body(s.socket, header.length, body, ec);
      if (ec || stop.stop_requested()) return;
      s.deadline = 0;  // the message is in: handling it (building an executor, a batch) has no limit
      const auto received = Clock::now();
      try {
        if (header.type == MessageType::Hello) {
          if (executor || awaiting_profile) throw ProtocolError("a second hello on one connection");
          hello = decode_hello(body);
          HelloReply reply = reply_template();
          try {
            if (!hello.executor.empty()) {
              const auto wanted = full_spec(registry, hello.executor);
              if (wanted != builder->describe()) {
                throw ValueError(str("it hosts ", builder->describe(), ", not ", wanted));
              }
            }
            if (needs_profile && !hello.probe && !hello.offers_profile) {
              throw ValueError(str(builder->describe(),
                                   " waits the latencies of a run's profile, which this "
                                   "controller does not send (it is not a serving run)"));
            }
          } catch (const std::exception& e) {
            reply.status = Status::Refused;
            reply.text = e.what();
            encode(reply, out);
            send();
            return;
          }
          if (hello.probe || needs_profile) {  // nothing built yet; a probe's connection ends here
            reply.text = builder->describe();
            encode(reply, out);
            if (!send() || hello.probe) return;
            awaiting_profile = true;
          } else if (!build_and_reply(nullptr)) {
            return;
          }
        } else if (header.type == MessageType::RunProfile) {
          if (!awaiting_profile) throw ProtocolError("a run profile the worker did not ask for");
          const RunProfile message = decode_run_profile(body);
          awaiting_profile = false;
          run.emplace();
          run->profile = message.profile;
          run->service_statistic = message.service;
          run->seed = hello.seed;
          if (!build_and_reply(&*run)) return;
        } else if (header.type == MessageType::Batch) {
          if (!executor) throw ProtocolError("a batch before hello");
          Batch batch = decode_batch(body);
          std::optional<ReceivedInputs> inputs_sent;  // the run's own inputs, when the batch carries them
          if (!batch.inputs.empty()) inputs_sent.emplace(batch.queries, std::move(batch.inputs));
          BatchReply reply;
          ExecReport report;
          std::optional<QueryOutputs> outputs;  // what the executor writes, when the controller asks
          if (batch.wants_outputs) outputs.emplace();
          const auto start = Clock::now();
          try {
            // A controller sends only the knobs the executor named in its hello reply: any other
            // would be ignored without a word, so the batch fails naming it.
            const auto knobs = executor->knobs();
            for (const auto& [name, value] : batch.config) {
              if (std::find(knobs.begin(), knobs.end(), name) == knobs.end()) {
                std::string known;
                for (const auto& k : knobs) known += (known.empty() ? "" : ", ") + k;
                throw ValueError(str(executor->describe(), ": ", name, "=", value, " is not one of its knobs (",
                                     known.empty() ? "it has none" : known, ")"));
              }
            }
            executor->run(ExecRequest{
                static_cast<sched::WorkerId>(hello.worker), static_cast<sched::HardwareId>(hello.hardware),
                static_cast<sched::ModelId>(batch.model), batch.items, batch.queries, batch.config, *rng, stop,
                batch.sizes, &report, inputs_sent ? &*inputs_sent : nullptr, outputs ? &*outputs : nullptr});
            const Nanos wall = (Clock::now() - start).count();
            reply.exec_ns = report.compute >= 0 ? report.compute : wall;
            if (outputs && outputs->size() > 0) {
              reply.outputs.reserve(batch.queries.size());
              for (const auto q : batch.queries) reply.outputs.push_back(outputs->take(q));
            }
          } catch (const std::exception& e) {
            reply.status = Status::ExecutorFailed;
            reply.error = e.what();
          } catch (...) {
            reply.status = Status::ExecutorFailed;
            reply.error = "an exception that is not a std::exception";
          }
          if (stop.stop_requested()) return;
          reply.worker_ns = (Clock::now() - received).count();
          try {
            encode(header.batch, reply, out);
          } catch (const ValueError& e) {  // outputs too large for one message: the batch fails
            reply.status = Status::ExecutorFailed;
            reply.error = e.what();
            reply.outputs.clear();
            encode(header.batch, reply, out);
          }
          if (!send()) return;
        } else {
          throw ProtocolError(str("type=", static_cast<int>(header.type), " is a reply, never sent to a worker"));
        }
      } catch (const ProtocolError& e) {
        return reject(header.batch, e.what());
      }
    }
  }
};

WorkerServer::WorkerServer(std::shared_ptr<const ExecutorBuilder> builder, const WorkerServerOptions& options,
                           const ExecutorRegistry* registry)
    : impl_(std::make_unique<Impl>()) {
  if (!builder) throw ValueError("worker: executor is None");
  impl_->builder = std::move(builder);
  impl_->registry = registry;
  impl_->bind(options);
}

WorkerServer::~WorkerServer() {
  std::unique_ptr<Session> none;
  impl_->end(none);
  boost::system::error_code ignored;
  impl_->acceptor.close(ignored);
  if (impl_->listen.kind == Address::Kind::Unix) ::unlink(impl_->listen.path.c_str());
}

std::string WorkerServer::address() const { return impl_->bound; }
std::string WorkerServer::executor() const { return impl_->builder->describe(); }
void WorkerServer::serve() { impl_->serve(); }
void WorkerServer::stop() { impl_->stopping = true; }

}  // namespace servelab::serve::remote
