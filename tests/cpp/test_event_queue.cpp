// The simulator's event queue (an in-order lane beside a 4-ary heap with deferred pops, and
// buckets of later events behind the heap once it holds hundreds) pops exactly what
// std::priority_queue pops, whatever mix of in-order and out-of-order events, equal times and
// kinds, distant and extreme times, and pop-then-push steps it sees; after each pop, its hint
// names the next event's worker when that event is a batch's end.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <queue>
#include <random>
#include <vector>

#include "servelab/cluster/world_event.hpp"

namespace servelab::cluster {
namespace {

using Reference = std::priority_queue<WorldEvent, std::vector<WorldEvent>, std::greater<>>;

void expect_same(const WorldEvent& a, const WorldEvent& b) {
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.payload, b.payload);
}

// Pops both queues after checking that their tops agree, and checks the hint that follows the
// pop: the next event's worker when that event is a batch's end, else -1. `now` becomes the
// popped event's time.
void pop_both(WorldEventQueue& queue, Reference& reference, Nanos& now, int step) {
  ASSERT_FALSE(queue.empty()) << "step " << step;
  expect_same(queue.top(), reference.top());
  now = reference.top().time;
  queue.pop();
  reference.pop();
  const bool next_is_batch_end = !reference.empty() && reference.top().kind == WorldEventKind::BatchDone;
  ASSERT_EQ(queue.batch_done_after_pop(), next_is_batch_end ? reference.top().payload : -1) << "step " << step;
}

// `in_order` of the pushes come after everything pushed so far (the lane's case); the rest land
// anywhere within `spread` of now, often at equal times.
// Returns how many times lane_top() answered (it must then name the reference's top).
int run_against_priority_queue(double in_order, Nanos spread, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  WorldEventQueue queue;
  Reference reference;
  Nanos now = 0, latest = 0;
  std::int64_t seq = 0;
  auto push = [&] {
    const Nanos at = coin(rng) < in_order ? latest + static_cast<Nanos>(rng() % 3)
                                          : now + static_cast<Nanos>(rng() % static_cast<std::uint64_t>(spread));
    const auto kind = static_cast<WorldEventKind>(rng() % 3);
    const WorldEvent e{at, kind, seq++, static_cast<std::int64_t>(rng() % 1000)};
    latest = std::max(latest, at);
    // Half the pushes try the lane first, as the simulator's batch starts do.
    if (!(coin(rng) < 0.5 && queue.try_push_lane(e))) queue.push(e);
    reference.push(e);
  };
  for (int i = 0; i < 50; ++i) push();
  int lane_answers = 0;
  for (int step = 0; step < 20000; ++step) {
    EXPECT_EQ(queue.size(), reference.size());
    EXPECT_EQ(queue.empty(), reference.empty());
    if (queue.size() != reference.size()) return lane_answers;
    WorldEvent lane{};
    if (queue.lane_top(lane)) {
      ++lane_answers;
      expect_same(lane, reference.top());
    }
    const double r = coin(rng);
    if (!reference.empty() && r < 0.5) {
      pop_both(queue, reference, now, step);
      if (::testing::Test::HasFatalFailure()) return lane_answers;
      if (coin(rng) < 0.7) push();  // the engine's pop-then-push step
    } else {
      push();
    }
  }
  while (!reference.empty()) {
    EXPECT_FALSE(queue.empty());
    if (queue.empty()) return lane_answers;
    expect_same(queue.top(), reference.top());
    queue.pop();
    reference.pop();
  }
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.size(), 0u);
  WorldEvent none{};
  EXPECT_FALSE(queue.lane_top(none));
  return lane_answers;
}

TEST(WorldEventQueue, PopsWhatAPriorityQueuePopsInOrderOutOfOrderAndMixed) {
  for (const double in_order : {1.0, 0.9, 0.5, 0.0}) {
    for (const Nanos spread : {Nanos{1}, Nanos{5}, Nanos{1000}}) {
      SCOPED_TRACE(testing::Message() << "in_order=" << in_order << " spread=" << spread);
      run_against_priority_queue(in_order, spread, 7);
    }
  }
}

// A fixed service time's pattern (every push later than all pending events): nothing enters the
// heap, so after every pop lane_top() names the next event without top().
TEST(WorldEventQueue, LaneTopNamesTheNextEventWhileEverythingIsInTheLane) {
  WorldEventQueue queue;
  std::int64_t seq = 0;
  Nanos latest = 0;
  for (int i = 0; i < 8; ++i) queue.push({latest += 10, WorldEventKind::BatchDone, seq++, i});
  for (int step = 0; step < 1000; ++step) {
    WorldEvent lane{};
    ASSERT_TRUE(queue.lane_top(lane));
    expect_same(lane, queue.top());
    queue.pop();
    queue.push({latest += 1 + step % 7, static_cast<WorldEventKind>(step % 3), seq++, step});
  }
  // An event before the lane's last one goes to the heap: lane_top() then declines.
  queue.push({latest - 1, WorldEventKind::Timer, seq++, -1});
  WorldEvent lane{};
  EXPECT_FALSE(queue.lane_top(lane));
}

TEST(WorldEventQueue, TryPushLaneTakesOnlyAnEventAfterTheLanesLast) {
  WorldEventQueue queue;
  EXPECT_FALSE(queue.try_push_lane({10, WorldEventKind::BatchDone, 0, 1}));  // an empty lane: no
  EXPECT_TRUE(queue.empty());
  queue.push({10, WorldEventKind::BatchDone, 0, 1});
  EXPECT_TRUE(queue.try_push_lane({20, WorldEventKind::BatchDone, 1, 2}));
  EXPECT_FALSE(queue.try_push_lane({15, WorldEventKind::BatchDone, 2, 3}));  // before the last: no
  EXPECT_FALSE(queue.try_push_lane({20, WorldEventKind::BatchDone, 0, 4}));  // equal time, earlier seq
  EXPECT_EQ(queue.size(), 2u);
  // A full lane declines too (the slow push grows it); the events still come out in order.
  std::int64_t seq = 3;
  Nanos at = 20;
  int taken = 0;
  for (int i = 0; i < 200; ++i) {
    const WorldEvent e{at += 5, WorldEventKind::Timer, seq++, i};
    if (queue.try_push_lane(e)) {
      ++taken;
    } else {
      queue.push(e);
    }
  }
  EXPECT_GT(taken, 100);
  EXPECT_LT(taken, 200);
  Nanos last = 0;
  while (!queue.empty()) {
    EXPECT_GE(queue.top().time, last);
    last = queue.top().time;
    queue.pop();
  }
  EXPECT_EQ(last, at);
}

// A simulation's steady state with many workers: `pending` events, each pop followed by a push a
// service time later (`low` to `high` after now, at a coarse grain so that times tie), now and
// then a timer far ahead or at the end of time, and phases that shrink the queue below the
// buckets' threshold and grow it back. Checks every pop and hint against a priority queue.
void run_hold_model(std::size_t pending, Nanos low, Nanos high, Nanos grain, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  WorldEventQueue queue;
  Reference reference;
  std::int64_t seq = 0;
  Nanos now = -5'000'000;  // negative times too
  auto push_at = [&](Nanos at) {
    const auto kind = static_cast<WorldEventKind>(rng() % 3);
    const WorldEvent e{at, kind, seq++, static_cast<std::int64_t>(rng() % 100000)};
    queue.push(e);
    reference.push(e);
  };
  auto push = [&] {
    const std::uint64_t r = rng() % 1000;
    if (r == 0) return push_at(std::numeric_limits<Nanos>::max());  // never (a timer at the end of time)
    if (r < 4) return push_at(now + 3'600'000'000'000);             // an hour ahead
    const Nanos service = low + static_cast<Nanos>(rng() % static_cast<std::uint64_t>(high - low + 1));
    push_at(now + service / grain * grain);
  };
  for (std::size_t i = 0; i < pending; ++i) push();
  int step = 0;
  for (const int phase : {0, 1, 2, 0}) {  // hold, drain to a few, grow back, hold
    for (int i = 0; i < 30000; ++i, ++step) {
      const bool drain = phase == 1 && reference.size() > 20;
      const bool grow = phase == 2 && reference.size() < pending;
      if (!drain) {
        pop_both(queue, reference, now, step);
        if (::testing::Test::HasFatalFailure()) return;
      }
      if (!drain || i % 2 == 0) push();
      if (grow) push();
      ASSERT_EQ(queue.size(), reference.size()) << "step " << step;
      // Past the far timers (now would jump an hour): leave them pending.
      if (reference.top().time > now + 1'000'000'000) break;
    }
  }
  while (!reference.empty()) {
    pop_both(queue, reference, now, step++);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_TRUE(queue.empty());
}

TEST(WorldEventQueue, ManyPendingEventsWithSpreadTimesComeOutInOrder) {
  // 10 ms +- 20%, the benchmark's spread, with times tied at 1 us; a narrow spread with many
  // ties; one as wide as the queue is long; and a queue that stays below the buckets' threshold.
  run_hold_model(8000, 8'000'000, 12'000'000, 1000, 1);
  run_hold_model(5000, 100, 140, 10, 2);
  run_hold_model(3000, 1, 100'000'000, 1, 3);
  run_hold_model(100, 8'000'000, 12'000'000, 1, 4);
}

}  // namespace
}  // namespace servelab::cluster
