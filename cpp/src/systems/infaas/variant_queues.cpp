#include "variant_queues.hpp"

#include <algorithm>
#include <vector>

namespace servelab::infaas {

using sched::ModelId;
using sched::QueryId;
using sched::WorkerId;

void VariantQueues::on_start(const sched::ClusterView& view, sched::Actions&) {
  backlog_.clear();
  queued_.clear();
  per_model_.clear();
  grow(view);
}

void VariantQueues::grow(const sched::ClusterView& view) {
  backlog_.resize(static_cast<std::size_t>(view.num_workers()), 0);
  per_model_.resize(static_cast<std::size_t>(view.num_workers()));
}

Nanos VariantQueues::wait_ns(WorkerId w, const sched::ClusterView& view) const {
  return std::max<Nanos>(0, view.busy_until(w) - view.now()) + backlog_ns(w);
}

std::int64_t VariantQueues::queued_for(WorkerId w, ModelId m) const {
  if (w >= static_cast<WorkerId>(per_model_.size())) return 0;
  const auto it = per_model_[w].find(m);
  return it == per_model_[w].end() ? 0 : it->second;
}

bool VariantQueues::load_pending(WorkerId w, const sched::ClusterView& view) const {
  if (w >= static_cast<WorkerId>(per_model_.size())) return false;
  for (const auto& [m, n] : per_model_[w]) {
    if (n > 0 && !view.has_model(w, m)) return true;
  }
  return false;
}

void VariantQueues::retarget(WorkerId w, ModelId from, ModelId to, const sched::ClusterView& view) {
  if (from == to || w >= static_cast<WorkerId>(backlog_.size()) || queued_for(w, from) == 0) return;
  const std::int64_t cap = view.max_batch(w, to);
  for (const QueryId id : view.worker_queue(w)) {
    auto& [model, own] = queued_.at(id);
    const std::int64_t size = view.query(id).size;
    if (model != from || size > cap) continue;
    const Nanos now_own = view.predicted_latency(w, to, size);
    backlog_[w] += now_own - own;
    --per_model_[w][from];
    ++per_model_[w][to];
    model = to;
    own = now_own;
  }
}

void VariantQueues::migrate(WorkerId w, ModelId from, WorkerId to_w, ModelId to, const sched::ClusterView& view,
                            sched::Actions& actions) {
  if (w == to_w) {
    retarget(w, from, to, view);
    return;
  }
  grow(view);
  if (queued_for(w, from) == 0) return;
  const std::int64_t cap = view.max_batch(to_w, to);
  const std::vector<QueryId> ids(view.worker_queue(w).begin(), view.worker_queue(w).end());
  for (const QueryId id : ids) {
    auto& [model, own] = queued_.at(id);
    const std::int64_t size = view.query(id).size;
    if (model != from || size > cap) continue;
    actions.enqueue_to_worker(to_w, id);
    backlog_[w] -= own;
    --per_model_[w][from];
    model = to;
    own = view.predicted_latency(to_w, to, size);
    backlog_[to_w] += own;
    ++per_model_[to_w][to];
  }
  if (view.is_idle(to_w)) serve(to_w, view, actions);
  changed(w, view, actions);
  changed(to_w, view, actions);
}

void VariantQueues::on_arrival(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) {
  grow(view);
  if (is_offline(query)) {
    actions.enqueue(query.id);
    const std::vector<WorkerId> idle(view.idle_workers().begin(), view.idle_workers().end());
    for (const WorkerId w : idle) {
      if (view.is_idle(w) && view.worker_queue(w).empty()) serve(w, view, actions);
    }
    return;
  }
  place(query, view, actions);
}

void VariantQueues::place(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) {
  const Assignment a = assign(query, view, actions);
  grow(view);  // assign may have added a worker
  if (a.worker < 0) {
    actions.drop(query.id, a.reason.empty() ? "no variant serves it" : a.reason);
    return;
  }
  actions.enqueue_to_worker(a.worker, query.id);
  const Nanos own = view.predicted_latency(a.worker, a.model, query.size);
  queued_[query.id] = {a.model, own};
  backlog_[a.worker] += own;
  ++per_model_[a.worker][a.model];
  if (view.is_idle(a.worker)) serve(a.worker, view, actions);
  changed(a.worker, view, actions);
}

void VariantQueues::on_batch_done(const sched::BatchDone& done, const sched::ClusterView& view,
                                  sched::Actions& actions) {
  grow(view);
  batch_done(done, view);
  if (view.status(done.worker) == sched::WorkerStatus::Stopped) {
    backlog_[done.worker] = 0;
    per_model_[done.worker].clear();
    worker_stopped(done.worker, view);
    place_stranded(view, actions);
    return;
  }
  if (view.is_idle(done.worker)) serve(done.worker, view, actions);
  changed(done.worker, view, actions);
}

void VariantQueues::place_stranded(const sched::ClusterView& view, sched::Actions& actions) {
  std::vector<QueryId> stranded;
  for (const QueryId id : view.central_queue()) {
    if (queued_.contains(id)) stranded.push_back(id);
  }
  for (const QueryId id : stranded) {
    queued_.erase(id);
    place(view.query(id), view, actions);
  }
}

void VariantQueues::on_worker_ready(WorkerId worker, const sched::ClusterView& view, sched::Actions& actions) {
  grow(view);
  if (view.is_idle(worker)) serve(worker, view, actions);
  changed(worker, view, actions);
}

void VariantQueues::serve(WorkerId w, const sched::ClusterView& view, sched::Actions& actions) {
  before_serving(w, view, actions);
  if (!view.is_idle(w)) return;  // before_serving started a load
  const auto& queue = view.worker_queue(w);
  if (queue.empty()) {
    if (view.is_idle(w) && !view.central_queue().empty()) serve_offline(w, view, actions);
    return;
  }
  const ModelId model = queued_.at(queue.front()).first;
  if (!view.has_model(w, model)) {
    actions.load_model(w, model);  // on_worker_ready serves once it is loaded
    return;
  }
  const std::int64_t cap = view.max_batch(w, model);
  std::vector<QueryId> batch;
  std::int64_t items = 0;
  for (const QueryId id : queue) {
    const auto& [m, own] = queued_.at(id);
    if (m != model) continue;
    const std::int64_t size = view.query(id).size;
    if (items + size > cap) break;
    batch.push_back(id);
    items += size;
  }
  if (batch_cap_ == BatchCap::Deadline) cap_to_deadlines(w, model, batch, items, view);
  for (const QueryId id : batch) {
    backlog_[w] -= queued_.at(id).second;
    --per_model_[w][model];
    queued_.erase(id);
  }
  actions.dispatch(w, model, batch);
}

void VariantQueues::cap_to_deadlines(WorkerId w, ModelId model, std::vector<QueryId>& batch, std::int64_t& items,
                                     const sched::ClusterView& view) const {
  const Nanos now = view.now();
  while (batch.size() > 1) {
    // The binding deadline: the earliest among the queries this batch could still serve in time
    // (a query already too late alone does not constrain, else one late query would shrink every
    // batch behind it to one and the backlog would grow).
    Nanos binding = -1;
    for (const QueryId id : batch) {
      const sched::Query& q = view.query(id);
      if (now + view.predicted_latency(w, model, q.size) > q.deadline) continue;
      if (binding < 0 || q.deadline < binding) binding = q.deadline;
    }
    if (binding < 0 || now + view.predicted_latency(w, model, items) <= binding) return;
    items -= view.query(batch.back()).size;
    batch.pop_back();
  }
}

}  // namespace servelab::infaas
