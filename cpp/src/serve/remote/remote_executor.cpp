#include "servelab/serve/remote/remote_executor.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <optional>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/serve/remote/address.hpp"
#include "servelab/serve/remote/protocol.hpp"
#include "servelab/serve/remote/run_profile.hpp"
#include "socket_io.hpp"

namespace servelab::serve::remote {
namespace {

using Clock = std::chrono::steady_clock;
// How often a wait looks at the stop token and Ctrl-C.
constexpr auto kPoll = std::chrono::milliseconds(20);

struct RemoteSpec {
  Address address;
  std::string executor;
  Nanos connect_timeout = 0, reply_timeout = 0;
  std::int64_t input_bytes_per_item = 0;
  std::string describe;
};

// How a wait for the worker ended.
struct Outcome {
  enum Kind { Done, TimedOut, Stopped, Failed } kind = Done;
  std::string error;  // Failed: the socket's error message
};

// One connection to a worker process. Asynchronous operations on a private io_context, driven by
// the calling thread until they complete, a deadline passes or the run stops: Asio's blocking
// calls have no timeouts.
class Connection {
 public:
  explicit Connection(const Address& address) : address_(address), socket_(io_) {}
  ~Connection() { abort(); }

  Outcome connect(Clock::time_point deadline) {
    const auto endpoint = endpoint_of(address_, io_);
    auto outcome = await([&](auto handler) { socket_.async_connect(endpoint, handler); }, deadline, {});
    if (outcome.kind == Outcome::Done) set_no_delay(socket_, address_);
    return outcome;
  }

  // Sends `request` and reads one reply frame into `header` and `body`.
  Outcome exchange(const Bytes& request, Header& header, Bytes& body, Clock::time_point deadline,
                   const std::stop_token& stop) {
    auto outcome = await([&](auto h) { asio::async_write(socket_, asio::buffer(request), h); }, deadline, stop);
    if (outcome.kind != Outcome::Done) return outcome;
    outcome = await([&](auto h) { asio::async_read(socket_, asio::buffer(header_bytes_), h); }, deadline, stop);
    if (outcome.kind != Outcome::Done) return outcome;
    header = decode_header(header_bytes_);  // ProtocolError: the caller gives up the connection
    body.resize(header.length);
    return await([&](auto h) { asio::async_read(socket_, asio::buffer(body), h); }, deadline, stop);
  }

  // Closes the socket; any later operation fails at once.
  void abort() {
    boost::system::error_code ignored;
    socket_.close(ignored);
    io_.restart();
    io_.run();  // runs the cancelled handlers, which refer to await()'s locals
  }

 private:
  template <typename Start>
  Outcome await(Start start, Clock::time_point deadline, const std::stop_token& stop) {
    bool done = false;
    boost::system::error_code ec;
    start([&](const boost::system::error_code& e, auto&&...) {
      ec = e;
      done = true;
    });
    Outcome outcome;
    while (!done) {
      if (stop.stop_requested()) {
        outcome.kind = Outcome::Stopped;
        break;
      }
      const auto now = Clock::now();
      if (now >= deadline) {
        outcome.kind = Outcome::TimedOut;
        break;
      }
      try {
        core::check_interrupt();  // the controller's thread, while build() connects
      } catch (...) {
        abort();
        throw;
      }
      io_.restart();
      io_.run_one_for(std::min<Clock::duration>(deadline - now, kPoll));
    }
    if (!done) {
      abort();
      return outcome;
    }
    if (ec) return {Outcome::Failed, ec.message()};
    return outcome;
  }

  Address address_;
  asio::io_context io_;
  Socket socket_;
  std::array<std::uint8_t, kHeaderBytes> header_bytes_{};
};

// Connects to the worker process and says hello, then sends the run's profile when the hosted
// executor needs it (emulated). RuntimeError naming the address when the worker cannot be reached
// or does not answer as a worker; ValueError when it refuses.
HelloReply greet(Connection& connection, const RemoteSpec& spec, Hello hello, const cluster::RunSpec* run, Bytes& out,
                 Bytes& in) {
  const std::string where = spec.address.text();
  const auto deadline = Clock::now() + std::chrono::nanoseconds(spec.connect_timeout);
  const double timeout_ms = spec.connect_timeout / 1e6;
  const auto fail = [&](const std::string& why) {
    return RuntimeError(str(spec.describe, ": cannot reach the worker process at ", where, ": ", why,
                            " (is `servelab worker --listen ", where, "` running?)"));
  };
  // Sends `out` and reads the HelloReply to it.
  const auto ask = [&] {
    Header header;
    Outcome outcome;
    try {
      outcome = connection.exchange(out, header, in, deadline, {});
    } catch (const ProtocolError& e) {
      throw fail(str("not a servelab worker: ", e.what()));
    }
    if (outcome.kind == Outcome::TimedOut) throw fail(str("no hello reply within connect_timeout_ms=", timeout_ms));
    if (outcome.kind != Outcome::Done) throw fail(outcome.error);
    if (header.type != MessageType::HelloReply) throw fail("it answered hello with another message type");
    HelloReply reply;
    try {
      reply = decode_hello_reply(in);
    } catch (const ProtocolError& e) {
      throw fail(e.what());
    }
    if (reply.status != Status::Ok) {
      const std::string who = hello.probe ? std::string("the run") : str("worker=", hello.worker);
      throw ValueError(str(spec.describe, ": the worker process at ", where, " refused ", who, ": ", reply.text));
    }
    return reply;
  };
  const auto outcome = connection.connect(deadline);
  if (outcome.kind == Outcome::TimedOut) throw fail(str("no connection within connect_timeout_ms=", timeout_ms));
  if (outcome.kind != Outcome::Done) throw fail(outcome.error);
  hello.offers_profile = run != nullptr && run->profile != nullptr;
  encode(hello, out);
  HelloReply reply = ask();
  if (reply.needs_profile && !hello.probe) {
    if (!hello.offers_profile) throw fail("it asked for a run profile that was not offered");
    encode(RunProfile{run->profile, run->service_statistic}, out);
    reply = ask();
  }
  return reply;
}

class RemoteExecutor final : public Executor {
 public:
  RemoteExecutor(std::shared_ptr<const RemoteSpec> spec, const ExecutorContext& context)
      : spec_(std::move(spec)), worker_(context.worker), connection_(spec_->address) {
    HelloReply reply =
        greet(connection_, *spec_, Hello{context.worker, context.hardware, context.seed, spec_->executor}, context.run,
              out_, in_);
    hosted_ = std::move(reply.text);
    knobs_ = std::move(reply.knobs);
    takes_ = reply.inputs;
  }

  void run(const ExecRequest& request) override {
    if (!lost_.empty()) throw WorkerLost(lost_);  // every later batch of a lost worker fails alike
    Batch batch;
    batch.model = request.model;
    batch.items = request.items;
    batch.queries.assign(request.queries.begin(), request.queries.end());
    batch.sizes.assign(request.sizes.begin(), request.sizes.end());
    batch.config = request.config;
    if (request.inputs != nullptr && takes_ != TakesInputs::None) {  // the run's own, as the user gave them
      batch.inputs.reserve(batch.queries.size());
      for (const auto q : batch.queries) batch.inputs.push_back(request.inputs->array(q, ""));
    }
    const std::int64_t input = request.items * spec_->input_bytes_per_item;
    if (input > kMaxBodyBytes / 2) {
      throw ValueError(str("remote: input_bytes_per_item=", spec_->input_bytes_per_item, " makes ", input,
                           " bytes for a batch of ", request.items, " items; the limit is ", kMaxBodyBytes / 2));
    }
    batch.padding_bytes = static_cast<std::uint32_t>(input);
    batch.wants_outputs = request.outputs != nullptr;
    const std::uint64_t id = ++batches_;
    encode(id, batch, out_);

    const auto sent = Clock::now();
    Header header;
    Outcome outcome;
    try {
      outcome =
          connection_.exchange(out_, header, in_, sent + std::chrono::nanoseconds(spec_->reply_timeout), request.stop);
    } catch (const ProtocolError& e) {
      lose(str("sent a bad reply: ", e.what()), batch.queries, id, sent);
    }
    switch (outcome.kind) {
      case Outcome::Stopped:  // the run is over: nobody reads this batch's outcome
        connection_.abort();
        lost_ = str("the run stopped while the worker process at ", spec_->address.text(), " ran a batch");
        return;
      case Outcome::TimedOut:
        lose(str("sent no reply within reply_timeout_ms=", spec_->reply_timeout / 1e6), batch.queries, id, sent);
      case Outcome::Failed:
        lose(str("closed the connection (", outcome.error, ")"), batch.queries, id, sent);
      case Outcome::Done:
        break;
    }
    BatchReply reply;
    try {
      if (header.type != MessageType::BatchReply) throw ProtocolError("a reply of another type than BatchReply");
      if (header.batch != id) throw ProtocolError(str("the reply to batch ", header.batch, " while ", id, " runs"));
      reply = decode_batch_reply(in_);
    } catch (const ProtocolError& e) {
      lose(str("sent a bad reply: ", e.what()), batch.queries, id, sent);
    }
    const Nanos round_trip = (Clock::now() - sent).count();
    log(std::move(batch.queries), id, round_trip, reply.worker_ns, reply.status == Status::Ok);
    switch (reply.status) {
      case Status::Ok:
        if (request.report) {
          request.report->compute = reply.exec_ns;
          request.report->transport = std::max<Nanos>(round_trip - reply.worker_ns, 0);
        }
        if (request.outputs && !reply.outputs.empty()) {
          if (reply.outputs.size() != request.queries.size()) {
            lose(str("sent ", reply.outputs.size(), " outputs for a batch of ", request.queries.size(), " queries"), {},
                 id, sent);
          }
          for (std::size_t q = 0; q < reply.outputs.size(); ++q) {
            if (reply.outputs[q]) request.outputs->put(request.queries[q], std::move(*reply.outputs[q]));
          }
        }
        return;
      case Status::ExecutorFailed:  // this batch only
        throw RuntimeError(str("worker process at ", spec_->address.text(), ": ", reply.error));
      case Status::Malformed:
      case Status::Refused:
        lose(str("rejected a batch: ", reply.error), {}, id, sent);
    }
  }

  std::vector<std::string> knobs() const override { return knobs_; }
  std::string describe() const override { return str("remote(address='", spec_->address.text(), "') -> ", hosted_); }

 private:
  void log(std::vector<workload::QueryId> queries, std::uint64_t id, Nanos round_trip, Nanos worker_time, bool ok) {
    TransportLog::global().add({spec_->address.text(), worker_, id, round_trip, worker_time, ok, std::move(queries)});
  }

  // The connection is gone: this batch and every later one fail with the same message (one drop
  // reason per lost worker).
  [[noreturn]] void lose(const std::string& why, const std::vector<workload::QueryId>& queries, std::uint64_t id,
                         Clock::time_point sent) {
    connection_.abort();
    if (!queries.empty()) log(queries, id, (Clock::now() - sent).count(), -1, false);
    lost_ = str("the worker process at ", spec_->address.text(), " ", why);
    throw WorkerLost(lost_);
  }

  std::shared_ptr<const RemoteSpec> spec_;
  sched::WorkerId worker_;
  Connection connection_;
  Bytes out_, in_;
  std::uint64_t batches_ = 0;
  std::string hosted_;
  std::vector<std::string> knobs_;
  TakesInputs takes_ = TakesInputs::None;
  std::string lost_;  // non-empty once the connection is gone
};

class RemoteBuilder final : public ExecutorBuilder {
 public:
  explicit RemoteBuilder(const Params& params) {
    auto spec = std::make_shared<RemoteSpec>();
    spec->address = parse_address(params.get_string("address"), "remote: address");
    spec->executor = params.get_string("executor");
    if (!spec->executor.empty()) {  // a bad spec fails now, not on the worker
      try {
        parse_spec(spec->executor);
      } catch (const ValueError& e) {
        throw ValueError(str("remote: executor=\"", spec->executor, "\": ", e.what()));
      }
    }
    spec->connect_timeout =
        seconds_to_nanos(params.get_float("connect_timeout_ms") / 1e3, "remote: connect_timeout_ms");
    spec->reply_timeout = seconds_to_nanos(params.get_float("reply_timeout_ms") / 1e3, "remote: reply_timeout_ms");
    spec->input_bytes_per_item = params.get_int("input_bytes_per_item");
    spec->describe = params.describe();
    spec_ = std::move(spec);
  }
  std::unique_ptr<Executor> build(const ExecutorContext& context) const override {
    return std::make_unique<RemoteExecutor>(spec_, context);
  }
  std::string describe() const override { return spec_->describe; }
  const RemoteSpec& spec() const { return *spec_; }

 private:
  std::shared_ptr<const RemoteSpec> spec_;
};

}  // namespace

std::optional<HostedExecutor> probe_hosted(const ExecutorBuilder& builder) {
  const auto* remote = dynamic_cast<const RemoteBuilder*>(&builder);
  if (remote == nullptr) return std::nullopt;
  Connection connection(remote->spec().address);
  Bytes out, in;
  Hello hello{0, 0, 0, remote->spec().executor};
  hello.probe = true;
  HelloReply reply = greet(connection, remote->spec(), hello, nullptr, out, in);
  return HostedExecutor{std::move(reply.text), reply.inputs, reply.width};
}

TransportLog& TransportLog::global() {
  static TransportLog log;
  return log;
}

void TransportLog::add(TransportBatch batch) {
  std::lock_guard lock(mutex_);
  if (queries_ + batch.queries.size() > kMaxQueries) {
    ++not_kept_;
    return;
  }
  queries_ += batch.queries.size();
  batches_.push_back(std::move(batch));
}

std::vector<TransportBatch> TransportLog::take(std::int64_t& not_kept) {
  std::lock_guard lock(mutex_);
  not_kept = std::exchange(not_kept_, 0);
  queries_ = 0;
  return std::exchange(batches_, {});
}

void register_remote_executors(ExecutorRegistry& registry) {
  ParamSpec address;
  address.name = "address";
  address.type = ParamType::String;
  address.doc = "the worker process: 'unix:/path/to.sock' or 'tcp:HOST:PORT' (servelab worker --listen ...)";
  ParamSpec executor;
  executor.name = "executor";
  executor.type = ParamType::String;
  executor.default_value = std::string();
  executor.doc = "the executor spec the worker process must host ('': whatever it hosts)";
  ParamSpec input;
  input.name = "input_bytes_per_item";
  input.type = ParamType::Int;
  input.default_value = std::int64_t{0};
  input.min = 0;
  input.doc = "bytes sent per item with each batch, standing for its inputs (the worker reads and drops them)";
  registry.add(
      {"remote",
       "Runs each batch in a worker process (servelab worker), over a Unix socket or TCP; a lost worker's "
       "batches end dropped with a reason naming its address.",
       {address, executor, ParamSpec::positive("connect_timeout_ms", 5000.0, "connecting and hello, per worker"),
        ParamSpec::positive("reply_timeout_ms", 60000.0, "the longest wait for a batch's reply"), input},
       [](const Params& p) { return std::make_shared<RemoteBuilder>(p); }});
}

}  // namespace servelab::serve::remote
