// The cluster scheduler (Algorithm 2) and the model-selection baselines of Sec. VII, over lookup
// tables: each model's isolated QPS and scalability class, the affinity table and the QPS each
// model keeps when co-located with each other (Hera's node allocation). Servers are added until
// every model's target QPS is serviced.
//
// Where the pseudo-code is silent: a low model's partner is the highest-affinity HIGH model whose
// target is not met yet (Algorithm 2 would otherwise pile every server onto one partner); when no
// such partner is left, the highest-affinity other LOW model still short whose pair keeps EMU >= 1
// (the paper rules out only (high, high) pairs, Sec. VII-A1: this is what skewed targets, Fig. 16,
// need); when none, the low model gets a server alone.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace servelab::hera {

struct ClusterTables {
  int n = 0;
  std::vector<double> isolated_qps;  // n: max load alone on one server (0: cannot be served)
  std::vector<std::uint8_t> high;    // n: high worker scalability
  std::vector<double> affinity;      // n x n
  std::vector<double> pair_qps;      // n x n: QPS of model i on a server shared with model j
  void validate() const;
};

enum class Selection { Hera, HeraRandom, Random, DeepRecSys };
Selection parse_selection(std::string_view name);
std::string_view selection_name(Selection s);

struct Server {
  int a = -1;
  int b = -1;  // -1: model a alone
  double qps_a = 0, qps_b = 0;
  double emu = 0;  // qps_a / isolated_a + qps_b / isolated_b
};

struct ClusterPlan {
  std::vector<Server> servers;
  std::vector<double> serviced;  // n: QPS capacity placed per model
  bool feasible = true;
  std::string reason;  // names the model or the limit when infeasible
  // Mean over servers of the sum of its models' QPS as fractions of their isolated max loads.
  double emu() const;
};

// Places servers until serviced >= target for every model, at most max_servers (else an
// infeasible plan saying which models are short). Random choices draw from Rng(seed, "hera/cluster").
ClusterPlan schedule_cluster(const ClusterTables& tables, std::span<const double> target_qps, Selection selection,
                             std::uint64_t seed, std::int64_t max_servers);

}  // namespace servelab::hera
