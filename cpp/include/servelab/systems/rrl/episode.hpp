// One measurement episode: a batch of consecutive requests served under one configuration, from an
// idle server, as the RRL artifact measures (its modified TF-Serving replays 200 requests per
// episode and reports their mean latency). The episode's latencies give the objective's cost.
//
// CPU spaces (knobs workers, inter_op, intra_op): FCFS over `workers` serving workers; a request's
// service time is CpuModel::service_ms with the number of requests in service when it starts.
// GPU spaces (knobs batch_size, batch_timeout_ms, batch_threads): a batch opens with the oldest
// waiting request and closes when it holds batch_size requests or batch_timeout_ms after it opened;
// closed batches wait, in order, for one of batch_threads threads; every request of a batch finishes
// with it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "servelab/core/rng.hpp"
#include "servelab/systems/rrl/config_space.hpp"
#include "servelab/systems/rrl/perf_model.hpp"

namespace servelab::rrl {

// What the tuner minimises (Sec. 4.1): latency (mean or 95th percentile) with the given resources,
// or the resources used while the episode's 95th percentile latency meets slo_ms.
struct Objective {
  enum class Kind { MeanLatency, TailLatency, SloResources };
  Kind kind = Kind::MeanLatency;
  double slo_ms = 0;  // SloResources only: positive

  static Objective parse(const std::string& name, double slo_ms);  // "mean", "p95", "slo"
  std::string name() const;
  void validate() const;
  // The latency the estimator learns: the mean (MeanLatency) or the p95 (the others), ms.
  double metric_ms(double mean_ms, double p95_ms) const { return kind == Kind::MeanLatency ? mean_ms : p95_ms; }
  // The cost Q-learning minimises, positive: ln(1 + latency_ms) for the latency objectives (so that
  // Boltzmann's beta acts on relative differences); for SloResources, the resource share (0, 1] when
  // the p95 meets the SLO, else 1 + p95 / slo (every violation costs more than any resource use).
  double cost(double metric_ms, double resource_share) const;
};

struct EpisodeResult {
  double mean_ms = 0;
  double p95_ms = 0;
  double metric_ms = 0;  // Objective::metric_ms
  double cost = 0;       // Objective::cost
};

// The machine-independent part of a configuration: the knob values an episode needs.
struct Setting {
  bool gpu = false;
  std::int64_t workers = 1, inter = 1, intra = 1;             // CPU
  std::int64_t batch = 1, timeout_ms = 0, batch_threads = 1;  // GPU
  double resource_share = 1;                                  // cores (CPU) or GPU threads used, (0, 1]
};

// The settings of every configuration of `space`: ValueError when the space lacks the knobs of its
// kind (cpu: workers, inter_op, intra_op; gpu: batch_size, batch_timeout_ms, batch_threads) or a
// value is below its minimum (1, except batch_timeout_ms >= 0). CPU share = min(1, workers * inter_op *
// intra_op / cores); GPU share = batch_threads / the space's largest batch_threads.
std::vector<Setting> settings_of(const ConfigSpace& space, const PerfModel& model);

// Serves `arrivals_ms` (non-decreasing, relative to the episode's first request) under `setting`.
// `noise`: the lognormal service-time noise of model.noise_cv (nullptr: noise-free). `scratch`
// avoids reallocation between calls.
EpisodeResult run_episode(const PerfModel& model, const Setting& setting, std::span<const double> arrivals_ms,
                          const Objective& objective, Rng* noise, std::vector<double>& scratch);

}  // namespace servelab::rrl
