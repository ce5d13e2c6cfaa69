#include "servelab/systems/kairos/latency_predictor.hpp"

#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::kairos {

PredictorSource parse_predictor_source(std::string_view name) {
  if (name == "profile") return PredictorSource::Profile;
  if (name == "online") return PredictorSource::Online;
  if (name == "online_from_profile") return PredictorSource::OnlineFromProfile;
  throw ValueError(str("predictor='", name, "' is not one of 'profile', 'online', 'online_from_profile'"));
}

std::string_view predictor_source_name(PredictorSource source) {
  switch (source) {
    case PredictorSource::Profile:
      return "profile";
    case PredictorSource::Online:
      return "online";
    case PredictorSource::OnlineFromProfile:
      return "online_from_profile";
  }
  return "?";
}

LatencyPredictor::LatencyPredictor(PredictorSource source, std::int64_t table_after, bool round_ms)
    : source_(source), table_after_(table_after), round_ms_(round_ms) {
  if (table_after < 1) throw ValueError(str("table_after=", table_after, " must be >= 1"));
}

double LatencyPredictor::predict_ms(const sched::ClusterView& view, sched::WorkerId worker, sched::ModelId model,
                                    std::int64_t items) const {
  double ms = 0.0;
  if (source_ == PredictorSource::Profile) {
    ms = nanos_to_millis(view.predicted_latency(worker, model, items));
  } else {
    const auto* est = estimator(view.hardware(worker), model);
    if (source_ == PredictorSource::OnlineFromProfile) {
      ms = est != nullptr && est->uses_table(items) ? est->predict(items) * 1e3
                                                    : nanos_to_millis(view.predicted_latency(worker, model, items));
    } else if (est != nullptr) {
      ms = est->predict(items) * 1e3;
    }
  }
  return round_ms_ ? std::nearbyint(ms) : ms;
}

bool LatencyPredictor::settled(const sched::ClusterView& view, sched::WorkerId worker, sched::ModelId model,
                               std::int64_t items) const {
  if (source_ != PredictorSource::Online) return true;  // profile, or table-or-profile
  const auto* est = estimator(view.hardware(worker), model);
  return est != nullptr && est->uses_table(items);
}

void LatencyPredictor::observe(sched::HardwareId hardware, sched::ModelId model, std::int64_t items, Nanos measured) {
  if (source_ == PredictorSource::Profile || measured <= 0) return;
  auto it = estimators_.find({hardware, model});
  if (it == estimators_.end())
    it = estimators_.emplace(std::pair{hardware, model}, profile::LatencyEstimator(table_after_)).first;
  it->second.observe(items, nanos_to_seconds(measured));
}

const profile::LatencyEstimator* LatencyPredictor::estimator(sched::HardwareId hardware, sched::ModelId model) const {
  const auto it = estimators_.find({hardware, model});
  return it == estimators_.end() ? nullptr : &it->second;
}

}  // namespace servelab::kairos
