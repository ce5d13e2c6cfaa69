// The serving shape the INFaaS policies share: each query is assigned a (worker, model) at arrival
// and waits in that worker's own queue; an idle worker loads the model its oldest query needs
// if it is missing (then on_worker_ready), else serves, in one batch, its queued queries of that
// model in arrival order up to the profile's max batch. backlog_ns(w) is the predicted work queued
// on w (each query's latency alone: batching only makes it shorter), the load measure the
// policies compare workers by.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "servelab/sched/scheduler.hpp"

namespace servelab::infaas {

class VariantQueues : public sched::Scheduler {
 public:
  void on_start(const sched::ClusterView& view, sched::Actions& actions) override;
  void on_arrival(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) final;
  void on_batch_done(const sched::BatchDone& done, const sched::ClusterView& view, sched::Actions& actions) final;
  void on_worker_ready(sched::WorkerId worker, const sched::ClusterView& view, sched::Actions& actions) final;

 protected:
  struct Assignment {
    sched::WorkerId worker = -1;  // -1: drop the query with `reason`
    sched::ModelId model = -1;
    std::string reason;
  };
  // May act (load, add a worker) before answering; must not dispatch or enqueue the query itself.
  virtual Assignment assign(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) = 0;
  // After a worker's backlog or models changed (the policy re-keys its indexes).
  virtual void changed(sched::WorkerId, const sched::ClusterView&) {}
  // Before an idle worker picks its next batch (scale-down decisions).
  virtual void before_serving(sched::WorkerId, const sched::ClusterView&, sched::Actions&) {}

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
  void serve(sched::WorkerId w, const sched::ClusterView& view, sched::Actions& actions);

  std::vector<Nanos> backlog_;                                                   // by worker
  std::unordered_map<sched::QueryId, std::pair<sched::ModelId, Nanos>> queued_;  // model, predicted latency
  std::vector<std::unordered_map<sched::ModelId, std::int64_t>> per_model_;      // by worker
};

}  // namespace servelab::infaas
