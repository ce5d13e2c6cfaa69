// A hand-set cluster for testing one scheduling decision: workers with a hardware, a status and a
// busy_until, pending queries in the central queue, and Actions that record dispatches (and mark
// the worker busy, so a policy sees the effect of its own dispatch).
#pragma once

#include <algorithm>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::testing {

class FakeView final : public sched::ClusterView, public sched::Actions {
 public:
  explicit FakeView(std::shared_ptr<const profile::Profile> profile)
      : sched::ClusterView(central_), profile_(std::move(profile)) {}

  // --- building ---
  sched::WorkerId add_worker(std::string_view hardware, Nanos busy_until = -1) {
    hw_.push_back(profile_->hardware_index(hardware));
    models_.push_back({0});
    const bool busy = busy_until > now_;
    status_.push_back(busy ? sched::WorkerStatus::Busy : sched::WorkerStatus::Idle);
    busy_until_.push_back(busy ? busy_until : now_);
    worker_queues_.emplace_back();
    return static_cast<sched::WorkerId>(hw_.size() - 1);
  }
  sched::QueryId add_query(std::int32_t size, Nanos arrival, Nanos slo) {
    sched::Query q;
    q.id = static_cast<sched::QueryId>(queries_.size());
    q.size = size;
    q.arrival = arrival;
    q.deadline = arrival + slo;
    queries_.push_back(q);
    central_.push_back(q.id);
    return q.id;
  }
  void set_now(Nanos now) { now_ = now; }

  // --- ClusterView ---
  Nanos now() const override { return now_; }
  const profile::Profile& profile() const override { return *profile_; }
  profile::Statistic decision_statistic() const override { return profile::Statistic::Mean; }
  std::uint64_t seed() const override { return 7; }
  sched::WorkerId num_workers() const override { return static_cast<sched::WorkerId>(hw_.size()); }
  sched::HardwareId hardware(sched::WorkerId w) const override { return hw_.at(w); }
  sched::WorkerStatus status(sched::WorkerId w) const override { return status_.at(w); }
  std::span<const sched::WorkerId> idle_workers() const override {
    idle_.clear();
    for (sched::WorkerId w = 0; w < num_workers(); ++w) {
      if (status_[w] == sched::WorkerStatus::Idle) idle_.push_back(w);
    }
    return idle_;
  }
  Nanos busy_until(sched::WorkerId w) const override { return busy_until_.at(w); }
  const std::vector<sched::ModelId>& models(sched::WorkerId w) const override { return models_.at(w); }
  bool has_model(sched::WorkerId w, sched::ModelId m) const override { return m == 0 && w < num_workers(); }
  std::int64_t config(sched::WorkerId, std::string_view, std::int64_t fallback) const override { return fallback; }
  Nanos last_latency(sched::WorkerId) const override { return -1; }
  const sched::QueryQueue& worker_queue(sched::WorkerId w) const override { return worker_queues_.at(w); }
  sched::Query query(sched::QueryId id) const override { return queries_.at(id); }
  Nanos predicted_latency(sched::WorkerId w, sched::ModelId m, std::int64_t items) const override {
    return seconds_to_nanos(profile_->latency(hw_.at(w), m, items, profile::Statistic::Mean));
  }
  std::int64_t max_batch(sched::WorkerId w, sched::ModelId m) const override {
    return profile_->max_batch(hw_.at(w), m);
  }

  // --- Actions ---
  void dispatch(sched::WorkerId w, sched::ModelId m, std::span<const sched::QueryId> ids) override {
    if (status_.at(w) != sched::WorkerStatus::Idle) throw ValueError("dispatch to a busy worker");
    for (const auto id : ids) {
      const auto it = std::find(central_.begin(), central_.end(), id);
      if (it == central_.end()) throw ValueError("dispatch of a query that is not pending");
      central_.erase(it);
      dispatched.emplace_back(w, id);
      status_[w] = sched::WorkerStatus::Busy;
      busy_until_[w] = now_ + predicted_latency(w, m, queries_[id].size);
    }
  }
  void enqueue(sched::QueryId id) override {
    if (std::find(central_.begin(), central_.end(), id) == central_.end()) central_.push_back(id);
  }
  void enqueue_to_worker(sched::WorkerId w, sched::QueryId id) override {
    const auto it = std::find(central_.begin(), central_.end(), id);
    if (it == central_.end()) throw ValueError("enqueue of a query that is not pending");
    central_.erase(it);
    worker_queues_.at(w).push_back(id);
    enqueued.emplace_back(w, id);
  }
  void drop(sched::QueryId id, std::string_view) override { dropped.push_back(id); }
  void set_timer(Nanos at, std::int64_t tag) override { timers.emplace_back(at, tag); }
  sched::WorkerId add_worker(std::string_view, std::span<const sched::ModelId>, Nanos) override {
    throw ValueError("not supported");
  }
  void remove_worker(sched::WorkerId) override { throw ValueError("not supported"); }
  void load_model(sched::WorkerId, sched::ModelId) override { throw ValueError("not supported"); }
  void unload_model(sched::WorkerId, sched::ModelId) override { throw ValueError("not supported"); }
  void set_config(sched::WorkerId, std::string_view, std::int64_t) override { throw ValueError("not supported"); }

  std::vector<std::pair<sched::WorkerId, sched::QueryId>> dispatched;
  std::vector<std::pair<sched::WorkerId, sched::QueryId>> enqueued;  // into a worker's own queue
  std::vector<sched::QueryId> dropped;
  std::vector<std::pair<Nanos, std::int64_t>> timers;  // (at, tag)

 private:
  std::shared_ptr<const profile::Profile> profile_;
  Nanos now_ = 0;
  std::vector<sched::HardwareId> hw_;
  std::vector<std::vector<sched::ModelId>> models_;
  std::vector<sched::WorkerStatus> status_;
  std::vector<Nanos> busy_until_;
  std::vector<sched::QueryQueue> worker_queues_;
  std::deque<sched::QueryId> central_;
  std::vector<sched::Query> queries_;
  mutable std::vector<sched::WorkerId> idle_;
};

// "gpu" serves b items in 20 + b ms, "cpu" in 2 + 4b ms (b = 1..100, fixed single samples): the
// GPU's speedup grows with the query size, as in Kairos's Fig. 5. One model, "m".
inline std::shared_ptr<profile::Profile> gpu_cpu_profile() {
  auto p = std::make_shared<profile::Profile>();
  p->set_price("gpu", 0.5);
  p->set_price("cpu", 0.15);
  for (std::int64_t b : {1, 100}) {
    p->set_latency("gpu", "m", b, profile::LatencyDistribution::from_samples({(20.0 + b) / 1e3}));
    p->set_latency("cpu", "m", b, profile::LatencyDistribution::from_samples({(2.0 + 4.0 * b) / 1e3}));
  }
  return p;
}

}  // namespace servelab::testing
