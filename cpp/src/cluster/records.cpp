#include "servelab/cluster/records.hpp"

#include <cmath>
#include <cstdint>
#include <memory>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace servelab::cluster {
namespace {

// A column's room on the heap, its untouched capacity advised onto 2 MB pages where whole aligned
// ones fit (the first rows stay on 4 kB pages: a short run faults in no 2 MB page). Advice only:
// the contents and the result do not change.
template <typename T>
void reserve_on_heap(Column<T>& v, std::size_t n) {
  v.reserve(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = 2u << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(v.data() + v.size());
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(v.data() + v.capacity());
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1), last = end & ~(kHuge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
}

template <typename T>
void reserve_column(Column<T>& v, std::size_t n, const std::shared_ptr<RecordArena>& arena) {
  if (!arena) return reserve_on_heap(v, n);
  if (v.empty()) v = Column<T>(ColumnAllocator<T>(arena));
  v.reserve(n);
}

}  // namespace

void QueryRecords::reserve(std::size_t n, Room room) {
  const auto arena = room == Room::Expected && size_of() == 0 && n > arrival.capacity()
                         ? RecordArena::create(n * kBytesPerRecord + kColumns * 2 * 4096)  // page start + offset
                         : nullptr;
  reserve_column(app, n, arena);
  reserve_column(size, n, arena);
  reserve_column(arrival, n, arena);
  reserve_column(deadline, n, arena);
  reserve_column(dispatch, n, arena);
  reserve_column(start, n, arena);
  reserve_column(finish, n, arena);
  reserve_column(worker, n, arena);
  reserve_column(model, n, arena);
  reserve_column(batch_items, n, arena);
  reserve_column(batch_queries, n, arena);
  reserve_column(status, n, arena);
  reserve_column(drop_reason, n, arena);
  reserve_column(accuracy, n, arena);
  reserve_column(cost, n, arena);
}

void QueryRecords::append_rows(std::size_t n) {
  const std::size_t to = size_of() + n;
  app.resize(to);
  size.resize(to);
  arrival.resize(to);
  deadline.resize(to);
  dispatch.resize(to);
  start.resize(to);
  finish.resize(to);
  worker.resize(to);
  model.resize(to);
  batch_items.resize(to);
  batch_queries.resize(to);
  status.resize(to);
  drop_reason.resize(to);
  accuracy.resize(to);
  cost.resize(to);
}

void QueryRecords::truncate(std::size_t n) {
  if (n >= size_of()) return;
  app.resize(n);
  size.resize(n);
  arrival.resize(n);
  deadline.resize(n);
  dispatch.resize(n);
  start.resize(n);
  finish.resize(n);
  worker.resize(n);
  model.resize(n);
  batch_items.resize(n);
  batch_queries.resize(n);
  status.resize(n);
  drop_reason.resize(n);
  accuracy.resize(n);
  cost.resize(n);
}

void QueryRecords::append_row(const QueryRecords& f, std::size_t i) {
  app.push_back(f.app[i]);
  size.push_back(f.size[i]);
  arrival.push_back(f.arrival[i]);
  deadline.push_back(f.deadline[i]);
  dispatch.push_back(f.dispatch[i]);
  start.push_back(f.start[i]);
  finish.push_back(f.finish[i]);
  worker.push_back(f.worker[i]);
  model.push_back(f.model[i]);
  batch_items.push_back(f.batch_items[i]);
  batch_queries.push_back(f.batch_queries[i]);
  status.push_back(f.status[i]);
  drop_reason.push_back(f.drop_reason[i]);
  accuracy.push_back(f.accuracy[i]);
  cost.push_back(f.cost[i]);
}

namespace {
template <typename T>
void drop_front(Column<T>& v, std::size_t n) {
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
}
}  // namespace

void QueryRecords::erase_front(std::size_t n) {
  drop_front(app, n);
  drop_front(size, n);
  drop_front(arrival, n);
  drop_front(deadline, n);
  drop_front(dispatch, n);
  drop_front(start, n);
  drop_front(finish, n);
  drop_front(worker, n);
  drop_front(model, n);
  drop_front(batch_items, n);
  drop_front(batch_queries, n);
  drop_front(status, n);
  drop_front(drop_reason, n);
  drop_front(accuracy, n);
  drop_front(cost, n);
}

}  // namespace servelab::cluster
