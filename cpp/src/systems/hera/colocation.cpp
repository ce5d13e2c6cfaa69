#include "servelab/systems/hera/colocation.hpp"

#include <algorithm>
#include <array>

#include "servelab/core/errors.hpp"

namespace servelab::hera {

Colocation run_alone(const NodeSpec& node, const ModelProfile& model, const ModelTables& tables) {
  Colocation c;
  c.workers_a = tables.max_workers;
  c.ways_a = node.llc_ways;
  if (c.workers_a < 1) {
    c.reason = str("model '", model.name, "': one worker needs memory_gb=", model.memory_gb,
                   " > mem_capacity_gb=", node.mem_capacity_gb);
    return c;
  }
  const Tenant t{&model, c.workers_a, c.ways_a};
  const auto load = evaluate(node, std::span<const Tenant>(&t, 1));
  c.qps_a = load.tenants[0].qps;
  c.bandwidth_utilisation = load.bandwidth_utilisation;
  c.feasible = c.qps_a > 0;
  c.load_a = c.feasible ? 1.0 : 0.0;
  c.emu = c.load_a;
  if (!c.feasible) c.reason = str("model '", model.name, "' cannot meet sla_ms=", model.sla_ms, " on this node");
  return c;
}

int best_llc_partition(const ModelTables& a, int workers_a, const ModelTables& b, int workers_b) {
  const double iso_a = a.isolated_qps(), iso_b = b.isolated_qps();
  const int ways = a.ways;
  int best = std::max(1, ways / 2);
  double best_value = -1;
  for (int i = 1; i < ways; ++i) {
    const double value = a.at(workers_a, i) / iso_a + b.at(workers_b, ways - i) / iso_b;
    if (value > best_value) {
      best_value = value;
      best = i;
    }
  }
  return best;
}

Colocation co_locate(const NodeSpec& node, const ModelProfile& a, const ModelTables& ta, const Scalability& sa,
                     const ModelProfile& b, const ModelTables& tb, const Scalability& sb) {
  Colocation c;
  if (node.cores < 2 || node.llc_ways < 2) {
    c.reason = str("node '", node.name, "' has cores=", node.cores, " and llc_ways=", node.llc_ways,
                   "; co-location needs at least 2 of each");
    return c;
  }
  if (ta.max_workers < 1 || tb.max_workers < 1 || !(ta.isolated_qps() > 0) || !(tb.isolated_qps() > 0)) {
    c.reason = str("model '", (ta.isolated_qps() > 0 ? b.name : a.name), "' cannot be served alone on this node");
    return c;
  }
  // Even split of the cores; a model that cannot use its half leaves the idle cores to the other.
  const int half = node.cores / 2;
  int wa = std::min({half, sa.useful_workers, ta.max_workers});
  int wb = std::min({node.cores - half, sb.useful_workers, tb.max_workers});
  if (wa < half) wb = std::min({node.cores - wa, tb.max_workers});
  if (wb < node.cores - half) wa = std::min({node.cores - wb, ta.max_workers});
  // Over the memory: the split within these caps that fits and keeps the most normalised QPS
  // (the objective of adjust_LLC_partition), so that the cores a trimmed model frees go to the
  // other model, as the bootstrapping rule gives idle cores to the other model.
  if (wa * a.memory_gb + wb * b.memory_gb > node.mem_capacity_gb) {
    const int cap_a = std::min(node.cores - 1, std::max(wa, std::min(sa.useful_workers, ta.max_workers)));
    const int cap_b = std::min(node.cores - 1, std::max(wb, std::min(sb.useful_workers, tb.max_workers)));
    const auto fits = [&](int x, int y) { return x * a.memory_gb + y * b.memory_gb <= node.mem_capacity_gb; };
    double best = -1;
    int best_a = 0, best_b = 0;
    for (int x = 1; x <= cap_a; ++x) {
      for (int y = 1; y <= cap_b && x + y <= node.cores; ++y) {
        if (!fits(x, y)) break;
        const double value = ta.at(x, ta.ways) / ta.isolated_qps() + tb.at(y, tb.ways) / tb.isolated_qps();
        if (value > best + 1e-12) {
          best = value;
          best_a = x;
          best_b = y;
        }
      }
    }
    wa = best_a;
    wb = best_b;
  }
  if (wa < 1 || wb < 1 || wa * a.memory_gb + wb * b.memory_gb > node.mem_capacity_gb) {
    c.reason = str("out of memory: one worker each of '", a.name, "' (", a.memory_gb, " GB) and '", b.name, "' (",
                   b.memory_gb, " GB) exceed mem_capacity_gb=", node.mem_capacity_gb);
    return c;
  }
  c.workers_a = wa;
  c.workers_b = wb;
  c.ways_a = best_llc_partition(ta, wa, tb, wb);
  c.ways_b = node.llc_ways - c.ways_a;
  const std::array<Tenant, 2> tenants{Tenant{&a, wa, c.ways_a}, Tenant{&b, wb, c.ways_b}};
  const auto load = evaluate(node, tenants);
  c.qps_a = load.tenants[0].qps;
  c.qps_b = load.tenants[1].qps;
  c.bandwidth_utilisation = load.bandwidth_utilisation;
  c.load_a = c.qps_a / ta.isolated_qps();
  c.load_b = c.qps_b / tb.isolated_qps();
  c.emu = c.load_a + c.load_b;
  c.feasible = c.qps_a > 0 && c.qps_b > 0;
  if (!c.feasible)
    c.reason = str("co-located, '", c.qps_a > 0 ? b.name : a.name, "' cannot meet its SLA with ", c.qps_a > 0 ? wb : wa,
                   " workers");
  return c;
}

}  // namespace servelab::hera
