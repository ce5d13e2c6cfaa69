// The shape shared by policies that pick a worker per query at arrival: the query waits in that
// worker's own queue, and a worker that becomes idle serves its queue in FIFO order, one query
// per batch. Subclasses only choose the worker.
#pragma once

#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::sched {

class PerWorkerQueue : public Scheduler {
 public:
  void on_arrival(const Query& query, const ClusterView& view, Actions& actions) final {
    const WorkerId w = choose(query, view);
    if (w < 0) {
      actions.drop(query.id, "no worker can serve it");
      return;
    }
    if (view.is_idle(w) && view.worker_queue_length(w) == 0) {
      start(w, query.id, view, actions);
    } else {
      actions.enqueue_to_worker(w, query.id);
      queued(w, query, view);
    }
    touched(w, view);
  }

  void on_batch_done(const BatchDone& done, const ClusterView& view, Actions& actions) final {
    serve_next(done.worker, view, actions);
  }
  void on_worker_ready(WorkerId worker, const ClusterView& view, Actions& actions) final {
    serve_next(worker, view, actions);
  }

 protected:
  // The worker for this query (it must have a model for it, see pick_model), or -1 to drop it.
  virtual WorkerId choose(const Query& query, const ClusterView& view) = 0;
  // Bookkeeping hooks for policies that track their own per-worker state.
  virtual void queued(WorkerId, const Query&, const ClusterView&) {}
  virtual void started(WorkerId, const Query&, const ClusterView&) {}
  // The worker's queue, status or busy_until may have changed (indexed policies re-key it).
  virtual void touched(WorkerId, const ClusterView&) {}
  // The model the worker serves the query with. An indexed policy answers from the worker's
  // class (the same choice, without reading that worker's own model list: with thousands of
  // workers that read misses the caches).
  virtual ModelId model_for(WorkerId w, const Query& query, const ClusterView& view) {
    return pick_model(view, w, query);
  }

 private:
  void serve_next(WorkerId w, const ClusterView& view, Actions& actions) {
    if (view.is_idle(w) && view.worker_queue_length(w) > 0) start(w, view.worker_queue(w).front(), view, actions);
    touched(w, view);
  }
  void start(WorkerId w, QueryId id, const ClusterView& view, Actions& actions) {
    const Query query = view.query(id);
    started(w, query, view);
    actions.dispatch(w, model_for(w, query, view), {&id, 1});
  }
};

}  // namespace servelab::sched
