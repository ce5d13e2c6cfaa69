#include "servelab/frontend/live_counters.hpp"

#include <algorithm>
#include <chrono>

namespace servelab::frontend {
namespace {

enum Family : std::size_t {
  kSuccess,
  kFailure,
  kCount,
  kExecCount,
  kRequestUs,
  kQueueUs,
  kComputeUs,
  kSloViolations,
  kPending,
  kQueueLength,
};

}  // namespace

LiveCounters::LiveCounters(std::size_t models) {
  c_.values.assign(kFamilies, std::vector<double>(models, 0.0));
  c_.last_inference_ms.assign(models, 0);
}

void LiveCounters::accepted(std::int32_t model) {
  std::lock_guard lock(mutex_);
  ++c_.inflight;
  c_.values[kPending][model] += 1;
  c_.values[kQueueLength][model] += 1;
}

void LiveCounters::withdrawn(std::int32_t model) {
  std::lock_guard lock(mutex_);
  --c_.inflight;
  c_.values[kPending][model] -= 1;
  c_.values[kQueueLength][model] -= 1;
}

void LiveCounters::answered(std::int32_t model, const serve::Outcome& o, double wall_s, std::int32_t items) {
  const auto now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  std::lock_guard lock(mutex_);
  auto& v = c_.values;
  --c_.inflight;
  v[kPending][model] -= 1;
  v[kQueueLength][model] -= 1;
  c_.last_inference_ms[model] = now_ms;
  const bool completed = o.status == cluster::QueryStatus::Completed;
  if (completed) {
    v[kSuccess][model] += 1;
    v[kCount][model] += items;
    v[kRequestUs][model] += wall_s * 1e6;
    v[kQueueUs][model] += static_cast<double>(o.start - o.arrival) / 1e3;
    v[kComputeUs][model] += static_cast<double>(o.finish - o.start) / 1e3;
    // The queries of one batch count its time once.
    auto& last = last_batch_[o.worker];
    if (last != std::pair(o.start, o.finish)) {
      last = {o.start, o.finish};
      c_.busy_s[o.worker] += static_cast<double>(std::max<Nanos>(o.finish - o.start, 0)) / 1e9;
      v[kExecCount][model] += 1;
    }
  } else {
    v[kFailure][model] += 1;
  }
  if (!completed || o.finish > o.deadline) v[kSloViolations][model] += 1;
}

void LiveCounters::refused(const std::string& reason, std::optional<std::int32_t> model) {
  std::lock_guard lock(mutex_);
  c_.refused[reason] += 1;
  if (model) c_.values[kFailure][*model] += 1;
}

CountersSnapshot LiveCounters::snapshot() const {
  std::lock_guard lock(mutex_);
  return c_;
}

}  // namespace servelab::frontend
