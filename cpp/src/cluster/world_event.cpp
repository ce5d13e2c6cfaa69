#include "servelab/cluster/world_event.hpp"

namespace servelab::cluster {

void deliver(const WorldEvent& event, Nanos batch_start, ClusterState& state, sched::Scheduler& scheduler) {
  switch (event.kind) {
    case WorldEventKind::BatchDone: {
      const auto worker = static_cast<sched::WorkerId>(event.payload);
      const auto done = state.finish_batch(worker, batch_start, event.time);
      scheduler.on_batch_done(done, state, state);
      break;
    }
    case WorldEventKind::TransitionDone: {
      const auto worker = static_cast<sched::WorkerId>(event.payload);
      if (state.finish_transition(worker)) scheduler.on_worker_ready(worker, state, state);
      break;
    }
    case WorldEventKind::Timer:
      scheduler.on_timer(event.payload, state, state);
      break;
  }
}

}  // namespace servelab::cluster
