// Hera's offline side in one call: profile every model on the node, classify its worker
// scalability, build the affinity lookup table (Algorithm 1) and run every pair the way the node
// unit would start it, giving the tables the cluster scheduler (Algorithm 2) reads.
#pragma once

#include <span>
#include <vector>

#include "servelab/systems/hera/affinity.hpp"
#include "servelab/systems/hera/cluster.hpp"
#include "servelab/systems/hera/colocation.hpp"
#include "servelab/systems/hera/scalability.hpp"
#include "servelab/systems/hera/tables.hpp"

namespace servelab::hera {

struct Offline {
  NodeSpec node;
  std::vector<ModelProfile> models;
  std::vector<ModelTables> tables;
  std::vector<Scalability> scalability;
  std::vector<AffinityInput> affinity_inputs;
  std::vector<double> affinity;   // n x n (Algorithm 1)
  std::vector<Colocation> pairs;  // n x n: [i][j] runs i as A and j as B; [i][i] is i alone
  ClusterTables cluster() const;  // isolated QPS, classes, affinity and pair QPS
};

// ValueError naming the model when one does not fit in memory with one worker or cannot meet its
// SLA alone (Hera would have nowhere to place it), or when names repeat.
Offline build_offline(const NodeSpec& node, std::span<const ModelProfile> models, double threshold = 0.5);

}  // namespace servelab::hera
