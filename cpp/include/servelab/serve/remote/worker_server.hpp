// The worker process's side of the remote protocol: listens on a Unix socket or TCP port, and for
// each controller connection builds one executor (from the builder it hosts) and runs the batches
// it receives, one at a time, on a thread of its own.
//
// A connection that breaks the protocol gets an error reply and is closed; the server goes on.
// What a peer can make the worker hold is bounded: a message's body is allocated as its bytes
// arrive (a header announcing 64 MiB costs nothing until they come), at most max_connections are
// served at once (one more gets a refusal naming the limit and is closed), a connection must say
// hello within hello_timeout and finish a message it has started within message_timeout, or it is
// closed. A controller may stay idle between batches for as long as its run lasts.
// serve() returns on stop() and throws Interrupted on Ctrl-C (check_interrupt(), polled every
// 20 ms); either way every connection is closed and its thread joined first (a running batch is
// asked to stop through its stop token).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "servelab/serve/executor_registry.hpp"
#include "servelab/serve/remote/address.hpp"
#include "servelab/serve/remote/protocol.hpp"

namespace servelab::serve::remote {

struct WorkerServerOptions {
  Address listen;
  // A TCP address other than loopback needs this: the protocol has no authentication, and a
  // worker runs whatever batches reach it.
  bool allow_remote = false;
  // Which of a run's inputs the hosted executor reads (told to each controller in HelloReply):
  // None for executors that make their own, Arrays for one written in Python, FloatRows of `width`
  // features for torchscript. The executor is handed the inputs a batch carries either way.
  TakesInputs inputs = TakesInputs::None;
  std::int64_t width = 0;
  // Bounds on what peers can hold (see above).
  std::int32_t max_connections = 64;
  std::chrono::milliseconds hello_timeout{10'000};
  std::chrono::milliseconds message_timeout{30'000};
};

class WorkerServer {
 public:
  // Binds at once. ValueError for a non-loopback address without allow_remote; RuntimeError when
  // the address cannot be bound (in use, no permission). `registry` (may be null) turns a Hello's
  // executor spec into its full form, to compare with what this server hosts.
  WorkerServer(std::shared_ptr<const ExecutorBuilder> builder, const WorkerServerOptions& options,
               const ExecutorRegistry* registry);
  ~WorkerServer();  // stops, joins, removes its Unix socket file
  WorkerServer(const WorkerServer&) = delete;
  WorkerServer& operator=(const WorkerServer&) = delete;

  // The bound address (a TCP port 0 resolved to the port given).
  std::string address() const;
  // The hosted executor's describe().
  std::string executor() const;
  // Serves until stop() or Ctrl-C; callable again after returning.
  void serve();
  // From any thread: serve() returns within a poll interval.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace servelab::serve::remote
