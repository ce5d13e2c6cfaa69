// Service times of emulated batches, the same in both worlds: drawn from the profile's
// distribution (sampled), or always one statistic (fixed). The simulator and the serving loop's
// emulated executor both use this, with the same per-worker streams, so the same dispatch
// sequence gets the same service times in either world.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "servelab/core/rng.hpp"
#include "servelab/core/time.hpp"
#include "servelab/profile/profile.hpp"

namespace servelab::cluster {

class ServiceTimes {
 public:
  // `fixed`: nullopt samples the distribution; otherwise every batch takes that statistic.
  ServiceTimes(std::shared_ptr<const profile::Profile> profile, std::optional<profile::Statistic> fixed);
  // The service time of `items` items of `model` on `hardware`; draws from `rng` only when sampling.
  // ValueError when the batch is outside the profile.
  Nanos draw(std::int32_t hardware, std::int32_t model, std::int64_t items, Rng& rng);
  // draw() when sampling, for a uniform U in [0, 1) drawn by the caller from the worker's stream:
  // the batch's distributions looked up in a table (built at a pair's first use), the errors out
  // of line.
  Nanos sampled_at(std::int32_t hardware, std::int32_t model, std::int64_t items, double u) {
    const auto& table = sampling_[static_cast<std::size_t>(hardware) * n_models_ + static_cast<std::size_t>(model)];
    if (items >= 1 && items < static_cast<std::int64_t>(table.size())) {
      return profile::Profile::sample_ns_at(table[static_cast<std::size_t>(items)], u);
    }
    return sampled_at_slow(hardware, model, items, u);
  }
  // draw() when fixed() is set, without a stream: the table lookup inline, a table's first use
  // and the errors out of line.
  Nanos fixed_time(std::int32_t hardware, std::int32_t model, std::int64_t items) {
    const Nanos t = fixed_time_in_table(hardware, model, items);
    return t >= 0 ? t : fixed_time_slow(hardware, model, items);
  }
  // fixed_time() when the pair's table is built and holds the batch size, else -1 (no call).
  Nanos fixed_time_in_table(std::int32_t hardware, std::int32_t model, std::int64_t items) const {
    const auto& table = tables_[static_cast<std::size_t>(hardware) * n_models_ + static_cast<std::size_t>(model)];
    return items >= 1 && items < static_cast<std::int64_t>(table.size()) ? table[items] : -1;
  }
  std::optional<profile::Statistic> fixed() const { return fixed_; }

 private:
  std::shared_ptr<const profile::Profile> profile_;
  std::optional<profile::Statistic> fixed_;
  std::vector<std::vector<Nanos>> tables_;  // decision_table() by hardware * models + model, lazily
  std::vector<std::vector<profile::Profile::SamplingPoint>> sampling_;  // sampling_table(), the same
  std::size_t n_models_ = 0;
  Nanos fixed_time_slow(std::int32_t hardware, std::int32_t model, std::int64_t items);
  Nanos sampled_at_slow(std::int32_t hardware, std::int32_t model, std::int64_t items, double u);
};

// The stream a worker's service times come from: Rng(seed, "service").derive("worker<i>").
Rng service_stream(std::uint64_t seed, std::int32_t worker);
// The same from the parent stream Rng(seed, "service") (service_parent_stream), made once for
// many workers.
Rng service_parent_stream(std::uint64_t seed);
Rng service_stream(const Rng& parent, std::int32_t worker);
// service_stream(parent, w) for the `count` workers from `first`: the same streams, seeded together.
std::vector<Rng> service_streams(const Rng& parent, std::int32_t first, std::int32_t count);

}  // namespace servelab::cluster
