// Columnar results: one entry per query (in id order, every query exactly once) and per worker.
// The bindings hand these vectors to numpy without copying; summaries are computed from them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "servelab/cluster/record_arena.hpp"
#include "servelab/cluster/stream_summary.hpp"
#include "servelab/core/time.hpp"

namespace servelab::cluster {

// A record column: a vector whose rows are appended ahead unwritten, so that each cell is written
// once, when its query arrives or ends (filling them with defaults first cost about 5% of a
// simulated query's time), in its run's arena when it has one. It compares with a plain
// std::vector; converting to one is a copy, so it is explicit (no hidden copies of a million-row
// column).
template <typename T>
class Column : public std::vector<T, ColumnAllocator<T>> {
 public:
  using Base = std::vector<T, ColumnAllocator<T>>;
  using Base::Base;
  explicit operator std::vector<T>() const { return std::vector<T>(this->begin(), this->end()); }
  friend bool operator==(const Column& a, const Column& b) {
    return static_cast<const Base&>(a) == static_cast<const Base&>(b);
  }
  friend bool operator==(const Column& a, const std::vector<T>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
};

enum class QueryStatus : std::int8_t { Completed = 0, Dropped = 1 };

struct QueryRecords {
  Column<std::int16_t> app;
  Column<std::int32_t> size;
  Column<Nanos> arrival, deadline;
  Column<Nanos> dispatch, start, finish;  // dropped: dispatch = start = -1, finish = drop time
  Column<std::int32_t> worker;            // -1 if dropped
  Column<std::int16_t> model;             // -1 if dropped
  Column<std::int32_t> batch_items, batch_queries;
  Column<std::int8_t> status;       // QueryStatus
  Column<std::int8_t> drop_reason;  // index into RunResult::drop_reasons, -1 if none
  Column<float> accuracy;           // NaN if dropped or not in the profile
  Column<float> cost;               // $ share of the batch's worker time, by items

  std::size_t size_of() const { return arrival.size(); }
  // Room for n records. Room::Expected: n is the number the run will hold (a known count), and
  // empty records lay their columns out in one arena (record_arena.hpp). Room::AtMost: n is only
  // a bound, so each column reserves address space on the heap: an arena's 2 MB pages would be
  // faulted in whole for the first rows of every column (30 MB zeroed for a run of a few queries).
  enum class Room { Expected, AtMost };
  void reserve(std::size_t n, Room room = Room::Expected);
  // Appends n rows for queries about to arrive, unwritten (the columns' allocator leaves them so):
  // their owner writes every cell before reading it.
  void append_rows(std::size_t n);
  // Keeps the first n rows.
  void truncate(std::size_t n);
  // Appends a copy of record `i` of `from` (a sampled query of a streamed run).
  void append_row(const QueryRecords& from, std::size_t i);
  // Removes the first n records (streamed out), keeping the columns' capacity.
  void erase_front(std::size_t n);
  std::size_t capacity_bytes() const { return arrival.capacity() * kBytesPerRecord; }
  // Bytes of storage per record (the columns' element sizes summed).
  static constexpr std::size_t kBytesPerRecord = 2 + 4 + 8 * 5 + 4 + 2 + 4 + 4 + 1 + 1 + 4 + 4;
  static constexpr std::size_t kColumns = 15;  // the columns above
};

struct WorkerRecords {
  std::vector<std::int32_t> hardware;
  std::vector<Nanos> busy, active;  // time running batches; time paid for
  std::vector<double> cost;         // $ = price x active time
  std::vector<std::int64_t> batches;
  std::vector<std::int32_t> machine;  // the machine hosting the worker (ClusterView::machine)
};

struct RunResult {
  std::string world;  // "sim" or "serve"
  std::string scheduler;
  std::uint64_t seed = 0;
  Nanos duration = 0;  // the last event's time
  QueryRecords queries;
  WorkerRecords workers;
  std::vector<std::string> drop_reasons;
  std::vector<std::string> models, hardware, apps;
  std::vector<Nanos> app_slo;
  // Per-query columns (id order) that only one world measures, e.g. the serving loop's "exec_ns".
  std::vector<std::pair<std::string, std::vector<Nanos>>> world_columns;
  // A streamed run (records "none" or "sample(p)"): `queries` holds the sampled records only
  // (their ids in sampled_ids) and every metric comes from `streamed`.
  RecordMode records;
  std::shared_ptr<const StreamSummary> streamed;
  std::vector<std::int64_t> sampled_ids;
  std::size_t peak_bytes = 0;  // the largest bytes held for records and summaries at once
};

}  // namespace servelab::cluster
