// The real serving loop: the same scheduler objects as the simulator, on the wall clock.
//
// The calling thread is the controller: it owns the cluster state and calls every scheduler hook,
// one at a time. Each worker has a thread (the initial workers from the start, added workers from
// add_worker) that takes a dispatched batch, stamps its actual start, runs the worker's Executor,
// stamps the finish and posts the completion back to the controller. The controller sleeps until
// the earliest of the next arrival (released at its workload time), the next timer, startup or
// model load, and a completion; then it handles the due events one by one in time order (ties as
// in the simulator: completions, startups/loads, timers, arrivals).
//
// now() is steady_clock time in ns since the run's start (t = 0 just before on_start, once the
// worker threads run), read when the controller takes up an event and fixed while its hook runs
// (so set_timer(view.now(), ...) is valid, as in the simulator). The controller spins the last
// kDefaultSpin before a deadline, so arrivals and timers are taken up within microseconds.
// A query's arrival is its workload time; its start and finish are the worker thread's stamps.
//
// The run ends under the simulator's rules: once the workload has ended and nothing is queued,
// running or loading (or no event is left), or drain_limit after the last arrival, when what is
// still queued or running is dropped "cut off at end of run" and running batches are abandoned
// (their executors are asked to stop). A batch whose executor throws fails alone: its queries end
// dropped with "executor failed: <executor>: <message>" as the reason, the scheduler sees the worker
// free again (on_batch_done) and the run goes on. Ctrl-C (check_interrupt(), polled at least every
// 20 ms) or an exception from a hook stops every worker thread, joins it and rethrows: no thread
// outlives serve() (unless a batch timeout gave up on it, below). The result has three extra
// per-query columns: "exec_ns", the executor's own time for the query's batch (ExecReport), -1
// unless the query completed; "taken_ns", when the controller took up the query's arrival; and
// "noticed_ns", when it took up the end of the query's batch (-1: never). With the records'
// dispatch, start and finish they split a query's time into the loop's stages (servelab.calibrate
// fits the simulator's loop model from them, cluster/loop_model.hpp).
//
// Session (ServeOptions::session, see session.hpp): the same loop, its arrivals the submissions
// taken from the channel (a wait for them wakes on each submit), their inputs handed to the
// batches that hold them and their outputs collected; each query's outcome is given to its
// submitter as it ends (completed when its batch is taken up, dropped when it is dropped). The
// workload's stream is not read (its applications name the session's); the run ends once the
// channel is closed and the rest has drained (as serve() after its last arrival), at once when
// it is aborted ("session stopped").
//
// Machines: every instance (worker) has its own thread and executor, whether it is one of the
// initial workers or added during the run by add_worker or add_instance (its thread and executor
// are made when the action runs, while the others serve; it takes batches once its startup or
// load time has passed). With ServeOptions::machine_cores, the controller works out each
// instance's share of its machine's cores at every dispatch (instance_cores, affinity.hpp) and
// the worker thread re-pins itself before the batch when the share changed. An executor that
// names the knobs "llc_first_way" and "llc_share_ways" (the LLC partitioner does) is told, per
// batch, the LLC partition of its instance's model on its machine (instance_llc_share).
//
// Batch timeout (ServeOptions::batch_timeout > 0): the controller is the watchdog. A batch that has
// not returned batch_timeout after its dispatch fails like a batch whose executor threw, at that
// time: its queries end dropped with "executor failed: <executor>: worker <w> ran a batch past
// batch_timeout_ms=<t>; the worker is out of service for the rest of the run", and the scheduler
// sees the worker free (on_batch_done). The worker's thread is abandoned (asked to stop, handed to
// WorkerThread::abandon) and the worker leaves the cluster as if the scheduler had removed it
// (its queue back to the central queue, its status stopped; a batch that still reaches it fails at
// once with the same reason). A batch
// that returns after its timeout is ignored (its queries were already recorded). At the end of the
// run (or on Ctrl-C) the controller asks every worker thread to stop and waits at most the shutdown
// grace period, min(batch_timeout, kMaxShutdownGrace), for them: a thread that has not returned by
// then is abandoned too. An abandoned thread owns its executor, its batch, the run's clock, inbox
// and inputs (and a Python executor's thread its thread state), so it is safe to let it run on; it
// is joined once its batch returns (by the next serve() to end, or abandoned_worker_threads()), and
// one still running when the process exits is left to end with it.
#pragma once

#include <cstddef>
#include <memory>

#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/cluster/records.hpp"
#include "servelab/sched/scheduler.hpp"
#include "servelab/serve/affinity.hpp"
#include "servelab/serve/executor.hpp"

namespace servelab::serve {

class SessionChannel;

struct ServeOptions {
  ExecutorFactory executor;  // empty: emulated_executors(); executors_by_group() for named ones
  // How long before the next arrival or timer the controller spins instead of sleeping: precise
  // wake-ups, for a core's worth of CPU under heavy load. 0: timed waits only (wake-ups some tens
  // of microseconds late), leaving the cores to executors that need them.
  Nanos spin = kDefaultSpin;
  // User-supplied per-query inputs handed to every batch (ExecRequest::inputs); null: none.
  std::shared_ptr<const QueryInputs> inputs;
  // The longest a batch may run before it is dropped and its worker taken out of service (see
  // above); 0: no limit (a batch that never returns then blocks serve()).
  Nanos batch_timeout = 0;
  // The host cores of the declared machines (affinity.hpp): their instances' threads are pinned
  // to their share of them before each batch whose share changed. Empty: nobody is pinned here.
  MachineCores machine_cores;
  // Where those pinnings are recorded (null: nowhere).
  std::shared_ptr<PinLog> pin_log;
  // A session's channel (session.hpp): arrivals are its submissions instead of the workload's
  // stream, and each query's outcome goes back to its submitter. Null: the workload's stream.
  std::shared_ptr<SessionChannel> session;
};

// The most the end of a run waits for running batches after asking them to stop, when a batch
// timeout is set (the grace period is min(batch_timeout, this)).
inline constexpr Nanos kMaxShutdownGrace = kNanosPerSecond;

// Runs `scheduler` (fresh: schedulers keep per-run state) on `spec` in real time; result.world is
// "serve". Blocks for the run's wall time.
cluster::RunResult serve(const cluster::RunSpec& spec, sched::Scheduler& scheduler, const ServeOptions& options = {});

// Worker threads that serving runs gave up on (batch timeout) and that are still running, in this
// process; joins those whose batch has returned since.
std::size_t abandoned_worker_threads();

}  // namespace servelab::serve
