// Worker scalability (Sec. VI-B): the slope of the QPS-vs-workers curve (Fig. 6) decides whether
// a model is a high or a low worker-scalability model; Algorithm 3 reads the same curve to find
// how many workers a given traffic needs.
#pragma once

#include "servelab/systems/hera/tables.hpp"

namespace servelab::hera {

struct Scalability {
  // Marginal QPS of the last quarter of the cores, relative to the isolated QPS per core times a
  // quarter of the cores: 1 = linear, 0 = flat; a model that runs out of memory before the last
  // quarter has 0 (the workers cannot be spawned).
  double slope = 0;
  bool high = false;       // slope >= threshold
  int useful_workers = 0;  // most workers whose last one still adds >= threshold of the mean QPS/worker
};

// ValueError for a threshold outside (0, 2] or tables without a feasible worker.
Scalability classify(const ModelTables& tables, double threshold = 0.5);

// Algorithm 3's find_number_of_workers: the fewest workers whose profiled QPS with `ways` ways
// reaches `traffic_qps`, at most `limit` (which is returned when none does).
int find_number_of_workers(const ModelTables& tables, int ways, double traffic_qps, int limit);

}  // namespace servelab::hera
