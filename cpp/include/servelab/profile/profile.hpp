// Profiles: what the hardware and models cost in time, accuracy and money.
//
// latency(hardware, model, batch) is a distribution per measured batch size (raw samples, or
// percentiles), interpolated linearly across batch sizes; decisions use one chosen Statistic,
// simulated service times are sampled from the distribution. accuracy(model), price(hardware, $/h),
// memory (MB) and load time (s) per (model, hardware) complete it. Times are seconds at this API;
// the engine asks for int64 nanoseconds through decision_table() / sample_ns().
//
// Hardware and models are interned: their index is their position in hardware() / models(), in
// order of first mention, and stays fixed once given.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/core/time.hpp"

namespace servelab::profile {

enum class Statistic { Mean, P50, P95, P99, MeanWithoutMax };

// "mean", "p50", "p95", "p99", "mean_without_max"; ValueError naming `field` for anything else.
Statistic parse_statistic(std::string_view name, std::string_view field = "statistic");
std::string_view statistic_name(Statistic statistic);

// The latency of one (hardware, model, batch): samples or percentiles, seconds, validated
// (non-empty, finite, > 0; percentiles in (0, 100] and non-decreasing in value).
//
// Samples: quantile(u) is numpy's default (linear) percentile, so p50/p95/p99 match
// numpy.percentile; mean_without_max drops the single largest sample (Kairos's estimate; a single
// sample is its own value). The statistics are computed once, at construction.
class LatencyDistribution {
 public:
  static LatencyDistribution from_samples(std::vector<double> seconds);
  // {percentile, seconds} pairs, e.g. {{50, 0.010}, {95, 0.014}, {99, 0.020}}. The quantile
  // function is piecewise linear between them and flat below the first point (and above the last).
  // Any order; duplicated percentiles are a ValueError.
  static LatencyDistribution from_percentiles(std::vector<std::pair<double, double>> points);

  double statistic(Statistic statistic) const;  // seconds; percentile-only: mean ~ integral of quantiles
  double quantile(double u) const;              // u in [0, 1]
  double sample(Rng& rng) const;                // samples: a uniform choice; percentiles: quantile(U)
  // The value sample() returns for the uniform draw u in [0, 1): samples: sorted_values()[floor(u*n)]
  // (each sample equally likely), percentiles: quantile(u). No allocation.
  double draw(double u) const;
  bool has_samples() const;
  const std::vector<double>& sorted_values() const;  // samples, sorted (empty for percentiles)
  // {percentile, seconds} sorted by percentile (empty for samples).
  const std::vector<std::pair<double, double>>& percentile_points() const { return points_; }

 private:
  LatencyDistribution() = default;
  void cache_statistics();
  std::vector<double> sorted_;                     // samples
  std::vector<std::pair<double, double>> points_;  // or percentiles
  double stats_[5] = {};                           // by Statistic
};

class Profile {
 public:
  // --- building (each validates and names the field and value in its ValueError) ---
  std::int32_t add_hardware(std::string_view name);  // returns the index; idempotent
  std::int32_t add_model(std::string_view name);
  void set_price(std::string_view hardware, double dollars_per_hour);  // >= 0
  void set_accuracy(std::string_view model, double accuracy);          // in [0, 1]
  void set_latency(std::string_view hardware, std::string_view model, std::int64_t batch,
                   LatencyDistribution latency);  // batch >= 1
  void set_memory_mb(std::string_view hardware, std::string_view model, double mb);
  void set_load_time(std::string_view hardware, std::string_view model, double seconds);
  // Where the numbers come from (a paper, an artifact, a measurement run); free text.
  void set_source(std::string source) { source_ = std::move(source); }
  const std::string& source() const { return source_; }

  // --- lookups; unknown names raise KeyError listing the known ones ---
  const std::vector<std::string>& hardware() const { return hardware_; }
  const std::vector<std::string>& models() const { return models_; }
  std::int32_t hardware_index(std::string_view name) const;
  std::int32_t model_index(std::string_view name) const;
  double price(std::int32_t hardware) const;  // $/h; KeyError when not set
  bool has_price(std::int32_t hardware) const;
  double accuracy(std::int32_t model) const;  // NaN when not set
  std::optional<double> memory_mb(std::int32_t hardware, std::int32_t model) const;
  std::optional<double> load_time(std::int32_t hardware, std::int32_t model) const;

  bool has_latency(std::int32_t hardware, std::int32_t model) const;
  // Measured batch sizes, ascending (empty when none).
  std::vector<std::int64_t> batches(std::int32_t hardware, std::int32_t model) const;
  std::int64_t max_batch(std::int32_t hardware, std::int32_t model) const;  // 0 when none
  const LatencyDistribution& latency_at(std::int32_t hardware, std::int32_t model, std::int64_t batch) const;

  // Decision latency in seconds: the statistic at `batch`, linear between the measured batch sizes
  // around it, the smallest measured batch's value below it. ValueError beyond max_batch or when
  // the pair has no latency (naming hardware, model and batch).
  double latency(std::int32_t hardware, std::int32_t model, std::int64_t batch, Statistic statistic) const;
  // A service time in ns: quantile(U) interpolated the same way (one U for both neighbours).
  Nanos sample_ns(std::int32_t hardware, std::int32_t model, std::int64_t batch, Rng& rng) const {
    return sample_ns_at(hardware, model, batch, rng.uniform());
  }
  // sample_ns() for a given U in [0, 1), drawn by the caller.
  Nanos sample_ns_at(std::int32_t hardware, std::int32_t model, std::int64_t batch, double u) const;
  // One batch size's service-time distribution resolved for repeated draws: the measured
  // distributions around it and the weight between them.
  struct SamplingPoint {
    const LatencyDistribution* lower = nullptr;  // null: `upper` alone (measured, or below the smallest)
    const LatencyDistribution* upper = nullptr;
    double weight = 0;  // of the step from lower's draw to upper's
  };
  // sample_ns_at() of a resolved point: the same number.
  static Nanos sample_ns_at(const SamplingPoint& point, double u);
  // The points of every batch 0..max_batch (entry 0 = batch 1's), for the engine's hot path: valid
  // while this profile lives unchanged.
  std::vector<SamplingPoint> sampling_table(std::int32_t hardware, std::int32_t model) const;
  // latency(...) in ns for every batch 0..max_batch (entry 0 = batch 1's), for the engine's hot path.
  std::vector<Nanos> decision_table(std::int32_t hardware, std::int32_t model, Statistic statistic) const;

  // One line per (hardware, model) whose statistic decreases as the batch grows: allowed (real
  // measurements are noisy) but worth a look.
  std::vector<std::string> warnings(Statistic statistic = Statistic::Mean) const;

  // Every (hardware, model) pair with latency, memory or load time, in (hardware, model) order.
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs() const;

 private:
  const std::string& hardware_name(std::int32_t hardware) const;  // KeyError for a bad index
  const std::string& model_name(std::int32_t model) const;
  // The latency of a pair; ValueError naming the pair when it has none.
  const std::map<std::int64_t, LatencyDistribution>& curve(std::int32_t hardware, std::int32_t model,
                                                           std::int64_t batch) const;

  std::string source_;
  std::vector<std::string> hardware_, models_;
  std::vector<std::optional<double>> price_;
  std::vector<double> accuracy_;
  struct PairData {
    std::map<std::int64_t, LatencyDistribution> latency;  // by batch
    std::optional<double> memory_mb, load_time;
  };
  std::map<std::pair<std::int32_t, std::int32_t>, PairData> pairs_;  // by (hardware, model)
};

// The random stream sample_service_times draws from, under the seed it is given.
inline constexpr std::string_view kSampleStream = "profile/sample";

// `count` service times of (hardware, model, batch), drawn as the simulator draws them (sample_ns)
// from the stream kSampleStream of `seed`: the same seed gives the same times. ValueError for
// count < 0.
std::vector<Nanos> sample_service_times(const Profile& profile, std::int32_t hardware, std::int32_t model,
                                        std::int64_t batch, std::uint64_t seed, std::int64_t count);

}  // namespace servelab::profile
