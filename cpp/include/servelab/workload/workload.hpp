// A workload = arrival process x application mix (each application with its rate share, SLO, size
// distribution and accuracy floor). It generates queries lazily (QueryStream, for the engine and
// the server) or in bulk (columns, for Python). Query i of a seed is the same in both.
//
// Random streams under the run seed: "arrivals" (arrival times), "apps" (which application each
// query belongs to), "sizes/<app index>" (each application's sizes).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "servelab/core/time.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/query.hpp"
#include "servelab/workload/sizes.hpp"

namespace servelab::workload {

struct Application {
  std::string name;
  double share = 1.0;  // relative rate share (normalised over all applications), > 0
  Nanos slo = 0;       // deadline = arrival + slo; > 0
  std::shared_ptr<const SizeDistribution> sizes;  // null: every query has size 1
  double accuracy_floor = 0;                      // in [0, 1]
};

// The lazy stream of queries of one run.
class QueryStream {
 public:
  virtual ~QueryStream() = default;
  // The next query (ids 0, 1, 2, ...; arrivals non-decreasing) or nullopt once the workload ends.
  virtual std::optional<Query> next() = 0;
};

class Workload {
 public:
  // Validates: at least one application, names unique and non-empty, shares > 0 and finite,
  // slo > 0, accuracy floors in [0, 1]; max_count >= 0 and horizon >= 0, not both unlimited.
  Workload(std::shared_ptr<const ArrivalProcess> arrivals, std::vector<Application> apps,
           std::int64_t max_count = kUnlimitedCount, Nanos horizon = kUnlimitedHorizon);

  std::unique_ptr<QueryStream> start(std::uint64_t seed) const;
  // Every query of the run, in order (same as draining start(seed)). Calls check_interrupt().
  std::vector<Query> generate(std::uint64_t seed) const;

  const ArrivalProcess& arrivals() const { return *arrivals_; }
  std::shared_ptr<const ArrivalProcess> arrivals_ptr() const { return arrivals_; }
  const std::vector<Application>& apps() const { return apps_; }
  std::int64_t max_count() const { return max_count_; }
  Nanos horizon() const { return horizon_; }
  std::string describe() const;

 private:
  std::shared_ptr<const ArrivalProcess> arrivals_;
  std::vector<Application> apps_;
  std::vector<double> cumulative_share_;  // normalised, last = 1
  std::int64_t max_count_;
  Nanos horizon_;
};

}  // namespace servelab::workload
