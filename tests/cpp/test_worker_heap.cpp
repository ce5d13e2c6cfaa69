// The indexed worker heaps behind jsq, least_finish_time and Clockwork: under random inserts,
// re-keys and removals their top is always the smallest (key, worker id) of an ordered set.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/sched/worker_heap.hpp"
#include "servelab/sched/zero_first_heap.hpp"

namespace servelab {
namespace {

using sched::WorkerId;

// Runs random changes on `heap` and a std::set, comparing the top after each; keys come from
// `draw_key` (which decides the range the packing must handle).
template <typename Heap, typename DrawKey>
void check_against_set(Heap& heap, std::int32_t workers, DrawKey draw_key) {
  std::set<std::pair<std::int64_t, WorkerId>> ref;
  std::map<WorkerId, std::int64_t> key_of;
  Rng rng(11, "test/worker_heap");
  for (int step = 0; step < 30000; ++step) {
    const auto w = static_cast<WorkerId>(rng.engine()() % static_cast<std::uint64_t>(workers));
    if (rng.uniform() < 0.7) {
      const std::int64_t key = draw_key(rng);
      heap.set(w, key);
      if (key_of.count(w)) ref.erase({key_of[w], w});
      key_of[w] = key;
      ref.insert({key, w});
    } else {
      heap.erase(w);
      if (key_of.count(w)) ref.erase({key_of[w], w}), key_of.erase(w);
    }
    ASSERT_EQ(heap.empty(), ref.empty());
    ASSERT_EQ(heap.size(), ref.size());
    ASSERT_EQ(heap.contains(w), key_of.count(w) == 1);
    if (!ref.empty()) ASSERT_EQ(heap.top(), *ref.begin()) << "step " << step;
  }
}

TEST(WorkerHeap, WideKeysIncludingNegativeOnesOrderByKeyThenLowestId) {
  for (const std::int32_t workers : {3, 100, 5000}) {
    sched::WorkerHeap heap;
    check_against_set(heap, workers, [](Rng& rng) {
      // Few distinct keys (many ties, broken by id) around zero and at the int64 extremes.
      const auto pick = rng.engine()() % 8;
      if (pick == 0) return std::numeric_limits<std::int64_t>::min();
      if (pick == 1) return std::numeric_limits<std::int64_t>::max();
      return static_cast<std::int64_t>(rng.engine()() % 21) - 10;
    });
  }
}

TEST(WorkerHeap, SmallKeysOrderByKeyThenLowestIdAndRejectKeysOutOfRange) {
  for (const std::int32_t workers : {3, 100, 5000}) {
    sched::LoadHeap heap;
    check_against_set(heap, workers, [](Rng& rng) {
      return rng.engine()() % 2 ? static_cast<std::int64_t>(rng.engine()() % 16) : sched::SmallKeyPacking::kMaxKey;
    });
  }
  sched::LoadHeap heap;
  EXPECT_THROW(heap.set(0, -1), ValueError);
  EXPECT_THROW(heap.set(0, sched::SmallKeyPacking::kMaxKey + 1), ValueError);
  EXPECT_TRUE(heap.empty());
}

// Idle workers' backlogs: mostly zero (a bitset), sometimes not (a heap behind it), and workers
// moving between the two with every change.
TEST(WorkerHeap, ZeroFirstKeysOrderByKeyThenLowestIdWhetherZeroOrNot) {
  for (const std::int32_t workers : {3, 100, 5000}) {
    sched::ZeroFirstWorkerHeap heap;
    check_against_set(heap, workers, [](Rng& rng) {
      return rng.engine()() % 4 ? 0 : static_cast<std::int64_t>(rng.engine()() % 5) + 1;
    });
  }
  sched::ZeroFirstWorkerHeap heap;
  EXPECT_THROW(heap.set(0, -1), ValueError);
  EXPECT_TRUE(heap.empty());
  heap.set(70, 0);  // beyond the bitset's first word, before any lower worker
  heap.set(3, 2);
  EXPECT_EQ(heap.top(), std::make_pair(std::int64_t{0}, sched::WorkerId{70}));
  heap.set(70, 5);
  EXPECT_EQ(heap.top(), std::make_pair(std::int64_t{2}, sched::WorkerId{3}));
}

}  // namespace
}  // namespace servelab
