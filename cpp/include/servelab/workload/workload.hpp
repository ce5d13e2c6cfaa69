// A workload = arrival process x application mix (each application with its rate share, SLO, size
// distribution and accuracy floor). It generates queries lazily (QueryStream, for the engine and
// the server) or in bulk (columns, for Python). Query i of a seed is the same in both.
//
// Random streams under the run seed: "arrivals" (arrival times), "apps" (which application each
// query belongs to; not drawn from with a single application), "sizes/<app index>" (each
// application's sizes). A run stops after max_count queries, at the first arrival at or after the
// horizon (not included), or when a finite arrival trace ends, whichever comes first.
//
// Per-application arrivals: when every application carries its own arrival process (and the
// workload has none), application i's queries arrive as its process does under the stream
// "arrivals/<i>", and the applications' streams are merged by time (ties: lower index first); ids
// count the merged order and shares are not used. max_count and the horizon apply to the merged
// stream; a finite trace ends only its own application. Some applications with a process and some
// without is refused: each application's rate would otherwise be ambiguous.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "servelab/core/time.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/query.hpp"
#include "servelab/workload/sizes.hpp"

namespace servelab::workload {

inline constexpr std::string_view kAppStream = "apps";

struct Application {
  std::string name;
  double share = 1.0;  // relative rate share (normalised over all applications), > 0; unused with own arrivals
  Nanos slo = 0;       // deadline = arrival + slo; > 0
  std::shared_ptr<const SizeDistribution> sizes;  // null: every query has size 1
  double accuracy_floor = 0;                      // in [0, 1]
  // Its own arrival process (null: its share of the workload's). Either all applications have one
  // or none does.
  std::shared_ptr<const ArrivalProcess> arrivals = nullptr;
};

// The random stream application i's own arrival process draws from: "arrivals/<i>".
std::string app_arrival_stream(std::size_t app_index);

// Throws ValueError naming the application, the field and the value unless share > 0 and finite,
// slo > 0, accuracy_floor in [0, 1] and the name is not empty.
void validate_application(const Application& app);

// Normalised Zipf popularity: share[i] proportional to 1 / (i + 1)^exponent, summing to 1.
// n >= 1, exponent >= 0 and finite (0: equal shares).
std::vector<double> zipf_shares(std::int64_t n, double exponent = 1.0);

// The queries of one run as columns (for numpy), times converted to seconds as they are drawn.
struct QueryColumns {
  std::vector<QueryId> id;
  std::vector<std::int32_t> app;
  std::vector<std::int32_t> size;
  std::vector<double> arrival_s;
  std::vector<double> deadline_s;
  std::vector<float> accuracy_floor;
};

// The lazy stream of queries of one run.
class QueryStream {
 public:
  virtual ~QueryStream() = default;
  // The next query (ids 0, 1, 2, ...; arrivals non-decreasing) or nullopt once the workload ends.
  virtual std::optional<Query> next() = 0;
  // Up to n next queries into out; fewer only where the workload ends. The same queries, in the
  // same order, as calling next(): one call per block instead of one per query.
  virtual std::size_t next_block(Query* out, std::size_t n);
};

class Workload {
 public:
  // Validates: at least one application, names unique and non-empty, shares > 0 and finite,
  // slo > 0, accuracy floors in [0, 1]; max_count >= 0 and horizon >= 0, not both unlimited.
  // `arrivals` is null exactly when every application has its own process (ValueError naming the
  // first application that breaks the rule otherwise).
  Workload(std::shared_ptr<const ArrivalProcess> arrivals, std::vector<Application> apps,
           std::int64_t max_count = kUnlimitedCount, Nanos horizon = kUnlimitedHorizon);

  std::unique_ptr<QueryStream> start(std::uint64_t seed) const;
  // Every query of the run, in order (same as draining start(seed)). Calls check_interrupt().
  std::vector<Query> generate(std::uint64_t seed) const;
  // The same queries as columns. Calls check_interrupt().
  QueryColumns generate_columns(std::uint64_t seed) const;

  // True when each application has its own arrival process (and arrivals_ptr() is null).
  bool per_app_arrivals() const { return !arrivals_; }
  // The shared arrival process; RuntimeError with per-application arrivals.
  const ArrivalProcess& arrivals() const;
  std::shared_ptr<const ArrivalProcess> arrivals_ptr() const { return arrivals_; }
  const std::vector<Application>& apps() const { return apps_; }
  // Each application's share of the queries, normalised to sum to 1: by share, or with
  // per-application arrivals by mean rate (NaN for all when a rate is not known).
  const std::vector<double>& shares() const { return shares_; }
  // The long-run mean arrival rate of all applications together, queries per second (NaN when
  // not known).
  double mean_rate() const;
  std::int64_t max_count() const { return max_count_; }
  Nanos horizon() const { return horizon_; }
  std::string describe() const;
  // "count=N, horizon_s=H" as the Python API names the limits (None when unlimited).
  std::string describe_limits() const;

  // The expected number of queries of a run: max_count, or fewer when the horizon or the end of a
  // finite trace comes first on average. Infinity when it cannot be told (no count, rate unknown).
  double expected_queries() const;
  // MemoryError unless `bytes_per_query` x expected_queries() fits the memory available. Its
  // message names the limit to lower (count, horizon_s), the estimate and what is available;
  // `what` says what the bytes hold ("the run's query records").
  void check_memory(double bytes_per_query, std::string_view what) const;

 private:
  std::shared_ptr<const ArrivalProcess> arrivals_;
  std::vector<Application> apps_;
  detail::AliasTable app_choice_;  // picks an application by share in O(1) (shared arrivals only)
  std::vector<double> shares_;
  std::int64_t max_count_;
  Nanos horizon_;
};

}  // namespace servelab::workload
