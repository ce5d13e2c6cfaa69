#include "servelab/sim/engine.hpp"

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <memory>
#include <queue>
#include <span>
#include <vector>

#include "servelab/cluster/cluster_state.hpp"
#include "servelab/cluster/config_model.hpp"
#include "servelab/cluster/interference.hpp"
#include "servelab/cluster/loop_model.hpp"
#include "servelab/cluster/service_streams.hpp"
#include "servelab/cluster/service_times.hpp"
#include "servelab/cluster/world_event.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/rng.hpp"

namespace servelab::sim {
namespace {

using cluster::ClusterState;
using cluster::RunningBatch;
using sched::HardwareId;
using sched::WorkerId;

using EventKind = cluster::WorldEventKind;
using Event = cluster::WorldEvent;

// The machines' pending batch ends under an interference model, earliest first in the world
// queue's order (time, then scheduling order): a 4-ary heap that tracks each machine's place, so
// a re-timing moves its machine's end in place. (Queued as events, each re-timed end was pushed
// anew and the replaced one popped and skipped when due: two more events a query.) Laid out as
// sched::WorkerHeap is, with the whole key in the entry so that a comparison reads the heap only.
class MachineEnds {
 public:
  bool empty() const { return heap_.empty(); }
  // The earliest end, as the batch's end event it stands for.
  Event top() const {
    const Entry& e = heap_.front();
    const auto hi = static_cast<std::uint64_t>(e.key >> 64), lo = static_cast<std::uint64_t>(e.key);
    return {static_cast<Nanos>(hi ^ kSignBit), EventKind::BatchDone, static_cast<std::int64_t>(lo), e.worker};
  }
  // Sets the machine's end, or adds it.
  void set(sched::MachineId machine, Nanos at, std::int64_t seq, WorkerId worker) {
    const Entry entry{(Key{static_cast<std::uint64_t>(at) ^ kSignBit} << 64) | static_cast<std::uint64_t>(seq), machine,
                      worker};
    const auto m = static_cast<std::size_t>(machine);
    if (pos_.size() <= m) pos_.resize(m + 1, -1);
    if (pos_[m] < 0) {
      heap_.emplace_back();
      return up(heap_.size() - 1, entry);
    }
    const auto i = static_cast<std::size_t>(pos_[m]);
    if (entry.key < heap_[i].key) return up(i, entry);
    down(i, entry);
  }
  void erase(sched::MachineId machine) {
    const auto m = static_cast<std::size_t>(machine);
    if (m >= pos_.size() || pos_[m] < 0) return;
    const auto i = static_cast<std::size_t>(pos_[m]);
    const Entry last = heap_.back();
    heap_.pop_back();
    pos_[m] = -1;
    if (i == heap_.size()) return;  // it was the last entry
    if (last.key < heap_[i].key) return up(i, last);
    down(i, last);
  }

 private:
  __extension__ using Key = unsigned __int128;  // (time with its sign bit flipped, seq)
  static constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
  struct Entry {
    Key key;
    sched::MachineId machine;
    WorkerId worker;
  };
  void place(std::size_t i, Entry entry) {
    heap_[i] = entry;
    pos_[static_cast<std::size_t>(entry.machine)] = static_cast<std::int32_t>(i);
  }
  // Moves `entry` from the hole at i towards the root / the leaves until it fits.
  void up(std::size_t i, Entry entry) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(entry.key < heap_[parent].key)) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, entry);
  }
  void down(std::size_t i, Entry entry) {
    const std::size_t n = heap_.size();
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      if (first + 4 <= n) {  // a full node: a tournament, no branches
        const std::size_t a = first + (heap_[first + 1].key < heap_[first].key);
        const std::size_t b = first + 2 + (heap_[first + 3].key < heap_[first + 2].key);
        best = heap_[b].key < heap_[a].key ? b : a;
      } else {
        for (std::size_t c = first + 1; c < n; ++c) best = heap_[c].key < heap_[best].key ? c : best;
      }
      if (!(heap_[best].key < entry.key)) break;
      place(i, heap_[best]);
      i = best;
    }
    place(i, entry);
  }

  std::vector<Entry> heap_;
  std::vector<std::int32_t> pos_;  // by machine, -1 when it has no end
};

// Shared with the ClusterState it creates (through the state's deleter): a Python policy that keeps
// its view after the run keeps a valid clock (the finished run's end time) instead of a dangling one.
class Simulator final : public cluster::WorldHooks, public std::enable_shared_from_this<Simulator> {
 public:
  explicit Simulator(const cluster::RunSpec& spec) : spec_(spec), service_times_(spec.profile, spec.service_statistic) {
    clock_ = &now_;  // the state reads the virtual time directly
  }

  cluster::RunResult run(sched::Scheduler& scheduler) {
    // Released however run() ends (a policy may throw), so the state never keeps us in a cycle.
    struct ReleaseState {
      std::shared_ptr<ClusterState>& state;
      ~ReleaseState() { state.reset(); }
    } release{state_};
    auto self = shared_from_this();
    state_ = std::shared_ptr<ClusterState>(new ClusterState(spec_, *this), [self](ClusterState* p) { delete p; });
    auto stream = spec_.workload->start(spec_.seed);
    // Queries come in blocks (one virtual call per block); `next` points into the block.
    std::vector<sched::Query> block(kArrivalBlock);
    std::size_t pos = 0, len = 0;
    auto fetch = [&]() -> sched::Query* {
      if (pos == len) {
        len = stream->next_block(block.data(), block.size());
        pos = 0;
        if (len == 0) return nullptr;
      }
      return &block[pos++];
    };
    // When the scheduler sees the next arrival: its time, or under a loop model never before an
    // earlier arrival (the loop takes them up in order) and, once it is due, later by its arrival
    // delay if it finds a worker free (next_delayed: that delay is settled; loop_model.hpp).
    Nanos next_at = 0;
    bool next_delayed = false;
    auto seen_at = [&](const sched::Query* q) -> Nanos {
      if (!q) return 0;
      if (!loop_) [[likely]]
        return q->arrival;
      next_delayed = false;
      return std::max(next_at, q->arrival);
    };
    sched::Query* next = fetch();
    next_at = seen_at(next);
    Nanos last_arrival = 0;
    scheduler.on_start(*state_, *state_);
    const char* cut_reason = "unserved at end of run";
    for (std::int64_t step = 0;; ++step) {
      if ((step & 4095) == 0) core::check_interrupt();
      if (!top_known_) refresh_top();
      if (!next && (!have_event_ || state_->quiescent())) {
        if (!have_event_ && retimed_end_.seq >= 0 && !state_->quiescent()) [[unlikely]]
          end_as_with_retimed_ends(taken_step_ == step - 1, last_arrival, cut_reason);
        break;
      }
      // Events go before an arrival at the same time (completions free workers first).
      if (next && (!have_event_ || next_at < top_.time)) {
        if (loop_ && !next_delayed) [[unlikely]] {
          next_delayed = true;
          if (!state_->idle_workers().empty()) {
            const Nanos delay = loop_->arrival(loop_rng_);
            if (delay > 0) {
              next_at += delay;
              continue;  // events before the delayed arrival go first
            }
          }
        }
        // The next completion's worker slot, fetched while this arrival is handled: with many
        // batches between a worker's start and its end, it has left the first-level cache.
        if (have_event_ && top_.kind == EventKind::BatchDone) prefetch_batch_end(static_cast<WorkerId>(top_.payload));
        now_ = next_at;
        last_arrival = next->arrival;
        const auto id = state_->arrive(*next);
        next->id = id;
        scheduler.on_arrival(*next, *state_, *state_);
        state_->place_if_unplaced(id);
        next = fetch();
        next_at = seen_at(next);
        continue;
      }
      // top_ is read field by field: a whole copy would read it in 16-byte halves right after
      // push() wrote it in 8-byte fields, which cannot be forwarded (a stall).
      if (!next && top_.time > last_arrival + spec_.drain_limit) {
        now_ = last_arrival + spec_.drain_limit;
        cut_reason = "cut off at end of run";
        break;
      }
      if (own_ends_) [[unlikely]] {
        take_own_event(step, scheduler);
        continue;
      }
      Event e;
      e.time = top_.time;
      e.kind = top_.kind;
      e.seq = top_.seq;
      e.payload = top_.payload;
      pop_event();
      now_ = e.time;
      const Nanos started =
          e.kind == EventKind::BatchDone ? state_->batch_dispatched(static_cast<WorkerId>(e.payload)) : 0;
      cluster::deliver(e, started, *state_, scheduler);
    }
    return state_->finish(now_, cut_reason, "sim", scheduler.describe());
  }

  Nanos now() const override { return now_; }

  // The batch starts now, when it is dispatched (ClusterState keeps that time). With fixed
  // service times and no config model, usually a table's time and an event joining the lane's
  // back: inline without a call, so without registers to save around one. (An event joining a
  // non-empty lane is never the earliest, so the known earliest event stays as it is.)
  void start_batch(WorkerId worker, HardwareId hardware, const RunningBatch& batch) override {
    if (plain_) {
      const Nanos t = service_times_.fixed_time_in_table(hardware, batch.model, batch.items);
      if (t >= 0 && events_.try_push_lane(Event{now_ + t, EventKind::BatchDone, seq_, worker})) {
        ++seq_;
        return;
      }
    }
    start_batch_slow(worker, hardware, batch);
  }
  void start_timer(Nanos at, std::int64_t tag) override { push(at, EventKind::Timer, tag); }
  void start_transition(WorkerId worker, Nanos duration) override {
    push(now_ + duration, EventKind::TransitionDone, worker);
  }
  // A partition changed: the batches on the worker's machine run at new rates from now.
  void config_changed(WorkerId worker) override {
    if (interference_ && state_->machine(worker) != retime_after_hook_) retime(state_->machine(worker));
  }

 private:
  [[gnu::noinline]] void start_batch_slow(WorkerId worker, HardwareId hardware, const RunningBatch& batch) {
    if (interference_) return start_shared_batch(worker, hardware, batch);
    if (loop_) return start_batch_in_loop(worker, hardware, batch);
    push(now_ + service_time(worker, hardware, batch), EventKind::BatchDone, worker);
  }
  // Under a loop model: the batch starts `wake` after now and its end is seen `notice` after it
  // ends (loop_model.hpp). Drawn in this order, wake then notice, after the service time.
  void start_batch_in_loop(WorkerId worker, HardwareId hardware, const RunningBatch& batch) {
    const Nanos service = service_time(worker, hardware, batch);
    const Nanos wake = loop_->wake(loop_rng_);
    const Nanos notice = loop_->notice(loop_rng_);
    const auto w = static_cast<std::size_t>(worker);
    if (loop_start_.size() <= w) {
      loop_start_.resize(w + 1, 0);
      loop_finish_.resize(w + 1, 0);
    }
    loop_start_[w] = now_ + wake;
    loop_finish_[w] = loop_start_[w] + service;
    push(loop_finish_[w] + notice, EventKind::BatchDone, worker);
  }
  // Under an interference model (interference.hpp): the batch holds its service time alone as
  // work, progressing from its start (`wake` after now under a loop model); its machine's batches
  // are re-timed. Drawn in the loop's order: service time, wake, notice.
  void start_shared_batch(WorkerId worker, HardwareId hardware, const RunningBatch& batch) {
    const Nanos service = service_time(worker, hardware, batch);
    const Nanos wake = loop_ ? loop_->wake(loop_rng_) : 0;
    const Nanos notice = loop_ ? loop_->notice(loop_rng_) : 0;
    const auto w = static_cast<std::size_t>(worker);
    if (progress_.size() <= w) progress_.resize(w + 1);
    Progress& p = progress_[w];
    p.work_left = static_cast<double>(service);
    p.start = now_ + wake;
    p.since = p.start;
    p.notice = notice;
    p.slowdown = 0;  // none yet: retime() schedules its end
    const sched::MachineId machine = state_->machine(worker);
    auto& running = machine_at(machine).running;
    running.insert(std::upper_bound(running.begin(), running.end(), worker), worker);
    if (machine != retime_after_hook_) retime(machine);
  }
  // The batches running on `machine` progress at new rates from now: each keeps the work done at
  // its old rate and gets a new end when its rate changed. The machine has one pending end, its
  // earliest batch end (ties: the lowest position among its instances), kept in ends_ and given a
  // new place in the event order (a new seq) only when it changes.
  void retime(sched::MachineId machine) {
    SharedMachine& host = machine_at(machine);
    const std::span<const WorkerId> running{host.running.data(), host.running.size()};
    if (slowdowns_.size() < running.size()) slowdowns_.resize(running.size());
    const std::span<double> slowdowns{slowdowns_.data(), running.size()};
    cluster::checked_slowdowns(*interference_, *state_, running, slowdowns);  // (the model sees no progress)
    WorkerId first = -1;
    Nanos first_end = 0;
    for (std::size_t i = 0; i < running.size(); ++i) {
      const WorkerId w = running[i];
      Progress& p = progress_[static_cast<std::size_t>(w)];
      if (now_ > p.since && p.slowdown > 0) {  // the work done so far, at the rate until now
        p.work_left = std::max(0.0, p.work_left - static_cast<double>(now_ - p.since) * p.rate);
        p.since = now_;
      }
      if (p.work_left > 0 || p.slowdown == 0) {  // (else done, its end not noticed yet)
        const double slowdown = slowdowns[i];
        if (slowdown != p.slowdown) {
          p.slowdown = slowdown;
          p.rate = 1.0 / slowdown;  // work per ns: a multiply per re-timing, not a division
          // Rounded half up (the value is >= 0), inline: llround is a library call.
          p.finish = p.since + static_cast<Nanos>(p.work_left * slowdown + 0.5);
        }
      }
      if (first < 0 || p.finish + p.notice < first_end) {
        first = w;
        first_end = p.finish + p.notice;
      }
    }
    MachineEnd& end = host.end;
    if (first >= 0 && end.event >= 0 && end.worker == first && end.at == first_end) return;
    const std::int64_t replaced = end.event;
    if (replaced >= 0) note_retimed(Event{end.at, EventKind::BatchDone, replaced, end.worker});
    if (first < 0) {
      end.event = -1;
      ends_.erase(machine);
    } else {
      end = {seq_++, first_end, first};
      ends_.set(machine, first_end, end.event, first);
    }
    // The earliest event, when known: this end if it comes first, unknown if the old one was it.
    if (top_known_) {
      const Event e{first_end, EventKind::BatchDone, end.event, first};
      if (first >= 0 && (!have_event_ || e.before(top_))) {
        set_top(e);
        have_event_ = true;
      } else if (have_event_ && top_.kind == EventKind::BatchDone && top_.seq == replaced) {
        top_known_ = false;
      }
    }
  }
  // The earliest event (top_) of a run whose batch ends carry their own start and finish (a loop
  // model, interference), at `step`. Out of line: the loop of the other runs stays as it was.
  [[gnu::noinline]] void take_own_event(std::int64_t step, sched::Scheduler& scheduler) {
    const Event e{top_.time, top_.kind, top_.seq, top_.payload};
    if (interference_) {
      taken_step_ = step;
      return take_shared_event(e, scheduler);
    }
    pop_event();
    now_ = e.time;
    if (e.kind != EventKind::BatchDone) return cluster::deliver(e, 0, *state_, scheduler);
    // A batch's end under a loop model: its own start and end, seen `notice` later.
    const auto worker = static_cast<WorkerId>(e.payload);
    const auto w = static_cast<std::size_t>(worker);
    scheduler.on_batch_done(state_->finish_batch(worker, loop_start_[w], loop_finish_[w]), *state_, *state_);
  }
  // The earliest event under an interference model: a batch's end is its machine's (in ends_),
  // any other event the queue's. The next one is found at the next step, from both.
  void take_shared_event(const Event& e, sched::Scheduler& scheduler) {
    now_ = e.time;
    top_known_ = false;
    taken_ = e;
    if (e.kind == EventKind::BatchDone) return finish_shared_batch(static_cast<WorkerId>(e.payload), scheduler);
    events_.pop();
    cluster::deliver(e, 0, *state_, scheduler);
  }
  // A batch's end under an interference model: the machine's other batches speed up from now.
  void finish_shared_batch(WorkerId worker, sched::Scheduler& scheduler) {
    const sched::MachineId machine = state_->machine(worker);
    SharedMachine& host = machines_[static_cast<std::size_t>(machine)];
    const Progress& p = progress_[static_cast<std::size_t>(worker)];
    const auto done = state_->finish_batch(worker, p.start, p.finish);
    host.end.event = -1;  // taken (its place in ends_ is kept for the re-timing below)
    host.running.erase(std::find(host.running.begin(), host.running.end(), worker));
    // The hook usually starts the next batch on this machine at once: one re-timing after it
    // for both changes (at the same time, so the same result as one for each).
    retime_after_hook_ = machine;
    try {
      scheduler.on_batch_done(done, *state_, *state_);
    } catch (...) {
      retime_after_hook_ = -1;
      throw;
    }
    retime_after_hook_ = -1;
    retime(machine);
  }
  // The latest (in event order) of the ends a re-timing replaced before they were due.
  void note_retimed(const Event& end) {
    if (retimed_end_.seq < 0 || retimed_end_.before(end)) retimed_end_ = end;
  }
  // Work is left and no event will come (a policy left queries waiting). When each new end of a
  // machine was a queued event and the replaced ones were skipped when due, such a run went on
  // through those still ahead: it ended at the latest of them, or was cut off at the drain limit
  // when that one lay beyond it. The same end here, so that these runs' records stay as they were.
  // (`took_last`: the last step took an event, taken_; else it was an arrival, which comes after
  // every event at its time.)
  void end_as_with_retimed_ends(bool took_last, Nanos last_arrival, const char*& cut_reason) {
    const Event& r = retimed_end_;
    if (!(r.time > now_ || (r.time == now_ && took_last && taken_.before(r)))) return;  // all passed
    if (r.time > last_arrival + spec_.drain_limit) {
      now_ = last_arrival + spec_.drain_limit;
      cut_reason = "cut off at end of run";
    } else {
      now_ = r.time;
    }
  }

  Nanos service_time(WorkerId worker, HardwareId hardware, const RunningBatch& batch) {
    const Nanos drawn = fixed_service_ ? service_times_.fixed_time(hardware, batch.model, batch.items)
                                       : sampled_time(worker, hardware, batch);
    if (!spec_.config_model) return drawn;  // no config model: the profile's time, untouched
    return cluster::scaled_service_time(*spec_.config_model, *state_, worker, batch.model, batch.items, drawn);
  }

  // A batch's end reads its worker's slot, and the worker usually starts its next batch at once.
  void prefetch_batch_end(WorkerId worker) const {
    state_->prefetch_worker(worker);
    if (!fixed_service_) service_streams_.prefetch(worker);
  }

  // Pops the earliest event (top_) from the queue and learns the next one when it can.
  void pop_event() {
    events_.pop();
    // With every pending event in the lane (fixed service times), the next one is the lane's
    // head, known now: the hooks' pushes keep it up to date, and when it is a batch's end its
    // worker's slot is fetched while this event is handled (back-to-back completions would
    // otherwise wait on it). Otherwise it is read at the next step, after the hooks' pushes:
    // the heap's pop then costs one sift with the push that follows it, not two.
    top_known_ = events_.lane_top(top_);
    if (top_known_) {
      if (top_.kind == EventKind::BatchDone) prefetch_batch_end(static_cast<WorkerId>(top_.payload));
    } else if (events_.size() >= kHintFromEvents) {
      // The heap's next event, found among the popped root's children: a batch's end read
      // right after this event would otherwise wait on its worker's slot.
      if (const auto next_worker = events_.batch_done_after_pop(); next_worker >= 0) {
        prefetch_batch_end(static_cast<WorkerId>(next_worker));
      }
    }
  }

  // A worker's stream is made at its first batch; fixed service times need none (2.5 KB each).
  Nanos sampled_time(WorkerId worker, HardwareId hardware, const RunningBatch& batch) {
    return service_times_.sampled_at(hardware, batch.model, batch.items, service_streams_.next_uniform(worker));
  }

  static constexpr std::size_t kArrivalBlock = 256;
  // With fewer events pending than this (about as many busy workers), the workers' slots stay in
  // the second-level cache (their two hot lines fill half of a 1 MB one at 4,096), and finding
  // the heap's next event costs more than fetching its worker early saves: measured, 3% slower at
  // 100 and 1,000 workers, 10% faster at 10,000.
  static constexpr std::size_t kHintFromEvents = 4096;

  static std::size_t initial_workers(const cluster::RunSpec& spec) {
    std::size_t n = 0;
    for (std::size_t g = 0; g < spec.workers.size(); ++g) n += static_cast<std::size_t>(spec.group_size(g));
    return n;
  }

  // Pushes an event and keeps the earliest one known (arrivals compare with it, without reading
  // the queue) while it is.
  void push(Nanos at, EventKind kind, std::int64_t payload) {
    const Event e{at, kind, seq_++, payload};
    events_.push(e);
    if (top_known_ && (!have_event_ || e.before(top_))) {
      set_top(e);
      have_event_ = true;
    }
  }
  void refresh_top() {
    have_event_ = !events_.empty();
    if (have_event_) set_top(events_.top());
    if (interference_ && !ends_.empty()) [[unlikely]]
      merge_machine_end();  // batch ends wait beside the queue
    top_known_ = true;
  }
  // The machines' earliest end, when it comes before the queue's earliest event. Out of line, as
  // take_own_event.
  [[gnu::noinline]] void merge_machine_end() {
    const Event end = ends_.top();
    if (!have_event_ || end.before(top_)) set_top(end);
    have_event_ = true;
  }
  // Field by field (see run()): top_ is then only ever read as the fields it was written as.
  void set_top(const Event& e) {
    top_.time = e.time;
    top_.kind = e.kind;
    top_.seq = e.seq;
    top_.payload = e.payload;
  }

  const cluster::RunSpec& spec_;
  std::shared_ptr<ClusterState> state_;
  Nanos now_ = 0;
  std::int64_t seq_ = 0;
  cluster::WorldEventQueue events_;
  Event top_{};  // the queue's earliest event, when top_known_ and have_event_
  bool top_known_ = false, have_event_ = false;
  cluster::ServiceTimes service_times_;
  const bool fixed_service_ = spec_.service_statistic.has_value();
  cluster::ServiceStreams service_streams_{spec_.seed, fixed_service_ ? 0 : initial_workers(spec_)};
  // The serving loop's delays (null: none) and their stream; by worker, the running batch's own
  // start and end under a loop model.
  const cluster::LoopModel* const loop_ = spec_.loop_model.get();
  Rng loop_rng_{spec_.seed, "loop"};
  std::vector<Nanos> loop_start_, loop_finish_;
  // Co-located instances' interference (null: none) and, by worker, its running batch's progress.
  struct Progress {
    double work_left = 0;  // ns of work alone still to do at `since`
    double slowdown = 0;   // since `since` (0: not yet timed)
    double rate = 0;       // 1 / slowdown
    Nanos since = 0, start = 0, finish = 0, notice = 0;
  };
  struct MachineEnd {  // a machine's pending end: its place in the event order (seq; -1: none), time, worker
    std::int64_t event = -1;
    Nanos at = 0;
    WorkerId worker = -1;
  };
  struct SharedMachine {
    boost::container::small_vector<WorkerId, 4> running;  // its instances running a batch, ascending
    MachineEnd end;
  };
  const cluster::InterferenceModel* const interference_ = spec_.interference.get();
  std::vector<Progress> progress_;
  std::vector<SharedMachine> machines_;
  MachineEnds ends_;  // the machines' pending ends, earliest first
  Event taken_{};     // the last event take_shared_event took, and at which step
  std::int64_t taken_step_ = -2;
  Event retimed_end_{0, EventKind::BatchDone, -1, -1};  // see note_retimed (seq -1: none yet)
  SharedMachine& machine_at(sched::MachineId machine) {
    const auto m = static_cast<std::size_t>(machine);
    if (machines_.size() <= m) machines_.resize(m + 1);
    return machines_[m];
  }
  sched::MachineId retime_after_hook_ = -1;  // a machine re-timed once the running hook returns
  std::vector<double> slowdowns_;            // retime()'s scratch
  // Batch ends that carry their own start and finish (a loop model, interference).
  const bool own_ends_ = loop_ || interference_;
  // Neither config model, loop model nor interference: a batch's time is the table's.
  const bool plain_ = fixed_service_ && !spec_.config_model && !loop_ && !interference_;
};

}  // namespace

cluster::RunResult simulate(const cluster::RunSpec& spec, sched::Scheduler& scheduler) {
  spec.validate();
  cluster::check_run_memory(spec);
  return cluster::with_memory_context(spec, [&] { return std::make_shared<Simulator>(spec)->run(scheduler); });
}

}  // namespace servelab::sim
