#include "servelab/cluster/cluster_state.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"

namespace servelab::cluster {
namespace {

constexpr double kNanosPerHour = 3.6e12;

// A query's share of its batch's cost, by items. One item: x * 1 / 1 is x exactly, without the
// division.
float cost_share(double batch_cost, std::int32_t size, std::int32_t items) {
  return items == 1 ? static_cast<float>(batch_cost)
                    : static_cast<float>(batch_cost * size / static_cast<double>(items));
}

void erase_one(std::deque<QueryId>& queue, QueryId id) {
  // Policies mostly take from the front, so search from there.
  const auto it = std::find(queue.begin(), queue.end(), id);
  if (it != queue.end()) queue.erase(it);
}

}  // namespace

ClusterState::ClusterState(const RunSpec& spec, WorldHooks& hooks)
    : sched::ClusterView(central_),
      profile_(spec.profile),
      decision_(spec.decision_statistic),
      hooks_(hooks),
      clock_(hooks.clock()),
      seed_(spec.seed) {
  const auto& profile = *profile_;
  const auto n_models = profile.models().size();
  accuracy_.resize(n_models);
  for (std::size_t m = 0; m < n_models; ++m) accuracy_[m] = static_cast<float>(profile.accuracy(static_cast<int>(m)));
  price_per_ns_.resize(profile.hardware().size(), 0.0);
  for (std::size_t h = 0; h < price_per_ns_.size(); ++h) {
    try {
      price_per_ns_[h] = profile.price(static_cast<int>(h)) / kNanosPerHour;
    } catch (const KeyError&) {
      price_per_ns_[h] = 0.0;  // only hardware in use must have a price (RunSpec::validate checks)
    }
  }
  tables_.resize(profile.hardware().size() * n_models);
  // Records grow by one per arrival; reserving for a known count avoids reallocating them. A run
  // that its horizon may end first reserves address space up to the count (or 50M) instead.
  const auto& workload = *spec.workload;
  const std::int64_t expected = std::min<std::int64_t>(workload.max_count(), 50'000'000);
  const bool count_ends_it = workload.max_count() != workload::kUnlimitedCount &&
                             workload.expected_queries() >= static_cast<double>(workload.max_count());
  if (spec.records.streaming()) {
    records_.reserve(static_cast<std::size_t>(std::min(expected, kStreamBlock)));
  } else {
    records_.reserve(static_cast<std::size_t>(expected),
                     count_ends_it ? QueryRecords::Room::Expected : QueryRecords::Room::AtMost);
  }
  for (const auto& app : spec.workload->apps()) {
    app_names_.push_back(app.name);
    app_slo_.push_back(app.slo);
    app_floor_.push_back(workload::stored_accuracy_floor(app.accuracy_floor));
  }
  if (spec.records.streaming()) {
    record_mode_ = spec.records;
    stream_ = std::make_shared<StreamSummary>(app_names_.size(), spec.stream_window);
    sample_key_ = Rng(spec.seed, "records/sample").identity();
  }
  // Room for the initial workers at once: growing the vector would copy every slot (a deque's
  // move may throw, so vectors copy them): half of the setup of 10,000 workers.
  std::size_t initial_workers = 0;
  for (std::size_t g = 0; g < spec.workers.size(); ++g) initial_workers += static_cast<std::size_t>(spec.group_size(g));
  workers_.reserve(initial_workers);
  first_models_.reserve(initial_workers);
  queue_lengths_.reserve(initial_workers);
  // Declared machines first (ids 0..declared-1, group by group); each worker not placed on one
  // gets a machine of its own as it is added.
  std::map<std::string, sched::MachineId, std::less<>> first_machine;
  for (const auto& group : spec.machines) {
    first_machine[group.name] = static_cast<sched::MachineId>(machines_.size());
    std::string hardware = group.hardware;
    for (const auto& w : spec.workers) {
      if (hardware.empty() && w.machine == group.name) hardware = w.hardware;
    }
    for (std::int32_t i = 0; i < group.count; ++i) {
      Machine m;
      m.hardware = profile.hardware_index(hardware);
      m.resources = group.resources;
      m.declared = true;
      machines_.push_back(std::move(m));
    }
  }
  declared_machines_ = static_cast<sched::MachineId>(machines_.size());
  if (declared_machines_ == 0) machines_.reserve(initial_workers);
  for (const auto& group : spec.workers) {
    const HardwareId hw = profile.hardware_index(group.hardware);
    const std::vector<ModelId> models = group_models(profile, group);
    if (group.machine.empty()) {
      for (std::int32_t i = 0; i < group.count; ++i) add_worker_now(hw, models, group.config);
      continue;
    }
    const auto first = first_machine.at(group.machine);
    const std::int32_t machines = spec.machine_group(group.machine)->count;
    for (std::int32_t m = 0; m < machines; ++m) {
      for (std::int32_t i = 0; i < group.count; ++i) add_worker_now(hw, models, group.config, first + m);
    }
  }
  // A declared machine's price is shared by the instances it was declared with (at least one).
  for (sched::MachineId m = 0; m < declared_machines_; ++m) {
    Machine& host = machines_[static_cast<std::size_t>(m)];
    host.price_share = 1.0 / static_cast<double>(std::max<std::size_t>(1, host.instances.size()));
  }
}

WorkerId ClusterState::add_worker_now(HardwareId hardware, std::vector<ModelId> models,
                                      const std::map<std::string, std::int64_t>& config, sched::MachineId machine) {
  Worker w;
  w.hardware = hardware;
  for (const ModelId m : models) {
    if (!w.has_model.contains(m)) w.models.push_back(m);
    w.has_model.set(m, true);
  }
  w.config.insert(config.begin(), config.end());
  w.added = time();
  w.busy_until = w.added;
  w.status = WorkerStatus::Starting;
  const auto id = static_cast<WorkerId>(workers_.size());
  if (machine < 0) {
    Machine own;
    own.hardware = hardware;
    machine = static_cast<sched::MachineId>(machines_.size());
    machines_.push_back(std::move(own));
  }
  Machine& host = machines_[static_cast<std::size_t>(machine)];
  w.machine = machine;
  w.pays = host.instances.empty();  // a machine is paid once, by its first instance
  w.on_declared = host.declared;
  host.instances.push_back(id);
  workers_.push_back(std::move(w));
  worker_count_ = static_cast<WorkerId>(workers_.size());
  idle_.add_worker(id, hardware);
  first_models_.emplace_back();
  update_first_model(id);
  queue_lengths_.push_back(0);
  // What the view's base class reads may have moved: the index's groups, the first models, the
  // queue lengths.
  publish_idle_set(idle_.all_bits());
  publish_first_models(first_models_.data(), first_models_.size());
  publish_queue_lengths(queue_lengths_.data(), queue_lengths_.size());
  set_status(id, WorkerStatus::Idle);
  return id;
}

void ClusterState::bad_worker(WorkerId worker) const {
  throw ValueError(str("worker=", worker, " is not a worker id (0..", num_workers() - 1, ")"));
}

void ClusterState::set_status(WorkerId worker, WorkerStatus status) {
  workers_[worker].status = status;
  if (status == WorkerStatus::Idle) {
    idle_.set_idle(worker);
  } else {
    idle_.set_not_idle(worker);
  }
}

WorkerId ClusterState::nth_idle(HardwareId hardware, std::int32_t i) const {
  const auto members = idle_.members(hardware);
  if (i < 0 || i >= static_cast<std::int32_t>(members.size())) {
    throw ValueError(str("nth_idle: i=", i, " is not below the ", members.size(), " idle workers"));
  }
  return members[i];
}

void ClusterState::grow_rows() {
  // Rows are filled ahead in blocks (a vectorised fill per column instead of 15 push_backs per
  // query), up to the reserved capacity (past it every column would reallocate early); beyond
  // it a block at a time, the columns growing as push_back would have grown them.
  constexpr std::size_t kBlock = 512;  // x 70 bytes: about what the first-level cache holds
  const std::size_t capacity = records_.arrival.capacity();
  records_.append_rows(rows_ < capacity ? std::min(kBlock, capacity - rows_) : kBlock);
}

void ClusterState::join_central(QueryId id) {
  set_where(id, kCentral);
  central_.push_back(id);
}

Query ClusterState::query(QueryId id) const {
  if (id < 0 || id >= arrived()) {
    throw ValueError(str("query=", id, " has not arrived (", arrived(), " queries so far)"));
  }
  if (id < base_) {
    throw ValueError(str("query=", id, " has ended and its record was streamed out (records='", record_mode_.text(),
                         "' keeps summaries, not records)"));
  }
  Query q;
  q.id = id;
  q.app = records_.app[id - base_];
  q.size = records_.size[id - base_];
  q.arrival = records_.arrival[id - base_];
  q.deadline = records_.deadline[id - base_];
  q.accuracy_floor = app_floor_[q.app];
  return q;
}

void ClusterState::bad_query(QueryId id, std::string_view action) const {
  if (id < 0 || id >= arrived()) {
    throw ValueError(str(action, ": query=", id, " has not arrived (", arrived(), " queries so far)"));
  }
  if (where(id) == kRunning) throw ValueError(str(action, ": query=", id, " is already running"));
  throw ValueError(str(action, ": query=", id, " has already ended"));
}

void ClusterState::bad_model(ModelId model, std::string_view action) const {
  throw ValueError(str(action, ": model=", model, " is not a model id (0..", accuracy_.size() - 1, ")"));
}

void ClusterState::unlink(QueryId id) {
  const auto w = where(id);
  if (w == kCentral) {
    erase_one(central_, id);
  } else if (w >= 0) {
    workers_[w].queue.erase(id);
    update_queue_length(w);
  }
}

Nanos ClusterState::busy_until(WorkerId worker) const {
  const Worker& w = at(worker);
  return w.status == WorkerStatus::Idle ? time() : w.busy_until;
}

bool ClusterState::has_model(WorkerId worker, ModelId model) const {
  const Worker& w = at(worker);
  return model >= 0 && model < static_cast<ModelId>(accuracy_.size()) && w.has_model.contains(model);
}

std::int64_t ClusterState::config(WorkerId worker, std::string_view key, std::int64_t fallback) const {
  const Worker& w = at(worker);
  const auto it = w.config.find(key);
  return it == w.config.end() ? fallback : it->second;
}

const std::vector<Nanos>& ClusterState::load_table(HardwareId hardware, ModelId model) const {
  auto& t = tables_[static_cast<std::size_t>(hardware) * accuracy_.size() + model];
  if (t.empty() && profile_->has_latency(hardware, model)) t = profile_->decision_table(hardware, model, decision_);
  return t;
}

std::int64_t ClusterState::max_batch(WorkerId worker, ModelId model) const {
  check_model(model, "max_batch");
  const auto& t = table(at(worker).hardware, model);
  return t.empty() ? 0 : static_cast<std::int64_t>(t.size()) - 1;
}

void ClusterState::update_first_model(WorkerId worker) {
  const Worker& w = workers_[worker];
  FirstModel first;
  if (!w.models.empty()) {
    const auto& t = table(w.hardware, w.models.front());
    first.model = w.models.front();
    first.max_items = t.empty() ? -1 : static_cast<std::int32_t>(t.size() - 1);
  }
  first_models_[worker] = first;
}

ModelId ClusterState::model_for_scan(const Worker& w, const Query& query) const {
  // What models() and max_batch() per model answer: the worker's models are valid ids (checked
  // when loaded), so max_batch's model check is left out.
  for (const ModelId m : w.models) {
    if (query.accuracy_floor > 0) {
      const double acc = profile_->accuracy(m);
      if (std::isnan(acc) || acc < query.accuracy_floor) continue;
    }
    const auto& t = table(w.hardware, m);
    const std::int64_t max = t.empty() ? 0 : static_cast<std::int64_t>(t.size()) - 1;
    if (query.size <= max) return m;
  }
  return -1;
}

Nanos ClusterState::predicted_latency(WorkerId worker, ModelId model, std::int64_t items) const {
  check_model(model, "predicted_latency");
  const HardwareId hw = at(worker).hardware;
  const auto& t = table(hw, model);
  const auto max = t.empty() ? 0 : static_cast<std::int64_t>(t.size()) - 1;
  if (items < 1 || items > max) {
    throw ValueError(str("predicted_latency: batch=", items, " is outside the profile of model '",
                         profile_->models()[model], "' on '", profile_->hardware()[hw], "' (1..", max, ")"));
  }
  return t[items];
}

void ClusterState::start(Worker& w, WorkerId worker, ModelId model, std::int64_t items, Nanos predicted, Nanos now) {
  RunningBatch& batch = w.batch;
  batch.model = model;
  batch.items = items;
  batch.dispatched = now;
  w.batch_first = batch.queries.front();
  w.busy_until = now + predicted;
  w.status = WorkerStatus::Busy;  // set_status's work, inline
  idle_.set_not_idle(worker);
  ++running_;
  hooks_.start_batch(worker, w.hardware, batch);
}

bool ClusterState::dispatch_one(WorkerId worker, ModelId model, QueryId id) {
  if (static_cast<std::uint32_t>(worker) >= static_cast<std::uint32_t>(worker_count_)) return false;
  Worker& w = workers_[worker];
  if (w.status != WorkerStatus::Idle || model < 0 || model >= static_cast<ModelId>(accuracy_.size()) ||
      !w.has_model.contains(model) || id < base_ || id >= arrived()) {
    return false;
  }
  const auto row = static_cast<std::size_t>(id - base_);
  const std::int32_t place = records_.worker[row];  // where() of a pending query
  if (records_.status[row] != kPending || place == kRunning || place == kEnded) return false;
  const std::int64_t items = records_.size[row];
  const auto& t = table(w.hardware, model);
  if (items >= static_cast<std::int64_t>(t.size())) return false;
  const Nanos now = time();
  if (place == kCentral) {
    erase_one(central_, id);
  } else if (place >= 0) {
    workers_[place].queue.erase(id);
    update_queue_length(place);
  }
  records_.worker[row] = kRunning;
  records_.dispatch[row] = now;
  auto& ids = w.batch.queries;
  if (ids.size() == 1) {
    ids.front() = id;  // a one-query batch after another: no copy call
  } else {
    ids.assign(1, id);
  }
  start(w, worker, model, items, t[items], now);
  return true;
}

void ClusterState::dispatch(WorkerId worker, ModelId model, std::span<const QueryId> queries) {
  if (queries.size() == 1 && dispatch_one(worker, model, queries.front())) [[likely]]
    return;
  dispatch_checked(worker, model, queries);
}

void ClusterState::dispatch_checked(WorkerId worker, ModelId model, std::span<const QueryId> queries) {
  Worker& w = at(worker);
  if (w.status != WorkerStatus::Idle) {
    throw ValueError(str("dispatch: worker=", worker, " is ", sched::worker_status_name(w.status), ", not idle"));
  }
  check_model(model, "dispatch");
  if (!w.has_model.contains(model)) {
    throw ValueError(str("dispatch: model '", profile_->models()[model], "' is not loaded on worker=", worker));
  }
  if (queries.empty()) throw ValueError(str("dispatch: an empty batch for worker=", worker));
  std::int64_t items = 0;
  for (const QueryId id : queries) {
    check_query(id, "dispatch");
    items += records_.size[id - base_];
  }
  if (queries.size() > 1) {
    std::vector<QueryId>& sorted = batch_ids_;
    sorted.assign(queries.begin(), queries.end());
    std::sort(sorted.begin(), sorted.end());
    const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
    if (dup != sorted.end()) throw ValueError(str("dispatch: query=", *dup, " appears twice in the batch"));
  }
  const auto& t = table(w.hardware, model);  // indexed by batch size
  if (items >= static_cast<std::int64_t>(t.size())) {
    throw ValueError(str("dispatch: batch of ", items, " items on worker=", worker, " exceeds the profile of model '",
                         profile_->models()[model], "' on '", profile_->hardware()[w.hardware], "' (max ", t.size() - 1,
                         ")"));
  }
  const Nanos now = time();
  for (const QueryId id : queries) {
    unlink(id);
    set_where(id, kRunning);
    records_.dispatch[id - base_] = now;
  }
  w.batch.queries.assign(queries.begin(), queries.end());
  start(w, worker, model, items, t[items], now);
}

BatchDone ClusterState::finish_batch(WorkerId worker, Nanos start, Nanos finish) {
  Worker& w = workers_[worker];
  const RunningBatch& batch = w.batch;
  double batch_cost = price_per_ns_[w.hardware] * static_cast<double>(finish - start);
  // On a declared machine its instances share its price: a batch pays its share of the time.
  if (w.on_declared) [[unlikely]]
    batch_cost *= machines_[static_cast<std::size_t>(w.machine)].price_share;
  if (batch.queries.size() == 1) {
    // Its size is the batch's items: no reads of its record. The int8 status column may alias
    // anything, so it is written last (the other columns' addresses are read before it).
    const auto i = static_cast<std::size_t>(w.batch_first - base_);
    const auto items = static_cast<std::int32_t>(batch.items);
    records_.start[i] = start;
    records_.finish[i] = finish;
    records_.worker[i] = worker;
    records_.model[i] = static_cast<std::int16_t>(batch.model);
    records_.batch_items[i] = items;
    records_.batch_queries[i] = 1;
    records_.accuracy[i] = accuracy_[batch.model];
    records_.cost[i] = cost_share(batch_cost, items, items);
    records_.drop_reason[i] = -1;
    records_.status[i] = static_cast<std::int8_t>(QueryStatus::Completed);
  } else {
    end_rows(w, worker, start, finish, batch_cost);
  }
  w.busy += finish - start;
  w.last_latency = finish - start;
  ++w.batches;
  --running_;
  const BatchDone done{worker, batch.model, batch.items, static_cast<std::int32_t>(batch.queries.size()),
                       start,  finish};
  if (w.removing) {
    w.stopped = time();
    set_status(worker, WorkerStatus::Stopped);
  } else {
    w.busy_until = time();
    w.status = WorkerStatus::Idle;  // set_status's work, inline
    idle_.set_idle(worker);
  }
  return done;
}

void ClusterState::end_rows(const Worker& w, WorkerId worker, Nanos start, Nanos finish, double batch_cost) {
  const RunningBatch& batch = w.batch;
  const float accuracy = accuracy_[batch.model];
  // The columns' addresses in locals: the int8 status column may alias anything, so indexing
  // through the vectors would reload every address after each of its writes.
  Nanos* const start_col = records_.start.data();
  Nanos* const finish_col = records_.finish.data();
  std::int32_t* const worker_col = records_.worker.data();
  std::int16_t* const model_col = records_.model.data();
  std::int32_t* const items_col = records_.batch_items.data();
  std::int32_t* const queries_col = records_.batch_queries.data();
  std::int8_t* const status_col = records_.status.data();
  std::int8_t* const reason_col = records_.drop_reason.data();
  float* const accuracy_col = records_.accuracy.data();
  float* const cost_col = records_.cost.data();
  const std::int32_t* const size_col = records_.size.data();
  const auto model = static_cast<std::int16_t>(batch.model);
  const auto items = static_cast<std::int32_t>(batch.items);
  const auto count = static_cast<std::int32_t>(batch.queries.size());
  for (const QueryId id : batch.queries) {
    const auto i = static_cast<std::size_t>(id - base_);
    start_col[i] = start;
    finish_col[i] = finish;
    worker_col[i] = worker;
    model_col[i] = model;
    items_col[i] = items;
    queries_col[i] = count;
    status_col[i] = static_cast<std::int8_t>(QueryStatus::Completed);
    reason_col[i] = -1;
    accuracy_col[i] = accuracy;
    cost_col[i] = cost_share(batch_cost, size_col[i], items);
  }
}

BatchDone ClusterState::fail_batch(WorkerId worker, Nanos start, Nanos finish, std::string_view reason) {
  const auto queries = workers_[worker].batch.queries;  // finish_batch moves on
  const BatchDone done = finish_batch(worker, start, finish);
  --workers_[worker].batches;  // `batches` counts the batches the records show: completed ones
  for (const QueryId id : queries) {
    end_dropped(id, reason);  // over the completed record finish_batch wrote
  }
  return done;
}

bool ClusterState::finish_transition(WorkerId worker) {
  Worker& w = workers_[worker];
  --transitions_;
  if (w.status == WorkerStatus::Loading && w.loading >= 0) {
    if (!w.has_model.contains(w.loading)) w.models.push_back(w.loading);
    w.has_model.set(w.loading, true);
    w.loading = -1;
    update_first_model(worker);
  }
  if (w.removing) {
    w.stopped = time();
    set_status(worker, WorkerStatus::Stopped);
    return false;
  }
  w.busy_until = time();
  set_status(worker, WorkerStatus::Idle);
  return true;
}

void ClusterState::enqueue(QueryId id) {
  check_query(id, "enqueue");
  unlink(id);
  set_where(id, kCentral);
  central_.push_back(id);
}

void ClusterState::enqueue_to_worker(WorkerId worker, QueryId id) {
  Worker& w = at(worker);
  check_query(id, "enqueue_to_worker");
  if (w.status == WorkerStatus::Stopped || w.removing) {
    throw ValueError(str("enqueue_to_worker: worker=", worker, " is stopped or being removed"));
  }
  unlink(id);
  set_where(id, worker);
  w.queue.push_back(id);
  update_queue_length(worker);
}

std::int8_t ClusterState::reason_index(std::string_view reason) {
  const auto it = std::find(reasons_.begin(), reasons_.end(), reason);
  if (it != reasons_.end()) return static_cast<std::int8_t>(it - reasons_.begin());
  if (reasons_.size() >= 127) throw ValueError(str("drop: more than 127 distinct reasons; reason='", reason, "'"));
  reasons_.emplace_back(reason);
  return static_cast<std::int8_t>(reasons_.size() - 1);
}

void ClusterState::end_dropped(QueryId id, std::string_view reason) {
  records_.status[id - base_] = static_cast<std::int8_t>(QueryStatus::Dropped);
  records_.drop_reason[id - base_] = reason_index(reason);
  records_.finish[id - base_] = time();
  records_.dispatch[id - base_] = -1;  // a batch cut off at the end of a run never counts as served
  records_.start[id - base_] = -1;
  records_.worker[id - base_] = -1;
  records_.model[id - base_] = -1;
  records_.batch_items[id - base_] = 0;
  records_.batch_queries[id - base_] = 0;
  records_.accuracy[id - base_] = std::numeric_limits<float>::quiet_NaN();
  records_.cost[id - base_] = 0.f;
  if (drop_listener_) drop_listener_(id, reason);
}

void ClusterState::drop(QueryId id, std::string_view reason) {
  check_query(id, "drop");
  if (reason.empty()) throw ValueError(str("drop: query=", id, " needs a non-empty reason"));
  unlink(id);
  end_dropped(id, reason);
}

void ClusterState::set_timer(Nanos at_time, std::int64_t tag) {
  if (at_time < time()) {
    throw ValueError(str("set_timer: at=", at_time, " ns is before now=", time(), " ns"));
  }
  hooks_.start_timer(at_time, tag);
}

WorkerId ClusterState::add_worker(std::string_view hardware, std::span<const ModelId> models, Nanos startup) {
  if (startup < 0) throw ValueError(str("add_worker: startup=", startup, " ns must be >= 0"));
  const HardwareId hw = profile_->hardware_index(hardware);
  profile_->price(hw);  // KeyError when the profile has no price for it
  std::vector<ModelId> list;
  for (const ModelId m : models) {
    check_model(m, "add_worker");
    if (!profile_->has_latency(hw, m)) {
      throw ValueError(
          str("add_worker: the profile has no latency for model '", profile_->models()[m], "' on '", hardware, "'"));
    }
    list.push_back(m);
  }
  const WorkerId id = add_worker_now(hw, std::move(list), {});
  set_status(id, WorkerStatus::Starting);
  workers_[id].busy_until = time() + startup;
  ++transitions_;
  hooks_.start_transition(id, startup);
  return id;
}

void ClusterState::remove_worker(WorkerId worker) {
  Worker& w = at(worker);
  if (w.status == WorkerStatus::Stopped || w.removing) {
    throw ValueError(str("remove_worker: worker=", worker, " is already stopped or being removed"));
  }
  w.removing = true;
  for (const QueryId id : w.queue) {
    set_where(id, kCentral);
    central_.push_back(id);
  }
  w.queue.clear();
  update_queue_length(worker);
  if (w.status == WorkerStatus::Idle) {
    w.stopped = time();
    set_status(worker, WorkerStatus::Stopped);
  }
}

void ClusterState::load_model(WorkerId worker, ModelId model) {
  Worker& w = at(worker);
  check_model(model, "load_model");
  if (w.status != WorkerStatus::Idle) {
    throw ValueError(str("load_model: worker=", worker, " is ", sched::worker_status_name(w.status), ", not idle"));
  }
  if (!profile_->has_latency(w.hardware, model)) {
    throw ValueError(str("load_model: the profile has no latency for model '", profile_->models()[model], "' on '",
                         profile_->hardware()[w.hardware], "'"));
  }
  const Nanos load = seconds_to_nanos(profile_->load_time(w.hardware, model).value_or(0.0), "load_time");
  if (!w.has_model.contains(model)) {
    check_memory_fits(w.machine, profile_->memory_mb(w.hardware, model).value_or(0.0), "load_model");
  }
  w.loading = model;
  w.busy_until = time() + load;
  set_status(worker, WorkerStatus::Loading);
  ++transitions_;
  hooks_.start_transition(worker, load);
}

void ClusterState::unload_model(WorkerId worker, ModelId model) {
  Worker& w = at(worker);
  check_model(model, "unload_model");
  if (!w.has_model.contains(model)) {
    throw ValueError(str("unload_model: model '", profile_->models()[model], "' is not loaded on worker=", worker));
  }
  if (w.status == WorkerStatus::Busy && w.batch.model == model) {
    throw ValueError(str("unload_model: worker=", worker, " is running model '", profile_->models()[model], "'"));
  }
  w.has_model.set(model, false);
  w.models.erase(std::find(w.models.begin(), w.models.end(), model));
  update_first_model(worker);
}

void ClusterState::set_config(WorkerId worker, std::string_view key, std::int64_t value) {
  Worker& w = at(worker);
  if (key.empty()) throw ValueError(str("set_config: worker=", worker, " needs a non-empty key"));
  const bool cores = key == sched::kCoresKnob, ways = key == sched::kLlcWaysKnob;
  if (cores || ways) {
    if (value < 0) throw ValueError(str("set_config: worker=", worker, " ", key, "=", value, " must be >= 0"));
    const Machine& host = machines_[static_cast<std::size_t>(w.machine)];
    const std::int64_t total = cores ? host.resources.cores : host.resources.llc_ways;
    if (total > 0) {
      const auto it = w.config.find(key);
      const std::int64_t mine = it == w.config.end() ? 0 : it->second;
      const std::int64_t left = (cores ? free_resources(w.machine).cores : free_resources(w.machine).llc_ways) + mine;
      if (value > left) {
        throw ValueError(str("set_config: worker=", worker, " ", key, "=", value, " does not fit machine=", w.machine,
                             ": ", left, " of its ", total, " are not given to its other instances"));
      }
    }
  }
  w.config.insert_or_assign(std::string(key), value);
  hooks_.config_changed(worker);
}

void ClusterState::bad_machine(sched::MachineId machine, std::string_view call) const {
  throw ValueError(str(call, ": machine=", machine, " is not a machine id (0..", num_machines() - 1, ")"));
}

double ClusterState::memory_of(const Worker& w) const {
  if (w.status == WorkerStatus::Stopped) return 0;
  double mb = 0;
  for (const ModelId m : w.models) mb += profile_->memory_mb(w.hardware, m).value_or(0.0);
  if (w.loading >= 0) mb += profile_->memory_mb(w.hardware, w.loading).value_or(0.0);
  return mb;
}

sched::MachineResources ClusterState::free_resources(sched::MachineId machine) const {
  const Machine& host = machine_at(machine, "free_resources");
  sched::MachineResources left = host.resources;
  double memory = 0;
  for (const WorkerId id : host.instances) {
    const Worker& w = workers_[id];
    if (w.status == WorkerStatus::Stopped) continue;
    const auto knob = [&](const char* key) {
      const auto it = w.config.find(std::string_view(key));
      return it == w.config.end() ? std::int64_t{0} : it->second;
    };
    if (left.cores > 0) left.cores -= static_cast<std::int32_t>(knob(sched::kCoresKnob));
    if (left.llc_ways > 0) left.llc_ways -= static_cast<std::int32_t>(knob(sched::kLlcWaysKnob));
    memory += memory_of(w);
  }
  if (left.accel_memory_mb > 0) {
    left.accel_memory_mb -= memory;
  } else if (left.memory_mb > 0) {
    left.memory_mb -= memory;
  }
  return left;
}

void ClusterState::check_memory_fits(sched::MachineId machine, double extra_mb, std::string_view action) const {
  const Machine& host = machines_[static_cast<std::size_t>(machine)];
  const bool accel = host.resources.accel_memory_mb > 0;
  if (!accel && !(host.resources.memory_mb > 0)) return;  // not modelled
  const auto left = free_resources(machine);
  const double room = accel ? left.accel_memory_mb : left.memory_mb;
  if (extra_mb > room) {
    throw ValueError(str(action, ": machine=", machine, " has ", room, " MB of ",
                         accel ? "accel_memory_mb" : "memory_mb", " free, the models need ", extra_mb, " MB"));
  }
}

WorkerId ClusterState::add_instance(sched::MachineId machine, std::span<const ModelId> models) {
  const Machine& host = machine_at(machine, "add_instance");
  if (!host.declared) {
    const Worker& only = workers_[host.instances.front()];
    if (only.status == WorkerStatus::Stopped || only.removing) {
      throw ValueError(str("add_instance: machine=", machine, " (worker ", host.instances.front(), "'s) is stopped"));
    }
  }
  if (models.empty()) throw ValueError(str("add_instance: machine=", machine, ": an instance needs a model"));
  std::vector<ModelId> list;
  double memory = 0;
  Nanos load = 0;
  for (const ModelId m : models) {
    check_model(m, "add_instance");
    if (!profile_->has_latency(host.hardware, m)) {
      throw ValueError(str("add_instance: the profile has no latency for model '", profile_->models()[m], "' on '",
                           profile_->hardware()[host.hardware], "'"));
    }
    memory += profile_->memory_mb(host.hardware, m).value_or(0.0);
    load = std::max(load, seconds_to_nanos(profile_->load_time(host.hardware, m).value_or(0.0), "load_time"));
    list.push_back(m);
  }
  check_memory_fits(machine, memory, "add_instance");
  const WorkerId id = add_worker_now(host.hardware, std::move(list), {}, machine);
  set_status(id, WorkerStatus::Starting);
  workers_[id].busy_until = time() + load;
  ++transitions_;
  hooks_.start_transition(id, load);
  return id;
}

bool ClusterState::has_pending_queries() const {
  if (!central_.empty()) return true;
  for (const Worker& w : workers_) {
    if (!w.queue.empty()) return true;
  }
  return false;
}

bool ClusterState::quiescent() const { return running_ == 0 && transitions_ == 0 && !has_pending_queries(); }

RunResult ClusterState::finish(Nanos end, std::string_view reason, std::string world, std::string scheduler) {
  // The queries not ended are those still pending (where() says kEnded for every other status):
  // a search of the int8 status column (memchr, many rows per instruction) instead of a where()
  // per row, which cost 11 instructions per query of a run.
  const std::int8_t* const status = records_.status.data();
  for (std::size_t i = 0; i < rows_; ++i) {
    const void* pending = std::memchr(status + i, kPending, rows_ - i);
    if (!pending) break;
    i = static_cast<std::size_t>(static_cast<const std::int8_t*>(pending) - status);
    end_dropped(base_ + static_cast<QueryId>(i), reason);
  }
  records_.truncate(rows_);  // the rows filled ahead and never used
  if (stream_) {
    stream_out();
    stream_->finish();
  }
  central_.clear();
  RunResult result;
  result.world = std::move(world);
  result.scheduler = std::move(scheduler);
  result.seed = seed_;
  result.duration = end;
  for (const Worker& w : workers_) {
    const Nanos stop = w.stopped >= 0 ? w.stopped : end;
    const Nanos active = std::max<Nanos>(0, stop - w.added);
    result.workers.hardware.push_back(w.hardware);
    result.workers.busy.push_back(w.busy);
    result.workers.active.push_back(active);
    // A declared machine is paid from the start to the end of the run, by its first instance.
    const Nanos paid = !w.pays ? 0 : w.on_declared ? end : active;
    result.workers.cost.push_back(price_per_ns_[w.hardware] * static_cast<double>(paid));
    result.workers.batches.push_back(w.batches);
    result.workers.machine.push_back(w.machine);
  }
  for (auto& w : workers_) w.queue.clear();
  std::fill(queue_lengths_.begin(), queue_lengths_.end(), 0);
  if (stream_) {
    result.records = record_mode_;
    result.streamed = std::move(stream_);
    result.queries = std::move(sampled_);
    result.sampled_ids = std::move(sampled_ids_);
    result.peak_bytes = peak_bytes_;
  } else {
    result.queries = std::move(records_);
  }
  records_ = {};
  rows_ = 0;
  result.drop_reasons = reasons_;
  result.models = profile_->models();
  result.hardware = profile_->hardware();
  result.apps = app_names_;
  result.app_slo = app_slo_;
  return result;
}

void ClusterState::stream_out() {
  // Every record before the oldest pending query has ended: summarise it (in id order, so the
  // summary is deterministic), keep it if sampled, and free it.
  const std::size_t n = rows_;
  std::size_t ended = 0;
  while (ended < n && records_.status[ended] != kPending) ++ended;
  const bool sample = record_mode_.kind == RecordMode::Kind::Sample;
  // A query is in the sample when a hash of (run seed's stream, id) falls below p: a seeded
  // Bernoulli draw that does not depend on when its record is streamed out.
  const auto threshold = static_cast<double>(record_mode_.p) * 0x1.0p64;
  for (std::size_t i = 0; i < ended; ++i) {
    stream_->add(records_, i);
    if (sample) {
      const auto id = base_ + static_cast<QueryId>(i);
      if (static_cast<double>(mix64(sample_key_ ^ static_cast<std::uint64_t>(id))) < threshold) {
        sampled_.append_row(records_, i);
        sampled_ids_.push_back(id);
      }
    }
  }
  const std::size_t held =
      records_.capacity_bytes() + stream_->bytes() + sampled_.capacity_bytes() + sampled_ids_.capacity() * 8;
  peak_bytes_ = std::max(peak_bytes_, held);
  records_.erase_front(ended);
  rows_ -= ended;
  base_ += static_cast<QueryId>(ended);
  // Pending queries older than half the block make the block grow, so the copying stays
  // amortised O(1) per query; a steady run stays at kStreamBlock records.
  stream_at_ = std::max<std::size_t>(kStreamBlock, 2 * rows_);
}

}  // namespace servelab::cluster
