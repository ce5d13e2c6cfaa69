// One server running a pair of models the way Hera's node unit starts it (Sec. VI-C,
// "Initialization"): the cores split evenly, a model that cannot use its half (its useful workers
// or memory stop it) leaving the rest to the other, the footprint trimmed to the memory, and the
// LLC split by adjust_LLC_partition (Algorithm 3) over the isolated 3-D lookup tables. The QPS of
// both models at that allocation then comes from the contention model, run jointly.
#pragma once

#include <string>

#include "servelab/systems/hera/contention.hpp"
#include "servelab/systems/hera/scalability.hpp"
#include "servelab/systems/hera/tables.hpp"

namespace servelab::hera {

struct Colocation {
  int workers_a = 0, workers_b = 0;
  int ways_a = 0, ways_b = 0;
  double qps_a = 0, qps_b = 0;    // latency-bounded QPS of each model, co-located
  double load_a = 0, load_b = 0;  // each as a fraction of its isolated max load
  double emu = 0;                 // load_a + load_b (effective machine utilisation)
  double bandwidth_utilisation = 0;
  bool feasible = false;
  std::string reason;  // why not, when infeasible
};

// The model alone with every core that fits and the whole LLC (the DeepRecSys server): EMU 1.
Colocation run_alone(const NodeSpec& node, const ModelProfile& model, const ModelTables& tables);

// adjust_LLC_partition: the ways of model A (B gets the rest) maximising the sum of the two
// models' profiled QPS, each normalised by its isolated QPS (the paper sums raw QPS; normalising
// keeps a 25,000-QPS model from taking every way from a 200-QPS one).
int best_llc_partition(const ModelTables& a, int workers_a, const ModelTables& b, int workers_b);

Colocation co_locate(const NodeSpec& node, const ModelProfile& a, const ModelTables& ta, const Scalability& sa,
                     const ModelProfile& b, const ModelTables& tb, const Scalability& sb);

}  // namespace servelab::hera
