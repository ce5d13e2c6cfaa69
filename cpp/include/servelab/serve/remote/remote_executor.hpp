// The `remote` executor: runs each batch in a worker process (`servelab worker`) and waits for its
// reply, so that a worker group of a serving run lives in another process or on another host while
// the controller and the scheduler stay as they are.
//
//   remote(address='unix:/tmp/w0.sock', executor="recsys(model='rm2')", reply_timeout_ms=60000)
//
// Every worker of the group opens its own connection when the run starts (build() connects and
// says hello, so an unreachable worker fails the run before it starts, naming the address; it also
// sends the run's profile when the hosted executor needs it: emulated). A batch
// whose reply does not come (the process died, the connection broke, reply_timeout_ms passed)
// fails with a message naming the address, and so does every later batch of that worker: the run
// drops their queries with that reason and goes on with the other workers.
//
// The run's own inputs (serve(inputs=...)) travel with each batch, one typed array per query, when
// the hosted executor reads them (HelloReply::inputs); an executor that makes its own gets none.
//
// Timing: the run's exec_ns column holds the worker's own measure, as in-process; each batch's
// round trip and the worker's time for it go to TransportLog::global() (transport = the rest).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "servelab/core/time.hpp"
#include "servelab/serve/executor_registry.hpp"
#include "servelab/serve/remote/protocol.hpp"

namespace servelab::serve::remote {

// One batch a remote executor sent (failed ones included).
struct TransportBatch {
  std::string address;  // the worker process
  sched::WorkerId worker = -1;
  std::uint64_t batch = 0;  // the batch id on its connection
  Nanos round_trip = 0;     // controller: from sending the batch to its reply read
  Nanos worker_time = -1;   // worker: from the batch received to its reply ready (-1: no reply)
  bool ok = false;          // the worker ran the batch
  std::vector<workload::QueryId> queries;
};

// What every remote executor of this process sent, until someone takes it (thread-safe). Kept
// process-wide because a run builds its executors from specs: the log outlives them. Holds at most
// kMaxQueries queries; later batches are counted, not kept, until the next take().
class TransportLog {
 public:
  static constexpr std::size_t kMaxQueries = std::size_t{1} << 24;
  static TransportLog& global();
  void add(TransportBatch batch);
  // The batches so far, in the order they ended, and how many were not kept; empties the log.
  std::vector<TransportBatch> take(std::int64_t& not_kept);

 private:
  std::mutex mutex_;
  std::vector<TransportBatch> batches_;
  std::size_t queries_ = 0;
  std::int64_t not_kept_ = 0;
};

// What the worker process behind a `remote` executor hosts.
struct HostedExecutor {
  std::string executor;  // its describe()
  TakesInputs inputs = TakesInputs::None;
  std::int64_t width = 0;  // FloatRows: features per row
};

// Asks the worker process of `builder` what it hosts, over a connection of its own (a probe hello:
// nothing is built there), so that serve(inputs=...) is checked before the run. nullopt when
// `builder` is not a remote one; RuntimeError naming the address when the worker cannot be
// reached, ValueError when it refuses (it hosts another executor than `executor=` asks).
std::optional<HostedExecutor> probe_hosted(const ExecutorBuilder& builder);

// Adds "remote".
void register_remote_executors(ExecutorRegistry& registry);

}  // namespace servelab::serve::remote
