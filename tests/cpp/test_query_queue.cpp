// A worker's queue (sched::QueryQueue) against std::deque under random pushes, pops, erasures
// from anywhere and clears: the same ids in the same order after every step, and storage that
// stays within a few times the most ids it has held.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "servelab/core/rng.hpp"
#include "servelab/sched/query_queue.hpp"

namespace servelab {
namespace {

using sched::QueryId;
using sched::QueryQueue;

void expect_same(const QueryQueue& queue, const std::deque<QueryId>& ref, int step) {
  ASSERT_EQ(queue.size(), ref.size()) << "step " << step;
  ASSERT_EQ(queue.empty(), ref.empty()) << "step " << step;
  ASSERT_TRUE(std::equal(queue.begin(), queue.end(), ref.begin(), ref.end())) << "step " << step;
  if (!ref.empty()) {
    ASSERT_EQ(queue.front(), ref.front()) << "step " << step;
    ASSERT_EQ(queue.back(), ref.back()) << "step " << step;
    ASSERT_EQ(queue[ref.size() / 2], ref[ref.size() / 2]) << "step " << step;
  }
}

// `push_share`: how often a step pushes (above one half the queue grows on the whole).
void run_random(double push_share, double erase_share, double clear_share, std::uint64_t seed) {
  QueryQueue queue;
  std::deque<QueryId> ref;
  Rng rng(seed, "test/query_queue");
  QueryId next = 0;
  std::size_t most = 0;
  for (int step = 0; step < 20000; ++step) {
    const double u = rng.uniform();
    if (u < clear_share) {
      queue.clear();
      ref.clear();
    } else if (u < clear_share + erase_share && !ref.empty()) {
      // Any queued id (a policy moving a query elsewhere), or one that is not queued.
      const auto i = static_cast<std::size_t>(rng.engine()() % (ref.size() + 1));
      const QueryId id = i < ref.size() ? ref[i] : next + 1000;
      ASSERT_EQ(queue.erase(id), i < ref.size()) << "step " << step;
      if (i < ref.size()) ref.erase(ref.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (rng.uniform() < push_share || ref.empty()) {
      queue.push_back(next);
      ref.push_back(next++);
    } else {
      queue.pop_front();
      ref.pop_front();
    }
    most = std::max(most, ref.size());
    expect_same(queue, ref, step);
    ASSERT_LE(queue.capacity(), std::max<std::size_t>(4, 4 * most)) << "step " << step;
  }
}

TEST(QueryQueue, KeepsADequesOrderUnderPushesPopsErasuresAndClears) {
  for (const std::uint64_t seed : {1, 2, 3}) {
    run_random(0.5, 0.0, 0.0, seed);      // a queue that hovers near empty
    run_random(0.55, 0.0, 0.0, seed);     // one that grows slowly
    run_random(0.5, 0.1, 0.001, seed);    // queries taken from the middle, the queue emptied
    run_random(0.7, 0.05, 0.0005, seed);  // long queues (hundreds)
  }
}

// A queue that never empties (a busy worker that always has the next query waiting) takes from
// the front and pushes at the back forever: the space before its start must be reused, not grown.
TEST(QueryQueue, AQueueThatNeverEmptiesReusesItsStorage) {
  for (const std::size_t length : {1, 3, 4, 5, 17}) {
    QueryQueue queue;
    for (QueryId id = 0; id < static_cast<QueryId>(length); ++id) queue.push_back(id);
    for (QueryId id = static_cast<QueryId>(length); id < 100000; ++id) {
      queue.push_back(id);
      ASSERT_EQ(queue.front(), id - static_cast<QueryId>(length));
      queue.pop_front();
    }
    EXPECT_EQ(queue.size(), length);
    EXPECT_LE(queue.capacity(), std::max<std::size_t>(4, 4 * (length + 1))) << "length " << length;
  }
}

TEST(QueryQueue, FitsOneCacheLineWithItsFirstIds) {
  EXPECT_EQ(sizeof(QueryQueue), 64u);
  QueryQueue queue;
  for (QueryId id = 0; id < 4; ++id) queue.push_back(id);
  const auto* object = reinterpret_cast<const char*>(&queue);
  const auto* ids = reinterpret_cast<const char*>(queue.begin());
  EXPECT_TRUE(ids >= object && ids < object + sizeof(QueryQueue)) << "four ids should need no allocation";
}

}  // namespace
}  // namespace servelab
