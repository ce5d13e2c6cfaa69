// The HTTP engine's live counters, under the names the Python front-end's /metrics writes
// (servelab/frontend/live_metrics.py), which reads a snapshot of them when it renders: one scrape
// covers both engines. Outcomes are counted on the serving loop's thread, refusals on the
// engine's. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "servelab/serve/session.hpp"

namespace servelab::frontend {

// The per-model families, in live_metrics.py's order.
inline constexpr const char* kModelFamilies[] = {"nv_inference_request_success",
                                                 "nv_inference_request_failure",
                                                 "nv_inference_count",
                                                 "nv_inference_exec_count",
                                                 "nv_inference_request_duration_us",
                                                 "nv_inference_queue_duration_us",
                                                 "nv_inference_compute_infer_duration_us",
                                                 "servelab_slo_violations",
                                                 "nv_inference_pending_request_count",
                                                 "servelab_queue_length"};
inline constexpr std::size_t kFamilies = std::size(kModelFamilies);

struct CountersSnapshot {
  std::vector<std::vector<double>> values;  // [family][model]
  std::map<std::string, double> refused;    // by reason
  std::int64_t inflight = 0;
  std::map<std::int64_t, double> busy_s;        // per worker
  std::vector<std::int64_t> last_inference_ms;  // per model, ms since the epoch (0: none yet)
};

class LiveCounters {
 public:
  explicit LiveCounters(std::size_t models);

  void accepted(std::int32_t model);
  // An accepted request the session then refused at submit: accepted() undone.
  void withdrawn(std::int32_t model);
  // An accepted request's outcome (`wall_s`: the engine's time from the body read to the outcome).
  void answered(std::int32_t model, const serve::Outcome& outcome, double wall_s, std::int32_t items);
  // Refused before the session saw it; a failure of `model` when it named a known one.
  void refused(const std::string& reason, std::optional<std::int32_t> model = std::nullopt);
  CountersSnapshot snapshot() const;

 private:
  mutable std::mutex mutex_;
  CountersSnapshot c_;
  std::map<std::int64_t, std::pair<Nanos, Nanos>> last_batch_;  // per worker: (start, finish)
};

}  // namespace servelab::frontend
