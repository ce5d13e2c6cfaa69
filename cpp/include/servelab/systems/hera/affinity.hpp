// Co-location affinity (Algorithm 1), from profiled lookup tables only:
//   LLC term:  max over ways i = 1..K-1 of (QPS_A[i] / QPS_A[K] + QPS_B[K-i] / QPS_B[K]) / 2,
//              each model with half the cores (Fig. 7's tables);
//   DRAM term: min(BW_system / (BW_A + BW_B), 1), BW_x drawn with half the cores and every way;
//   affinity:  min of the two.
// The paper writes i = 1..K, which would leave model B zero ways; CAT cannot allocate zero ways
// (Fig. 7), so the split runs to K-1.
#pragma once

#include <span>
#include <vector>

#include "servelab/systems/hera/tables.hpp"

namespace servelab::hera {

struct AffinityInput {
  std::vector<double> qps_by_ways;  // index 0..K (0 unused): QPS with half the cores and i ways
  double bandwidth_gbs = 0;         // DRAM bandwidth with half the cores and every way
};

struct Affinity {
  double llc = 0;
  double dram = 0;
  double system = 0;  // min(llc, dram)
  int ways_a = 0;     // the LLC split that maximises the LLC term (model B gets K - ways_a)
};

AffinityInput affinity_input(const ModelTables& tables);

// ValueError when the two tables differ in ways, have fewer than 2 ways, or a model has no QPS.
Affinity co_location_affinity(const AffinityInput& a, const AffinityInput& b, double system_bandwidth_gbs);

// The n x n lookup table (row-major) of system affinities; every pair, the diagonal included.
std::vector<double> affinity_matrix(std::span<const AffinityInput> models, double system_bandwidth_gbs);

}  // namespace servelab::hera
