// What the tuning loop asks of a learner: pick a configuration for the coming episode, learn from
// its measured latency, and name the configuration it currently believes best.
#pragma once

#include <cstddef>

namespace servelab::rrl {

class Tuner {
 public:
  virtual ~Tuner() = default;
  // The configuration for the next episode; `state` is the load level, `rate_qps` the load measured
  // over the previous episode.
  virtual std::size_t decide(std::size_t state, double rate_qps) = 0;
  // The episode under `config` measured `metric_ms` while requests arrived at `rate_qps`.
  virtual void learn(std::size_t state, std::size_t config, double rate_qps, double metric_ms,
                     std::size_t next_state) = 0;
  // The configuration it would pick without exploring, in `state`.
  virtual std::size_t best(std::size_t state) const = 0;
  virtual double mean_region_size() const { return 1; }
};

}  // namespace servelab::rrl
