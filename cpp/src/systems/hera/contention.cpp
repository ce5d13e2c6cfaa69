#include "servelab/systems/hera/contention.hpp"

#include <algorithm>
#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::hera {

namespace {

constexpr int kBisections = 48;  // rho and lambda to ~1e-14 of their range
constexpr double kMaxUtilisation = 0.999;

// Erlang C: the probability that an arrival waits in M/M/c with offered load a < c (the
// Erlang-B recurrence, stable for any c).
double erlang_c(int servers, double offered) {
  double b = 1.0;
  for (int i = 1; i <= servers; ++i) b = offered * b / (i + offered * b);
  const double rho = offered / servers;
  return b / (1 - rho + rho * b);
}

// The p-quantile of the response time: deterministic service plus the M/M/c waiting tail
// P(W > x) = C * exp(-(c mu - lambda) x).
double quantile_per_ms(int workers, double service_ms, double lambda_per_ms, double percentile) {
  const double offered = lambda_per_ms * service_ms;
  if (offered >= workers) return INFINITY;
  const double wait_probability = erlang_c(workers, offered);
  const double tail = 1 - percentile;
  if (wait_probability <= tail) return service_ms;
  return service_ms + std::log(wait_probability / tail) / (workers / service_ms - lambda_per_ms);
}

struct Demand {
  double miss = 0, traffic_mb = 0, cpu_ms = 0;
};

Demand demand_of(const NodeSpec& node, const Tenant& t) {
  const ModelProfile& m = *t.model;
  Demand d;
  const double working_set = m.shared_ws_mb + t.workers * m.private_ws_mb;
  d.miss = std::exp(-t.ways * node.way_mb() / working_set);
  d.traffic_mb = m.sparse_mb + m.dense_mb * d.miss;
  d.cpu_ms = m.compute_ms * (1 + m.cache_stall * d.miss);
  return d;
}

double queue_factor(const NodeSpec& node, double rho) { return 1.0 / (1.0 - std::pow(rho, node.bandwidth_knee)); }

void check_tenants(const NodeSpec& node, std::span<const Tenant> tenants, bool shared_llc = false) {
  if (tenants.empty()) throw ValueError("evaluate: no tenants");
  int cores = 0, ways = 0;
  double memory = 0;
  for (const auto& t : tenants) {
    if (t.model == nullptr) throw ValueError("evaluate: a tenant has no model");
    t.model->validate();
    if (t.workers < 1) throw ValueError(str("model '", t.model->name, "': workers=", t.workers, " must be >= 1"));
    if (t.ways < 1 && !shared_llc) throw ValueError(str("model '", t.model->name, "': ways=", t.ways, " must be >= 1"));
    cores += t.workers;
    ways += shared_llc ? 0 : t.ways;
    memory += t.workers * t.model->memory_gb;
  }
  if (cores > node.cores) throw ValueError(str("evaluate: ", cores, " workers exceed the node's cores=", node.cores));
  if (ways > node.llc_ways)
    throw ValueError(str("evaluate: ", ways, " LLC ways exceed the node's llc_ways=", node.llc_ways));
  if (memory > node.mem_capacity_gb) {
    std::string who;
    for (const auto& t : tenants) who += str(who.empty() ? "" : " + ", t.workers, " x ", t.model->name);
    throw ValueError(str("out of memory: ", who, " need ", memory, " GB > mem_capacity_gb=", node.mem_capacity_gb));
  }
}

}  // namespace

double latency_bounded_qps(int workers, double service_ms, double sla_ms, double percentile) {
  if (workers < 1) throw ValueError(str("workers=", workers, " must be >= 1"));
  if (!(percentile > 0 && percentile < 1)) throw ValueError(str("percentile=", percentile, " must be in (0, 1)"));
  if (!(service_ms > 0) || !(sla_ms > 0)) return 0.0;
  if (service_ms >= sla_ms) return 0.0;
  double lo = 0, hi = workers / service_ms;  // queries per ms
  for (int i = 0; i < kBisections; ++i) {
    const double mid = 0.5 * (lo + hi);
    (quantile_per_ms(workers, service_ms, mid, percentile) <= sla_ms ? lo : hi) = mid;
  }
  return lo * 1000.0;
}

int max_workers(const NodeSpec& node, const ModelProfile& model) {
  // A small relative slack so that a footprint meeting the capacity exactly is not lost to rounding.
  const double fit = std::floor(node.mem_capacity_gb / model.memory_gb * (1 + 1e-12));
  return static_cast<int>(std::min<double>(node.cores, fit));
}

NodeLoad evaluate(const NodeSpec& node, std::span<const Tenant> tenants, double percentile, bool shared_llc) {
  node.validate();
  check_tenants(node, tenants, shared_llc);
  std::vector<Demand> demand;
  demand.reserve(tenants.size());
  for (const auto& t : tenants) demand.push_back(demand_of(node, t));
  if (shared_llc) {
    double working_sets = 0;
    for (const auto& t : tenants) working_sets += t.model->shared_ws_mb + t.workers * t.model->private_ws_mb;
    const double miss = std::exp(-node.llc_mb / working_sets);
    for (std::size_t i = 0; i < tenants.size(); ++i) {
      const ModelProfile& m = *tenants[i].model;
      demand[i] = {miss, m.sparse_mb + m.dense_mb * miss, m.compute_ms * (1 + m.cache_stall * miss)};
    }
  }

  NodeLoad load;
  load.tenants.resize(tenants.size());
  // Fills load.tenants at utilisation rho and returns the utilisation their QPS would draw.
  auto drawn = [&](double rho) {
    double gbs = 0;
    for (std::size_t i = 0; i < tenants.size(); ++i) {
      const auto& d = demand[i];
      auto& out = load.tenants[i];
      out.miss_ratio = d.miss;
      out.traffic_mb = d.traffic_mb;
      out.service_ms = d.cpu_ms + d.traffic_mb / node.core_bandwidth_gbs * queue_factor(node, rho);
      out.qps = latency_bounded_qps(tenants[i].workers, out.service_ms, tenants[i].model->sla_ms, percentile);
      out.bandwidth_gbs = out.qps * d.traffic_mb / 1000.0;
      gbs += out.bandwidth_gbs;
    }
    return gbs / node.mem_bandwidth_gbs;
  };
  double lo = 0, hi = kMaxUtilisation;
  if (drawn(0) <= 0) {
    hi = 0;
  } else {
    for (int i = 0; i < kBisections; ++i) {
      const double mid = 0.5 * (lo + hi);
      (drawn(mid) > mid ? lo : hi) = mid;
    }
  }
  load.bandwidth_utilisation = hi;
  drawn(hi);
  return load;
}

double response_quantile_ms(int workers, double service_ms, double qps, double percentile) {
  if (workers < 1 || !(service_ms > 0)) return INFINITY;
  return quantile_per_ms(workers, service_ms, std::max(qps, 0.0) / 1000.0, percentile);
}

std::vector<LoadedTenant> evaluate_at(const NodeSpec& node, std::span<const Tenant> tenants,
                                      std::span<const double> arrival_qps, double percentile) {
  node.validate();
  check_tenants(node, tenants);
  if (arrival_qps.size() != tenants.size())
    throw ValueError(str("evaluate_at: ", arrival_qps.size(), " arrival rates for ", tenants.size(), " tenants"));
  for (std::size_t i = 0; i < arrival_qps.size(); ++i)
    if (!(arrival_qps[i] >= 0) || !std::isfinite(arrival_qps[i]))
      throw ValueError(str("evaluate_at: arrival_qps[", i, "]=", arrival_qps[i], " must be finite and >= 0"));
  std::vector<Demand> demand;
  for (const auto& t : tenants) demand.push_back(demand_of(node, t));
  std::vector<LoadedTenant> out(tenants.size());
  auto drawn = [&](double rho) {
    double gbs = 0;
    for (std::size_t i = 0; i < tenants.size(); ++i) {
      auto& o = out[i];
      o.service_ms = demand[i].cpu_ms + demand[i].traffic_mb / node.core_bandwidth_gbs * queue_factor(node, rho);
      o.capacity_qps = tenants[i].workers / o.service_ms * 1000.0;
      o.served_qps = std::min(arrival_qps[i], o.capacity_qps);
      gbs += o.served_qps * demand[i].traffic_mb / 1000.0;
    }
    return gbs / node.mem_bandwidth_gbs;
  };
  double lo = 0, hi = kMaxUtilisation;
  if (drawn(0) <= 0) {
    hi = 0;
  } else {
    for (int i = 0; i < kBisections; ++i) {
      const double mid = 0.5 * (lo + hi);
      (drawn(mid) > mid ? lo : hi) = mid;
    }
  }
  drawn(hi);
  for (std::size_t i = 0; i < tenants.size(); ++i)
    out[i].p95_ms = arrival_qps[i] >= out[i].capacity_qps
                        ? INFINITY
                        : response_quantile_ms(tenants[i].workers, out[i].service_ms, arrival_qps[i], percentile);
  return out;
}

double qps_alone(const NodeSpec& node, const ModelProfile& model, int workers, int ways) {
  if (workers > max_workers(node, model)) return 0.0;
  const Tenant t{&model, workers, ways};
  return evaluate(node, std::span<const Tenant>(&t, 1)).tenants[0].qps;
}

}  // namespace servelab::hera
