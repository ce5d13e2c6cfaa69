#include "servelab/systems/hera/offline.hpp"

#include <set>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::hera {

ClusterTables Offline::cluster() const {
  ClusterTables t;
  t.n = static_cast<int>(models.size());
  const auto n = models.size();
  for (std::size_t i = 0; i < n; ++i) {
    t.isolated_qps.push_back(tables[i].isolated_qps());
    t.high.push_back(scalability[i].high ? 1 : 0);
  }
  t.affinity = affinity;
  t.pair_qps.assign(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j && pairs[i * n + j].feasible) t.pair_qps[i * n + j] = pairs[i * n + j].qps_a;
  return t;
}

Offline build_offline(const NodeSpec& node, std::span<const ModelProfile> models, double threshold) {
  node.validate();
  if (models.empty()) throw ValueError("hera: no models");
  std::set<std::string> names;
  for (const auto& m : models) {
    m.validate();
    if (!names.insert(m.name).second) throw ValueError(str("hera: model name '", m.name, "' appears twice"));
  }
  Offline off;
  off.node = node;
  off.models.assign(models.begin(), models.end());
  const std::size_t n = models.size();
  for (const auto& m : models) {
    off.tables.push_back(profile_model(node, m));
    const auto& t = off.tables.back();
    if (t.max_workers < 1)
      throw ValueError(str("model '", m.name, "': one worker needs memory_gb=", m.memory_gb,
                           " > the node's mem_capacity_gb=", node.mem_capacity_gb));
    if (!(t.isolated_qps() > 0))
      throw ValueError(str("model '", m.name, "': cannot meet sla_ms=", m.sla_ms, " on node '", node.name,
                           "' (one query alone takes ", m.alone_latency_ms(node.llc_mb, node.core_bandwidth_gbs),
                           " ms)"));
    off.scalability.push_back(classify(t, threshold));
    off.affinity_inputs.push_back(affinity_input(t));
  }
  off.affinity = affinity_matrix(off.affinity_inputs, node.mem_bandwidth_gbs);
  off.pairs.resize(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    core::check_interrupt();
    for (std::size_t j = 0; j < n; ++j) {
      off.pairs[i * n + j] = i == j ? run_alone(node, models[i], off.tables[i])
                                    : co_locate(node, models[i], off.tables[i], off.scalability[i], models[j],
                                                off.tables[j], off.scalability[j]);
    }
  }
  return off;
}

}  // namespace servelab::hera
