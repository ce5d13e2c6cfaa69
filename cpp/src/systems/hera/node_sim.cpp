#include "servelab/systems/hera/node_sim.hpp"

#include <algorithm>
#include <cmath>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/systems/hera/contention.hpp"

namespace servelab::hera {

namespace {
void check_allocation(const NodeSpec& node, const Allocation& x, const ModelProfile& a, const ModelProfile& b) {
  for (int m = 0; m < 2; ++m)
    if (x.workers[m] < 1 || x.ways[m] < 1)
      throw ValueError(str("node run: model ", m, " has workers=", x.workers[m], ", ways=", x.ways[m], "; need >= 1"));
  if (x.workers[0] + x.workers[1] > node.cores || x.ways[0] + x.ways[1] > node.llc_ways)
    throw ValueError(str("node run: allocation (", x.workers[0], "+", x.workers[1], " cores, ", x.ways[0], "+",
                         x.ways[1], " ways) exceeds the node"));
  (void)a;
  (void)b;
}

// The controller may ask for more workers than memory holds: trim the larger-footprint model.
Allocation fit_memory(const NodeSpec& node, Allocation x, const ModelProfile& a, const ModelProfile& b) {
  while (x.workers[0] * a.memory_gb + x.workers[1] * b.memory_gb > node.mem_capacity_gb) {
    const int m = (a.memory_gb >= b.memory_gb ? x.workers[0] > 1 : x.workers[1] <= 1) ? 0 : 1;
    if (x.workers[m] <= 1) break;
    --x.workers[m];
  }
  return x;
}
}  // namespace

NodeRun simulate_node(const NodeSpec& node, const ModelProfile& a, const ModelProfile& b, NodeController& controller,
                      std::span<const double> loads, double window_s, Allocation start) {
  if (!(window_s > 0) || !std::isfinite(window_s)) throw ValueError(str("window_s=", window_s, " must be > 0"));
  if (loads.size() % 2 != 0) throw ValueError(str("loads has ", loads.size(), " values; need [windows x 2]"));
  const std::array<const ModelProfile*, 2> model{&a, &b};
  Allocation x = fit_memory(node, start, a, b);
  check_allocation(node, x, a, b);
  NodeRun run;
  std::array<double, 2> backlog{0, 0};  // queries waiting beyond the window
  const std::size_t windows = loads.size() / 2;
  for (std::size_t k = 0; k < windows; ++k) {
    core::check_interrupt();
    const std::array<double, 2> arrival{loads[2 * k], loads[2 * k + 1]};
    const std::array<Tenant, 2> tenants{Tenant{&a, x.workers[0], x.ways[0]}, Tenant{&b, x.workers[1], x.ways[1]}};
    // The backlog is offered on top of this window's arrivals.
    const std::array<double, 2> offered{arrival[0] + backlog[0] / window_s, arrival[1] + backlog[1] / window_s};
    const auto loaded = evaluate_at(node, tenants, offered);
    std::array<Observation, 2> seen;
    for (int m = 0; m < 2; ++m) {
      const auto& t = loaded[m];
      const double served = std::min(offered[m], t.capacity_qps * 0.999);
      backlog[m] = std::max(0.0, (offered[m] - served) * window_s);
      const double steady = response_quantile_ms(x.workers[m], t.service_ms, served);
      // Waiting queries ahead of a new arrival take backlog / capacity to clear.
      const double tail = steady + backlog[m] / t.capacity_qps * 1000.0;
      seen[m] = {tail, arrival[m]};
      run.tail_over_sla[m].push_back(tail / model[m]->sla_ms);
      run.workers[m].push_back(x.workers[m]);
      run.ways[m].push_back(x.ways[m]);
      run.arrival_qps[m].push_back(arrival[m]);
      run.served_qps[m].push_back(served);
      if (tail > model[m]->sla_ms) ++run.violations[m];
    }
    run.time_s.push_back(static_cast<double>(k + 1) * window_s);
    x = fit_memory(node, controller.adjust(seen, x), a, b);
    check_allocation(node, x, a, b);
  }
  return run;
}

double max_partner_load(const NodeSpec& node, const ModelProfile& a, const ModelTables& ta, const ModelProfile& b,
                        const ModelTables& tb, std::string_view controller, double load_a, int windows, int settle,
                        double tolerance, double window_s) {
  if (!(load_a >= 0 && load_a <= 1)) throw ValueError(str("load_a=", load_a, " must be in [0, 1]"));
  if (windows < 1 || settle < 1 || settle > windows)
    throw ValueError(str("windows=", windows, ", settle=", settle, ": need 1 <= settle <= windows"));
  if (!(tolerance >= 0 && tolerance < 1)) throw ValueError(str("tolerance=", tolerance, " must be in [0, 1)"));
  const double iso_a = ta.isolated_qps(), iso_b = tb.isolated_qps();
  Allocation start;  // Hera's bootstrapping: cores and ways split evenly
  start.workers = {node.cores / 2, node.cores - node.cores / 2};
  start.ways = {node.llc_ways / 2, node.llc_ways - node.llc_ways / 2};
  auto sustained = [&](double load_b) {
    auto ctl = make_controller(controller, node, ta, a.sla_ms, tb, b.sla_ms);
    std::vector<double> loads;
    for (int k = 0; k < windows; ++k) {
      loads.push_back(load_a * iso_a);
      loads.push_back(load_b * iso_b);
    }
    const auto run = simulate_node(node, a, b, *ctl, loads, window_s, start);
    int missed = 0;
    for (int k = windows - settle; k < windows; ++k)
      missed += run.tail_over_sla[0][k] > 1 || run.tail_over_sla[1][k] > 1;
    return missed <= tolerance * settle;
  };
  if (!sustained(1e-3)) return 0.0;
  double lo = 1e-3, hi = 1.0;
  if (sustained(hi)) return hi;
  while (hi - lo > 1e-3) {
    const double mid = 0.5 * (lo + hi);
    (sustained(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace servelab::hera
