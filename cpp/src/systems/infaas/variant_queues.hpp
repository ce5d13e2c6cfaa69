// The serving shape the INFaaS policies share: each query is assigned a (worker, model) at arrival
// and waits in that worker's own queue; an idle worker loads the model its oldest query needs
// if it is missing (then on_worker_ready), else serves, in one batch, its queued queries of that
// model in arrival order up to the profile's max batch (BatchCap::Deadline: then shrunk so that
// the batch finishes in time every query in it that still could; see scheduler.hpp).
// backlog_ns(w) is the predicted work queued on w (each query's latency alone: batching only
// makes it shorter), the load measure the policies compare workers by. Offline queries
// (is_offline) wait in the central queue instead; an idle worker with an empty queue offers
// itself to serve_offline.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "servelab/sched/scheduler.hpp"
#include "servelab/systems/infaas/scheduler.hpp"

namespace servelab::infaas {

class VariantQueues : public sched::Scheduler {
 public:
  void on_start(const sched::ClusterView& view, sched::Actions& actions) override;
  void on_arrival(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) final;
  void on_batch_done(const sched::BatchDone& done, const sched::ClusterView& view, sched::Actions& actions) final;
  void on_worker_ready(sched::WorkerId worker, const sched::ClusterView& view, sched::Actions& actions) final;

 protected:
  explicit VariantQueues(BatchCap batch_cap = BatchCap::Full) : batch_cap_(batch_cap) {}
  // The policy's describe() suffix for a non-default cap: ", batch_cap='deadline'" or "".
  std::string batch_cap_arg(bool first) const {
    return batch_cap_ == BatchCap::Full ? std::string() : std::string(first ? "" : ", ") + "batch_cap='deadline'";
  }

  struct Assignment {
    sched::WorkerId worker = -1;  // -1: drop the query with `reason`
    sched::ModelId model = -1;
    std::string reason;
  };
  // May act (load, add a worker) before answering; must not dispatch or enqueue the query itself.
  virtual Assignment assign(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) = 0;
  // After a worker's backlog or models changed (the policy re-keys its indexes).
  virtual void changed(sched::WorkerId, const sched::ClusterView&, sched::Actions&) {}
  // Before an idle worker picks its next batch (scale-down decisions).
  virtual void before_serving(sched::WorkerId, const sched::ClusterView&, sched::Actions&) {}
  // Offline queries are parked in the central queue and served only from spare capacity.
  virtual bool is_offline(const sched::Query&) const { return false; }
  // An idle worker with nothing queued may start a batch of central-queue queries here.
  virtual void serve_offline(sched::WorkerId, const sched::ClusterView&, sched::Actions&) {}
  // Every finished batch (monitoring).
  virtual void batch_done(const sched::BatchDone&, const sched::ClusterView&) {}
  // A worker stopped at the end of its batch (the serving loop took it out: a batch past
  // batch_timeout_ms, a lost executor); the policy forgets it before its queries are placed again.
  virtual void worker_stopped(sched::WorkerId, const sched::ClusterView&) {}
  // Moves w's queued queries of model `from` to model `to` (a variant replaced by another on w);
  // queries larger than `to` serves keep `from`.
  void retarget(sched::WorkerId w, sched::ModelId from, sched::ModelId to, const sched::ClusterView& view);
  // Moves w's queued queries of model `from` to worker `to_w`'s queue for model `to` (another
  // worker: the query leaves w's queue); an idle `to_w` starts serving them.
  void migrate(sched::WorkerId w, sched::ModelId from, sched::WorkerId to_w, sched::ModelId to,
               const sched::ClusterView& view, sched::Actions& actions);
  // An idle worker serves its next batch, or offline work when its queue is empty.
  void serve(sched::WorkerId w, const sched::ClusterView& view, sched::Actions& actions);

  Nanos backlog_ns(sched::WorkerId w) const {
    return w < static_cast<sched::WorkerId>(backlog_.size()) ? backlog_[w] : 0;
  }
  // Predicted time until w could start a new query: its current batch or load plus its backlog.
  Nanos wait_ns(sched::WorkerId w, const sched::ClusterView& view) const;
  // How many queued queries on w use model m.
  std::int64_t queued_for(sched::WorkerId w, sched::ModelId m) const;
  // Whether a query queued on w waits for a model w does not hold yet (a load is coming).
  bool load_pending(sched::WorkerId w, const sched::ClusterView& view) const;

 private:
  void grow(const sched::ClusterView& view);
  // The arrival path of an online query: assign, then queue it on its worker (or drop it).
  void place(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions);
  // Queries this class queued on a worker that were moved back to the central queue (the worker
  // was taken out) are placed again, as on arrival; else they would wait there for ever.
  void place_stranded(const sched::ClusterView& view, sched::Actions& actions);
  // BatchCap::Deadline: drops queries from the back of `batch` (never below one) until its
  // predicted latency meets every remaining query's deadline that could be met alone.
  void cap_to_deadlines(sched::WorkerId w, sched::ModelId model, std::vector<sched::QueryId>& batch,
                        std::int64_t& items, const sched::ClusterView& view) const;

  BatchCap batch_cap_;

  std::vector<Nanos> backlog_;                                                   // by worker
  std::unordered_map<sched::QueryId, std::pair<sched::ModelId, Nanos>> queued_;  // model, predicted latency
  std::vector<std::unordered_map<sched::ModelId, std::int64_t>> per_model_;      // by worker
};

}  // namespace servelab::infaas
