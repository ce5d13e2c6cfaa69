// The events a world schedules for itself, in the one tie order both worlds share: at equal times,
// batch completions, then finished startups and model loads, then timers (arrivals, pulled from
// the workload stream, come after all three); within a kind, the order they were scheduled.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "servelab/cluster/cluster_state.hpp"
#include "servelab/core/time.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::cluster {

enum class WorldEventKind : std::uint8_t { BatchDone = 0, TransitionDone = 1, Timer = 2 };

struct WorldEvent {
  Nanos time;
  WorldEventKind kind;
  std::int64_t seq;      // scheduling order, breaks ties within a kind
  std::int64_t payload;  // worker id or timer tag
  bool operator>(const WorldEvent& o) const {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return kind > o.kind;
    return seq > o.seq;
  }
};

// Earliest first.
using WorldEventQueue = std::priority_queue<WorldEvent, std::vector<WorldEvent>, std::greater<>>;

// Applies a due event to the state and calls the scheduler's hook, identically in both worlds.
// `batch_start` is when the finished batch started (BatchDone only); the event's time is its end.
void deliver(const WorldEvent& event, Nanos batch_start, ClusterState& state, sched::Scheduler& scheduler);

}  // namespace servelab::cluster
