// Kairos's latency prediction (HPDC'23, Sec. 5.1, "Remarks on assumptions and overhead"): the
// controller needs the service time of a query of b items on each instance type. Kairos learns it
// online, "starts with a linear model" of latency vs batch size and "quickly transition[s] into a
// lookup table after processing more queries"; the artifact instead reads it from the profile
// (the mean of the measured samples without the largest one).
//
// Sources:
//   Profile            the profile's decision statistic (ClusterView::predicted_latency);
//   Online             a profile::LatencyEstimator per (hardware, model) fed with every measured
//                      batch: the lookup-table mean once a size has `table_after` observations,
//                      the least-squares line before. A pair never observed predicts 0 ms: the
//                      controller knows nothing yet and treats the instance as free, so every
//                      type gets tried (and measured) early;
//   OnlineFromProfile  the same lookup table, with the profile instead of the line until a size
//                      has enough observations (a warm start).
// round_ms rounds every prediction to whole milliseconds (ties to even), as the artifact does.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <utility>

#include "servelab/profile/estimator.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::kairos {

enum class PredictorSource { Profile, Online, OnlineFromProfile };

// "profile", "online", "online_from_profile"; ValueError naming the value otherwise.
PredictorSource parse_predictor_source(std::string_view name);
std::string_view predictor_source_name(PredictorSource source);

class LatencyPredictor {
 public:
  explicit LatencyPredictor(PredictorSource source = PredictorSource::Profile, std::int64_t table_after = 3,
                            bool round_ms = false);

  // Predicted service time in ms of a batch of `items` of `model` on `worker`'s hardware (the
  // caller checks that the worker holds the model and that its profile covers `items`).
  double predict_ms(const sched::ClusterView& view, sched::WorkerId worker, sched::ModelId model,
                    std::int64_t items) const;
  // Whether predict_ms comes from the profile or a lookup-table entry (not the warm-up line or
  // the 0 ms of a pair never observed).
  bool settled(const sched::ClusterView& view, sched::WorkerId worker, sched::ModelId model, std::int64_t items) const;
  // A measured batch (BatchDone). Ignored by the Profile source.
  void observe(sched::HardwareId hardware, sched::ModelId model, std::int64_t items, Nanos measured);
  // Whether predictions can change as batches complete.
  bool learns() const { return source_ != PredictorSource::Profile; }
  PredictorSource source() const { return source_; }
  // The estimator of a pair (nullptr before its first observation).
  const profile::LatencyEstimator* estimator(sched::HardwareId hardware, sched::ModelId model) const;

 private:
  PredictorSource source_;
  std::int64_t table_after_;
  bool round_ms_;
  std::map<std::pair<sched::HardwareId, sched::ModelId>, profile::LatencyEstimator> estimators_;
};

}  // namespace servelab::kairos
