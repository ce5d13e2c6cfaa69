// An online latency estimator for one (hardware, model) pair, as Kairos learns latencies
// (Kairos, HPDC'23, Sec. 5.1 "Remarks on assumptions and overhead": it "starts with a linear model"
// of latency vs batch size and "quickly transition[s] into a lookup table after processing more
// queries").
//
// observe(batch, seconds) records one measured service time. predict(batch):
//   1. lookup table: once `batch` has at least min_observations observations, their running mean;
//   2. otherwise the ordinary least-squares line latency = intercept + slope * batch fitted on every
//      observation so far (all batch sizes, each observation weighted equally);
//   3. while fewer than two distinct batch sizes were observed the line is not identified: the
//      line through the origin and the mean point, mean_latency / mean_batch * batch, is used;
//      it is also the fallback where the fitted line is not positive at `batch`.
// Predicting before any observation is a RuntimeError. Each step is O(log distinct batches).
#pragma once

#include <cstdint>
#include <map>

namespace servelab::profile {

class LatencyEstimator {
 public:
  // min_observations >= 1: observations a batch size needs before its mean replaces the line.
  explicit LatencyEstimator(std::int64_t min_observations = 3);

  void observe(std::int64_t batch, double seconds);  // batch >= 1, seconds finite and > 0
  double predict(std::int64_t batch) const;          // seconds
  bool ready() const { return count_ > 0; }          // whether predict() has anything to go on

  // The batch size's own observations: count and running mean (0 and NaN when none).
  std::int64_t observations(std::int64_t batch) const;
  double table_mean(std::int64_t batch) const;
  bool uses_table(std::int64_t batch) const { return observations(batch) >= min_observations_; }
  // The least-squares line (NaN until two distinct batch sizes are observed).
  double intercept() const;
  double slope() const;
  std::int64_t count() const { return count_; }
  std::int64_t min_observations() const { return min_observations_; }

 private:
  struct Cell {
    std::int64_t count = 0;
    double mean = 0;  // running (Welford-style) mean
  };
  std::int64_t min_observations_;
  std::map<std::int64_t, Cell> table_;
  // Sums about the first observation (shifted) keep the fit well conditioned for large batches.
  std::int64_t count_ = 0;
  double x0_ = 0, y0_ = 0;
  double sx_ = 0, sy_ = 0, sxx_ = 0, sxy_ = 0;
};

}  // namespace servelab::profile
