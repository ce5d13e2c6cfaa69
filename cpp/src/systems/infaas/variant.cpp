#include "servelab/systems/infaas/variant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "servelab/core/errors.hpp"

namespace servelab::infaas {

double Variant::latency_at(std::int32_t batch) const {
  if (batch < 1 || batch > max_batch()) return std::numeric_limits<double>::infinity();
  return latency_ms[static_cast<std::size_t>(batch - 1)];
}

double Variant::saturation_qps() const {
  if (peak_qps > 0) return peak_qps;
  double best = 0.0;
  for (std::size_t b = 0; b < latency_ms.size(); ++b) best = std::max(best, 1000.0 * (b + 1) / latency_ms[b]);
  return best;
}

double Variant::saturation_qps(double slo_ms) const {
  if (peak_qps > 0) return latency_at(1) <= slo_ms ? peak_qps : 0.0;
  double best = 0.0;
  for (std::size_t b = 0; b < latency_ms.size(); ++b) {
    if (latency_ms[b] <= slo_ms) best = std::max(best, 1000.0 * (b + 1) / latency_ms[b]);
  }
  return best;
}

void validate(const Variant& v, std::size_t i) {
  const auto field = [&](const char* name) { return str("variants[", i, "].", name); };
  if (v.name.empty()) throw ValueError(field("name") + " is empty");
  if (v.architecture.empty()) throw ValueError(field("architecture") + " is empty (variant '" + v.name + "')");
  if (v.task.empty()) throw ValueError(field("task") + " is empty (variant '" + v.name + "')");
  if (v.hardware.empty()) throw ValueError(field("hardware") + " is empty (variant '" + v.name + "')");
  if (!(v.accuracy >= 0 && v.accuracy <= 1)) {
    throw ValueError(str(field("accuracy"), "=", v.accuracy, " must be a fraction in [0, 1]"));
  }
  if (v.batch_opt < 1) throw ValueError(str(field("batch_opt"), "=", v.batch_opt, " must be >= 1"));
  if (v.latency_ms.size() != static_cast<std::size_t>(v.batch_opt)) {
    throw ValueError(str(field("latency_ms"), " has ", v.latency_ms.size(), " entries; give one per batch 1..",
                         v.batch_opt, " (batch_opt)"));
  }
  for (std::size_t b = 0; b < v.latency_ms.size(); ++b) {
    if (!(std::isfinite(v.latency_ms[b]) && v.latency_ms[b] > 0)) {
      throw ValueError(str(field("latency_ms"), "[", b, "]=", v.latency_ms[b], " must be positive and finite"));
    }
  }
  const auto non_negative = [&](const char* name, double x) {
    if (!(std::isfinite(x) && x >= 0)) throw ValueError(str(field(name), "=", x, " must be >= 0 and finite"));
  };
  non_negative("load_s", v.load_s);
  non_negative("memory_mb", v.memory_mb);
  non_negative("cost_per_s", v.cost_per_s);
  non_negative("peak_qps", v.peak_qps);
}

}  // namespace servelab::infaas
