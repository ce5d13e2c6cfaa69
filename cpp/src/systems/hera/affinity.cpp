#include "servelab/systems/hera/affinity.hpp"

#include <algorithm>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::hera {

AffinityInput affinity_input(const ModelTables& tables) {
  AffinityInput in;
  const int w = tables.half_workers();
  in.qps_by_ways.assign(static_cast<std::size_t>(tables.ways) + 1, 0.0);
  for (int k = 1; k <= tables.ways; ++k) in.qps_by_ways[k] = tables.at(w, k);
  in.bandwidth_gbs = tables.bandwidth_at(w, tables.ways);
  return in;
}

namespace {
void check_input(const AffinityInput& x, const char* which) {
  if (x.qps_by_ways.size() < 3)
    throw ValueError(str("affinity: model ", which, " has ", x.qps_by_ways.size(), " QPS entries; need ways >= 2"));
  if (!(x.qps_by_ways.back() > 0))
    throw ValueError(str("affinity: model ", which, " has no QPS with every way (", x.qps_by_ways.back(), ")"));
}

// Algorithm 1 without the checks, for the table's inner loop.
Affinity affinity_unchecked(const AffinityInput& a, const AffinityInput& b, double system_bandwidth_gbs) {
  const int ways = static_cast<int>(a.qps_by_ways.size()) - 1;
  const double full_a = a.qps_by_ways[ways], full_b = b.qps_by_ways[ways];
  Affinity out;
  for (int i = 1; i < ways; ++i) {
    const double term = (a.qps_by_ways[i] / full_a + b.qps_by_ways[ways - i] / full_b) / 2;
    if (term > out.llc) {
      out.llc = term;
      out.ways_a = i;
    }
  }
  const double demand = a.bandwidth_gbs + b.bandwidth_gbs;
  out.dram = demand > 0 ? std::min(system_bandwidth_gbs / demand, 1.0) : 1.0;
  out.system = std::min(out.llc, out.dram);
  return out;
}
}  // namespace

Affinity co_location_affinity(const AffinityInput& a, const AffinityInput& b, double system_bandwidth_gbs) {
  check_input(a, "A");
  check_input(b, "B");
  if (a.qps_by_ways.size() != b.qps_by_ways.size())
    throw ValueError(str("affinity: models A and B were profiled with ", a.qps_by_ways.size() - 1, " and ",
                         b.qps_by_ways.size() - 1, " ways"));
  if (!(system_bandwidth_gbs > 0))
    throw ValueError(str("affinity: system_bandwidth_gbs=", system_bandwidth_gbs, " must be > 0"));
  return affinity_unchecked(a, b, system_bandwidth_gbs);
}

std::vector<double> affinity_matrix(std::span<const AffinityInput> models, double system_bandwidth_gbs) {
  const std::size_t n = models.size();
  for (std::size_t i = 0; i < n; ++i) {
    check_input(models[i], "in the list");
    if (models[i].qps_by_ways.size() != models[0].qps_by_ways.size())
      throw ValueError(str("affinity: model ", i, " has ", models[i].qps_by_ways.size() - 1, " ways, model 0 has ",
                           models[0].qps_by_ways.size() - 1));
  }
  if (!(system_bandwidth_gbs > 0))
    throw ValueError(str("affinity: system_bandwidth_gbs=", system_bandwidth_gbs, " must be > 0"));
  std::vector<double> out(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    core::check_interrupt();
    for (std::size_t j = i; j < n; ++j) {
      const double v = affinity_unchecked(models[i], models[j], system_bandwidth_gbs).system;
      out[i * n + j] = v;
      out[j * n + i] = v;  // the LLC term is symmetric: split i for A is split K-i for B
    }
  }
  return out;
}

}  // namespace servelab::hera
