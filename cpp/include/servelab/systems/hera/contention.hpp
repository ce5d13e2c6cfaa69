// The contention model: latency-bounded QPS of one model alone or of co-located models on a node.
//
// For each tenant (a model with w workers, one per core, and k LLC ways):
//  - cache: the model's reusable working set S + w * P competes for its k ways; miss ratio
//    m = exp(-k * way_mb / (S + w * P)) (a cache-miss curve against ways);
//  - compute share per core: t_cpu = compute_ms * (1 + cache_stall * m);
//  - DRAM traffic per query: T = sparse_mb + dense_mb * m;
//  - shared-bandwidth queue: t = t_cpu + T / core_bandwidth * 1 / (1 - rho^p), where rho is the
//    node's DRAM utilisation, the sum over tenants of qps * T over the node's bandwidth;
//  - latency bound: the tenant's QPS is the largest Poisson arrival rate whose p95 response time
//    (service t plus the M/M/w Erlang-C waiting tail) stays within the SLA;
//  - out of memory: the workers' total footprint must fit the node's capacity.
// rho is the fixed point of rho = sum_i qps_i(rho) * T_i(rho) / bandwidth, found by bisection
// (the right-hand side falls as rho grows, so the fixed point is unique).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "servelab/systems/hera/model_profile.hpp"
#include "servelab/systems/hera/node.hpp"

namespace servelab::hera {

struct Tenant {
  const ModelProfile* model = nullptr;
  int workers = 1;
  int ways = 1;
};

struct TenantLoad {
  double qps = 0;            // latency-bounded throughput (queries/s); 0 when the SLA cannot be met
  double service_ms = 0;     // per-query service time at the fixed point
  double miss_ratio = 0;     // LLC miss ratio of the reusable working set
  double traffic_mb = 0;     // DRAM traffic per query
  double bandwidth_gbs = 0;  // DRAM bandwidth drawn at that QPS
};

struct NodeLoad {
  std::vector<TenantLoad> tenants;
  double bandwidth_utilisation = 0;  // rho
};

// The largest arrival rate (queries/s) that `workers` servers of `service_ms` each sustain with
// the `percentile` response time within `sla_ms` (0 when service_ms >= sla_ms).
double latency_bounded_qps(int workers, double service_ms, double sla_ms, double percentile = 0.95);

// How many workers of the model fit in the node's memory alone (0: not even one).
int max_workers(const NodeSpec& node, const ModelProfile& model);

// Evaluates co-located tenants. ValueError for an empty list, a tenant without workers or ways,
// more workers than cores, more ways than the LLC has, or a footprint beyond the memory capacity
// (naming the models and GB). shared_llc: no LLC partitioning (Fig. 17a's "w/o CAT"): the
// tenants' ways are ignored and every tenant misses as the whole LLC holding all their working
// sets together, m = exp(-llc_mb / sum over tenants of (S + w P)) (our choice: an LRU cache
// shared in proportion to the working sets).
NodeLoad evaluate(const NodeSpec& node, std::span<const Tenant> tenants, double percentile = 0.95,
                  bool shared_llc = false);

// Tenants under given arrival rates (queries/s, one per tenant) rather than at their latency
// bound: each serves min(arrival, capacity); the DRAM utilisation is the fixed point of what
// they then draw. p95_ms is the M/M/w response quantile at the served rate (infinite when the
// arrivals reach the capacity).
struct LoadedTenant {
  double service_ms = 0;
  double capacity_qps = 0;  // workers / service time
  double served_qps = 0;
  double p95_ms = 0;
};
std::vector<LoadedTenant> evaluate_at(const NodeSpec& node, std::span<const Tenant> tenants,
                                      std::span<const double> arrival_qps, double percentile = 0.95);

// The p-quantile of the response time (ms) of `workers` servers of `service_ms` each at an
// arrival rate of `qps` (infinite at or beyond capacity).
double response_quantile_ms(int workers, double service_ms, double qps, double percentile = 0.95);

// One model alone: the QPS of `workers` workers with `ways` ways, 0 when they do not fit in memory.
double qps_alone(const NodeSpec& node, const ModelProfile& model, int workers, int ways);

}  // namespace servelab::hera
