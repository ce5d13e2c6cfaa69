// A model's profiled lookup tables on a node: QPS for every (workers, LLC ways) with the model
// alone (Fig. 6 is the ways = all column, Fig. 7 the workers = max row). Hera profiles these once
// per model and server type; Algorithms 1-3 only read them. Here the contention model fills them;
// measured points can replace it through a fitted profile (servelab.hera.calibration).
#pragma once

#include <string>
#include <vector>

#include "servelab/systems/hera/model_profile.hpp"
#include "servelab/systems/hera/node.hpp"

namespace servelab::hera {

struct ModelTables {
  std::string name;
  int cores = 0;
  int ways = 0;
  int max_workers = 0;            // that fit in memory alone (0: the model does not fit at all)
  std::vector<double> qps;        // (cores + 1) x (ways + 1), row-major; 0 where infeasible
  std::vector<double> bandwidth;  // the same grid: DRAM GB/s drawn at that QPS

  double at(int workers, int ways_allocated) const;            // 0 outside the grid
  double bandwidth_at(int workers, int ways_allocated) const;  // 0 outside the grid
  // QPS with the most workers that fit and every way: the model's max load in isolation.
  double isolated_qps() const { return at(max_workers, ways); }
  // Workers Algorithm 1 gives each model of a pair: half the cores, or all that fit.
  int half_workers() const;
};

// Fills the tables from the contention model (cores x ways single-tenant evaluations).
ModelTables profile_model(const NodeSpec& node, const ModelProfile& model);

}  // namespace servelab::hera
