// Online summaries of ended queries, for runs that do not keep every record (records="none" or
// "sample(p)"): counts, sums, maxima and quantile sketches per app, and per window of arrival
// time. Memory depends on the number of apps, drop reasons and windows, never on the number of
// queries. Queries are added in id order, so the result is deterministic.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "servelab/cluster/quantile_sketch.hpp"
#include "servelab/core/time.hpp"

namespace servelab::cluster {

struct QueryRecords;

// How a run keeps its records: every one (All), none (None: summaries only) or a seeded
// Bernoulli sample of probability p (Sample: summaries of all, full records of the sample).
struct RecordMode {
  enum class Kind { All, None, Sample };
  Kind kind = Kind::All;
  double p = 1.0;
  bool streaming() const { return kind != Kind::All; }
  std::string text() const;  // "all", "none" or "sample(p)"
};

// "all", "none" or "sample(p)" with 0 <= p <= 1; ValueError naming `records` otherwise.
RecordMode parse_record_mode(std::string_view text);

// The metrics of one group of queries (an app), as Result.summary() defines them.
struct StreamGroup {
  __extension__ using Int128 = __int128;  // a GCC/Clang type (the extension marker keeps -Wpedantic quiet)
  std::int64_t queries = 0, completed = 0, met = 0;
  std::vector<std::int64_t> drops;                         // by drop reason index + 1 (0: unspecified)
  Int128 latency_sum = 0, queue_sum = 0, service_sum = 0;  // ns, exact
  Nanos latency_max = -1;
  double accuracy_done_sum = 0, accuracy_met_sum = 0, cost_sum = 0;
  std::int64_t accuracy_done_n = 0, accuracy_met_n = 0;
  QuantileSketch latency, queue, service;  // ns, of completed queries

  void merge(const StreamGroup& other);
};

// One window of arrival time (and the completions that finished in it). Its latency
// percentiles are fixed when the next window opens (queries arrive in id order), so a window
// keeps two numbers, not a sketch: the time series costs 72 bytes per window.
struct StreamWindow {
  std::int64_t arrivals = 0, completed = 0, met = 0;  // of the queries that arrived in it
  std::int64_t finished = 0, finished_met = 0;        // completions that finished in it
  double accuracy_sum = 0;
  std::int64_t accuracy_n = 0;
  double latency_p50 = std::numeric_limits<double>::quiet_NaN();  // ns; NaN: no completed query
  double latency_p99 = std::numeric_limits<double>::quiet_NaN();
};

class StreamSummary {
 public:
  StreamSummary(std::size_t apps, Nanos window);

  // Adds ended query `i` of `records` (status Completed or Dropped), in id order.
  void add(const QueryRecords& records, std::size_t i);
  // After the last add: fixes the last window's percentiles.
  void finish() { close_window(); }

  const std::vector<StreamGroup>& apps() const { return apps_; }
  StreamGroup overall() const;
  const std::vector<StreamWindow>& windows() const { return windows_; }
  Nanos window() const { return window_; }
  std::int64_t queries() const { return queries_; }
  Nanos max_arrival() const { return max_arrival_; }
  Nanos max_finish() const { return max_finish_; }
  // Bytes held (sketches, windows): the accounting behind a streamed run's peak_bytes.
  std::size_t bytes() const;

 private:
  StreamWindow& window_at(Nanos t);
  void close_window();

  std::vector<StreamGroup> apps_;
  std::vector<StreamWindow> windows_;
  Nanos window_;
  std::int64_t queries_ = 0;
  Nanos max_arrival_ = -1, max_finish_ = -1;
  std::size_t open_ = 0;         // the arrival window queries are being added to
  QuantileSketch open_latency_;  // its latencies
  // The last value's sketch index: fixed or repeated service times skip the logarithm.
  std::int64_t last_value_[3] = {-1, -1, -1};
  std::int32_t last_index_[3] = {0, 0, 0};
};

}  // namespace servelab::cluster
