#include "servelab/systems/hera/tables.hpp"

#include <algorithm>

#include "servelab/core/interrupt.hpp"
#include "servelab/systems/hera/contention.hpp"

namespace servelab::hera {

double ModelTables::at(int workers, int ways_allocated) const {
  if (workers < 0 || workers > cores || ways_allocated < 0 || ways_allocated > ways) return 0.0;
  return qps[static_cast<std::size_t>(workers) * (ways + 1) + ways_allocated];
}

double ModelTables::bandwidth_at(int workers, int ways_allocated) const {
  if (workers < 0 || workers > cores || ways_allocated < 0 || ways_allocated > ways) return 0.0;
  return bandwidth[static_cast<std::size_t>(workers) * (ways + 1) + ways_allocated];
}

int ModelTables::half_workers() const { return std::min(cores / 2 > 0 ? cores / 2 : 1, max_workers); }

ModelTables profile_model(const NodeSpec& node, const ModelProfile& model) {
  node.validate();
  model.validate();
  ModelTables t;
  t.name = model.name;
  t.cores = node.cores;
  t.ways = node.llc_ways;
  t.max_workers = max_workers(node, model);
  const std::size_t size = static_cast<std::size_t>(node.cores + 1) * (node.llc_ways + 1);
  t.qps.assign(size, 0.0);
  t.bandwidth.assign(size, 0.0);
  for (int w = 1; w <= t.max_workers; ++w) {
    core::check_interrupt();
    for (int k = 1; k <= node.llc_ways; ++k) {
      const Tenant tenant{&model, w, k};
      const auto load = evaluate(node, std::span<const Tenant>(&tenant, 1));
      const std::size_t i = static_cast<std::size_t>(w) * (node.llc_ways + 1) + k;
      t.qps[i] = load.tenants[0].qps;
      t.bandwidth[i] = load.tenants[0].bandwidth_gbs;
    }
  }
  return t;
}

}  // namespace servelab::hera
