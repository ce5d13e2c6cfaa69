// Small hand-checkable inputs shared by the RAMSIS tests.
#pragma once

#include <memory>
#include <vector>

#include "servelab/core/time.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/systems/ramsis/latency_table.hpp"

namespace servelab::ramsis::testing {

// One CPU type, two models: "small" (accuracy 0.6, 10 + 2b ms) and "big" (0.9, 40 + 10b ms), b <= 8.
inline std::shared_ptr<profile::Profile> two_model_profile() {
  auto p = std::make_shared<profile::Profile>();
  p->set_price("cpu", 0.0);
  for (std::int64_t b = 1; b <= 8; ++b) {
    p->set_latency("cpu", "small", b, profile::LatencyDistribution::from_samples({(10.0 + 2 * b) / 1e3}));
    p->set_latency("cpu", "big", b, profile::LatencyDistribution::from_samples({(40.0 + 10 * b) / 1e3}));
  }
  p->set_accuracy("small", 0.6);
  p->set_accuracy("big", 0.9);
  return p;
}

// Three models, batches 1..8, latencies in ms: a fast, a medium and a slow model.
inline LatencyTable three_model_table() {
  LatencyTable t;
  t.models = {"fast", "medium", "slow"};
  t.accuracy = {0.60, 0.75, 0.85};
  const double base[3] = {4.0, 9.0, 17.0}, per[3] = {2.5, 4.0, 7.0};
  for (int m = 0; m < 3; ++m) {
    std::vector<Nanos> row;
    for (int b = 1; b <= 8; ++b) row.push_back(millis_to_nanos(base[m] + per[m] * (b - 1)));
    t.latency.push_back(row);
  }
  return t;
}

}  // namespace servelab::ramsis::testing
