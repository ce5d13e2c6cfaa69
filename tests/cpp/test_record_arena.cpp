// The record columns' arena: one mapping per run for all columns, pages given back per column.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <set>
#include <utility>
#include <vector>

#include "servelab/cluster/record_arena.hpp"
#include "servelab/cluster/records.hpp"
#include "sim_fixture.hpp"

#if defined(__linux__)
#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <string>
#endif

namespace servelab::cluster {
namespace {

constexpr std::size_t kRows = 1'000'000;  // 70 MB of records: over RecordArena::kMinBytes

std::uintptr_t page_offset(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 4096; }

TEST(RecordArena, ReservedRecordsShareOneArenaEachColumnAtItsOwnOffsetInAPage) {
  QueryRecords r;
  r.reserve(kRows);
  const auto& arena = r.arrival.get_allocator().arena;
  if (!arena) GTEST_SKIP() << "no arena on this platform: the columns use the heap";
  const std::vector<const void*> columns = {
      r.app.data(),           r.size.data(),   r.arrival.data(),     r.deadline.data(), r.dispatch.data(),
      r.start.data(),         r.finish.data(), r.worker.data(),      r.model.data(),    r.batch_items.data(),
      r.batch_queries.data(), r.status.data(), r.drop_reason.data(), r.accuracy.data(), r.cost.data()};
  std::set<std::uintptr_t> offsets;
  for (const void* p : columns) {
    EXPECT_TRUE(arena->owns(p));
    EXPECT_EQ(page_offset(p) % 64, 0u);  // cache-line aligned
    offsets.insert(page_offset(p));
  }
  EXPECT_EQ(offsets.size(), columns.size());  // no two alias in the cache
  EXPECT_EQ(r.cost.get_allocator().arena, arena);
  EXPECT_GE(r.arrival.capacity(), kRows);
}

TEST(RecordArena, SmallRecordsStayOnTheHeap) {
  QueryRecords r;
  r.reserve(1000);
  EXPECT_EQ(r.arrival.get_allocator().arena, nullptr);
  EXPECT_EQ(RecordArena::create(RecordArena::kMinBytes - 1), nullptr);
}

TEST(RecordArena, RoomReservedAsABoundStaysOnTheHeap) {
  QueryRecords r;
  r.reserve(kRows, QueryRecords::Room::AtMost);
  EXPECT_EQ(r.arrival.get_allocator().arena, nullptr);
  EXPECT_GE(r.arrival.capacity(), kRows);
}

// A run of a known count lays its records out in an arena; one its horizon ends reserves address
// space on the heap (an arena's first 2 MB page of every column would be faulted in whole).
TEST(RecordArena, OnlyARunOfAKnownCountUsesAnArena) {
  const auto counted =
      testing::run(testing::replay_spec(std::vector<double>(100'000, 0.5), {{"fast", 4, {}, {}}}), "fcfs");
  ASSERT_EQ(counted.queries.size_of(), 100'000u);
  if (!RecordArena::create(RecordArena::kMinBytes)) GTEST_SKIP() << "no arena on this platform";
  EXPECT_NE(counted.queries.finish.get_allocator().arena, nullptr);

  auto spec = testing::replay_spec({}, {{"fast", 4, {}, {}}});
  const workload::Application app{"a", 1.0, millis_to_nanos(1000), std::make_shared<workload::ConstantSize>(1), 0.0};
  spec.workload = std::make_shared<workload::Workload>(std::make_shared<workload::Poisson>(50.0), std::vector{app},
                                                       workload::kUnlimitedCount, seconds_to_nanos(2.0));
  const auto timed = testing::run(spec, "fcfs");
  EXPECT_GT(timed.queries.size_of(), 0u);
  EXPECT_EQ(timed.queries.finish.get_allocator().arena, nullptr);
}

TEST(RecordArena, ColumnsGrowingPastTheirReserveMoveToTheHeapWithTheirValues) {
  QueryRecords r;
  r.reserve(kRows);
  const auto arena = r.finish.get_allocator().arena;
  if (!arena) GTEST_SKIP() << "no arena on this platform";
  r.append_rows(kRows);
  std::iota(r.finish.begin(), r.finish.end(), Nanos{7});
  r.append_rows(10);  // past the capacity: every column reallocates
  EXPECT_FALSE(arena->owns(r.finish.data()));
  ASSERT_EQ(r.finish.size(), kRows + 10);
  for (std::size_t i = 0; i < kRows; i += 9973) EXPECT_EQ(r.finish[i], Nanos{7} + static_cast<Nanos>(i));
  EXPECT_EQ(r.finish[kRows - 1], Nanos{7} + static_cast<Nanos>(kRows - 1));
}

TEST(RecordArena, ACopyOfAColumnIsOnTheHeapAndAMoveKeepsItsBlock) {
  QueryRecords r;
  r.reserve(kRows);
  if (!r.arrival.get_allocator().arena) GTEST_SKIP() << "no arena on this platform";
  r.append_rows(kRows);
  std::iota(r.arrival.begin(), r.arrival.end(), Nanos{0});
  const Column<Nanos> copy = r.arrival;
  EXPECT_EQ(copy.get_allocator().arena, nullptr);
  EXPECT_EQ(copy, r.arrival);
  const Nanos* block = r.arrival.data();
  Column<Nanos> moved = std::move(r.arrival);
  EXPECT_EQ(moved.data(), block);
  EXPECT_TRUE(moved.get_allocator().arena->owns(block));
  EXPECT_EQ(moved, copy);
}

#if defined(__linux__)
// Bytes of the mapping holding p that the kernel may take back lazily (/proc/self/smaps LazyFree).
std::size_t lazily_freed_bytes(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("LazyFree:", 0) == 0) {
      return std::stoul(line.substr(9)) * 1024;
    }
  }
  return 0;
}

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

TEST(RecordArena, FreedColumnsGiveTheirPagesBackWhileAKeptOneKeepsItsValues) {
  auto r = std::make_unique<QueryRecords>();
  r->reserve(kRows);
  const auto arena = r->finish.get_allocator().arena;
  if (!arena) GTEST_SKIP() << "no arena on this platform";
  r->append_rows(kRows);
  std::fill(r->finish.begin(), r->finish.end(), Nanos{1});
  std::fill(r->arrival.begin(), r->arrival.end(), Nanos{2});
  const std::size_t before = lazily_freed_bytes(arena->base());
  Column<Nanos> kept = std::move(r->arrival);
  r.reset();  // every column but `kept` freed; the arena lives on through kept's allocator
  // Of the freed columns only `finish` was written (has pages): all of them but the 2 MB pages at
  // its two ends, which it shares with its neighbours.
  EXPECT_GE(lazily_freed_bytes(arena->base()) - before, kRows * sizeof(Nanos) - 2 * (std::size_t{2} << 20));
  EXPECT_EQ(kept.size(), kRows);
  EXPECT_EQ(kept[0], 2);
  EXPECT_EQ(kept[kRows - 1], 2);
}

TEST(RecordArena, TheNextRunWritesTheLastFreedMappingWithoutFaultingItIn) {
  const std::size_t bytes = 16u << 20;
  char* first = nullptr;
  {
    auto arena = RecordArena::create(bytes);
    if (!arena) GTEST_SKIP() << "no arena on this platform";
    first = static_cast<char*>(arena->take(bytes));
    std::fill(first, first + bytes, char{1});
  }
  auto again = RecordArena::create(bytes);
  auto* p = static_cast<char*>(again->take(bytes));
  EXPECT_EQ(p, first);
  const long faults = minor_faults();
  std::fill(p, p + bytes, char{2});
  EXPECT_LT(minor_faults() - faults, 64);  // 16 MB in 4 kB pages would be 4,096
  EXPECT_EQ(p[bytes - 1], 2);
}
#endif

}  // namespace
}  // namespace servelab::cluster
