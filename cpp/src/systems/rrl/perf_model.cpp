#include "servelab/systems/rrl/perf_model.hpp"

#include <algorithm>
#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::rrl {
namespace {

void require(bool ok, const char* field, double value, const char* rule) {
  if (!ok) throw ValueError(str(field, "=", value, " ", rule));
}

bool finite_positive(double x) { return std::isfinite(x) && x > 0; }
bool finite_non_negative(double x) { return std::isfinite(x) && x >= 0; }
bool fraction(double x) { return std::isfinite(x) && x >= 0 && x <= 1; }

}  // namespace

void CpuModel::validate() const {
  require(finite_positive(cores) && cores <= 4096, "cores", cores, "must be positive and at most 4096");
  require(finite_positive(base_ms), "base_ms", base_ms, "must be positive and finite");
  require(fraction(intra_fraction), "intra_fraction", intra_fraction, "must be in [0, 1]");
  require(fraction(inter_fraction), "inter_fraction", inter_fraction, "must be in [0, 1]");
  require(std::isfinite(op_width) && op_width >= 1, "op_width", op_width, "must be >= 1 and finite");
  require(finite_non_negative(interference), "interference", interference, "must be >= 0 and finite");
  require(finite_non_negative(sync_ms), "sync_ms", sync_ms, "must be >= 0 and finite");
}

double CpuModel::service_ms(std::int64_t inter, std::int64_t intra, std::int64_t in_service) const {
  const double a = static_cast<double>(inter), b = static_cast<double>(intra);
  const double used_inter = std::min(a, op_width);
  const double s_intra = 1 / ((1 - intra_fraction) + intra_fraction / b);
  const double s_inter = 1 / ((1 - inter_fraction) + inter_fraction / used_inter);
  const double demand = static_cast<double>(in_service) * used_inter * b / cores;
  const double slowdown = demand <= 1 ? 1 : demand * (1 + interference * (demand - 1));
  return (base_ms / (s_intra * s_inter) + sync_ms * (a * b - 1)) * slowdown;
}

void GpuModel::validate() const {
  require(finite_non_negative(batch_fixed_ms), "batch_fixed_ms", batch_fixed_ms, "must be >= 0 and finite");
  require(finite_non_negative(per_item_ms), "per_item_ms", per_item_ms, "must be >= 0 and finite");
  require(batch_fixed_ms + per_item_ms > 0, "batch_fixed_ms + per_item_ms", batch_fixed_ms + per_item_ms,
          "must be positive");
  require(finite_non_negative(interference), "gpu interference", interference, "must be >= 0 and finite");
}

double GpuModel::service_ms(std::int64_t batch, std::int64_t concurrent) const {
  return (batch_fixed_ms + per_item_ms * static_cast<double>(batch)) *
         (1 + interference * static_cast<double>(concurrent - 1));
}

void PerfModel::validate() const {
  cpu.validate();
  gpu.validate();
  require(std::isfinite(noise_cv) && noise_cv >= 0 && noise_cv <= 10, "noise_cv", noise_cv, "must be in [0, 10]");
}

}  // namespace servelab::rrl
