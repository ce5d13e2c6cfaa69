// The latency and accuracy inputs of RAMSIS's MDP: one deterministic latency per (model, batch).
//
// RAMSIS treats inference latency as a single number per (model, batch) - the profile's p95 in the
// artifact - so the table is a dense [model][batch - 1] array of int64 nanoseconds. It comes from a
// servelab Profile (any Statistic) or from rows (e.g. the artifact's derived table); either way it
// is validated: finite, positive, every batch 1..max_batch present.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "servelab/core/time.hpp"
#include "servelab/profile/profile.hpp"

namespace servelab::ramsis {

struct LatencyTable {
  std::vector<std::string> models;
  std::vector<double> accuracy;             // per model (the reward; % or fraction, as given)
  std::vector<std::vector<Nanos>> latency;  // [model][batch - 1], batch 1..max_batch()

  std::int32_t num_models() const { return static_cast<std::int32_t>(models.size()); }
  std::int32_t max_batch() const { return latency.empty() ? 0 : static_cast<std::int32_t>(latency.front().size()); }
  Nanos at(std::int32_t model, std::int32_t batch) const { return latency[model][batch - 1]; }
  std::int32_t model_index(const std::string& name) const;  // KeyError listing the models

  // ValueError naming the model and batch: empty, ragged, non-positive latencies, bad accuracy.
  void validate() const;

  // Models on the Pareto front of (accuracy, latency at `batch`): a model is dropped when another
  // is at least as accurate and at least as fast, and strictly better in one. Sorted by ascending
  // accuracy (= ascending latency on the front).
  LatencyTable pareto_front(std::int32_t batch = 1) const;
  // The named models, in the given order (KeyError for an unknown one).
  LatencyTable select(const std::vector<std::string>& names) const;
  // Extends every model to `batch` with an ordinary-least-squares line over its batches (the
  // artifact's extrapolation for the full-queue state's batch N + 1); no-op when already there.
  LatencyTable extended_to(std::int32_t batch) const;
  // Synthetic models on the Pareto front (Sec. 7.3.2): the front's own models plus, between each
  // two neighbours, accuracies in steps of `step` (accuracy units) from the lower one, latency per
  // batch linearly interpolated between the two (0.005 on the 9-model image front: 60 models).
  // The input must be sorted by strictly ascending accuracy (a Pareto front).
  LatencyTable interpolated(double step) const;

  // From rows (model, batch, latency in seconds): every model needs batches 1..B with no gap
  // (ValueError naming the first missing batch). `accuracy` per model, same order as `models`.
  static LatencyTable from_rows(const std::vector<std::string>& models, const std::vector<double>& accuracy,
                                const std::vector<std::string>& row_model, const std::vector<std::int64_t>& row_batch,
                                const std::vector<double>& row_seconds);
  // From a dense [model, batch - 1] matrix of seconds, row-major with `batches` columns: one row per
  // model. ValueError for a row count other than models.size(), or a latency that is not finite
  // and > 0 (naming latency_s[model, batch - 1]: a gap in the profile?).
  static LatencyTable from_seconds(std::vector<std::string> models, std::vector<double> accuracy,
                                   std::span<const double> latency_s, std::size_t rows, std::size_t batches);
  // From a Profile: `statistic` of (hardware, model, batch) for batch 1..max_batch. Accuracy from
  // the profile (ValueError when missing). What a batch the profile did not measure gets:
  //  - Fill::None: nothing - a gap is a ValueError naming it (max_batch 0: the smallest largest
  //    measured batch over the models);
  //  - Fill::Linear: the profile's linear interpolation between measured batches (batch 1 and
  //    max_batch must be measured; max_batch 0 as for None);
  //  - Fill::Ols: the artifact's: an OLS line over the model's measured batches, then made
  //    non-decreasing by a backward suffix-min (max_batch 0: the largest measured batch of any model).
  enum class Fill { None, Linear, Ols };
  static LatencyTable from_profile(const profile::Profile& profile, const std::string& hardware,
                                   const std::vector<std::string>& models, profile::Statistic statistic,
                                   std::int32_t max_batch = 0, Fill fill = Fill::None);
  static Fill parse_fill(const std::string& name);  // "none", "linear", "ols"
};

}  // namespace servelab::ramsis
