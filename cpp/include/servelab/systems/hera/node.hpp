// A CPU server node as Hera sees it: cores (one worker per core), LLC ways that Intel CAT can
// partition, a shared memory bandwidth and a memory capacity that bounds how many workers fit.
#pragma once

#include <string>

namespace servelab::hera {

struct NodeSpec {
  std::string name = "xeon-gold-6242";
  int cores = 16;                    // cores of one socket, one worker per core
  int llc_ways = 11;                 // CAT ways of the shared LLC
  double llc_mb = 22.0;              // shared LLC capacity (MB)
  double mem_bandwidth_gbs = 128.0;  // socket DRAM bandwidth (GB/s)
  double mem_capacity_gb = 206.158;  // DRAM usable by workers (GB, decimal)
  // Modelling constants the paper does not give (docs/hera.md, "Contention model"):
  double core_bandwidth_gbs = 20.0;  // DRAM bandwidth one core's misses can draw alone (GB/s)
  double bandwidth_knee = 8.0;       // sharpness p of the shared-bandwidth queue 1 / (1 - rho^p)

  double way_mb() const { return llc_mb / llc_ways; }
  // Throws ValueError naming the field and value of the first inconsistency.
  void validate() const;
};

// Table II's node: a Xeon Gold 6242 socket, 16 cores, 22 MB / 11-way LLC, 128 GB/s, 192 GB. The
// 192 GB of DIMMs is read as GiB (206.158 GB), and Table I's model sizes as decimal GB, so that a
// 25 GB DLRM(B) worker fits 8 times and not 9 (Sec. V-B: out of memory beyond 8 workers).
NodeSpec baseline_node();

}  // namespace servelab::hera
