// A recommendation model's worker profile: what one worker costs and how it uses the node's shared
// resources. The contention model (contention.hpp) turns it into QPS for any (workers, ways) and
// any co-runner. Units: ms per query at the mean query size, MB of data, GB of memory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace servelab::hera {

struct ModelProfile {
  std::string name;
  double sla_ms = 100;       // p95 tail-latency target (Table I)
  double memory_gb = 1;      // footprint of one worker: embeddings + FC weights (Table I sizes)
  double compute_ms = 1;     // core time per query when every reusable access hits the LLC
  double cache_stall = 0;    // compute slowdown per unit LLC miss ratio (cache sensitivity)
  double shared_ws_mb = 1;   // reusable working set shared by the model's workers (MB)
  double private_ws_mb = 0;  // reusable working set each worker adds (MB)
  double sparse_mb = 0;      // DRAM traffic per query that no cache captures: embedding gathers
  double dense_mb = 0;       // reusable traffic per query; the missed fraction goes to DRAM
  double query_items = 220;  // items per query the profile stands for (Sec. IV: mean size)

  // Throws ValueError naming the model, the field and the value.
  void validate() const;
  // Latency of one query by one worker alone on an idle node with the whole LLC (ms).
  double alone_latency_ms(double llc_mb, double core_bandwidth_gbs) const;
};

// The eight models of Table I (names "dlrm_a" .. "dlrm_d", "ncf", "dien", "din", "wnd").
const std::vector<ModelProfile>& table1_models();
// One of them by name; KeyError listing the names when there is no such model.
const ModelProfile& table1_model(std::string_view name);

}  // namespace servelab::hera
