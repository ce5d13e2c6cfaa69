// Hera's contention model (contention.hpp) as an interference model of the simulator
// (cluster/interference.hpp): "hera_contention(...)", so that co-located model instances on a
// machine slow each other down as the node's cores, LLC ways and DRAM bandwidth say, and the
// slowdown follows the partition (the instances' "cores" and "llc_ways" knobs) as a node manager
// changes it during the run.
//
// An instance is one of Hera's workers: it serves one query (batch) at a time on one core. For a
// batch of model M running on instance i of machine n, with R the batches running on n now:
//  - workers w_M: the live (not stopped) instances of n that hold M;
//  - ways k_M: the sum of those instances' "llc_ways" knobs (the knob splits a model's class of
//    service among its instances for the machine's bookkeeping: CAT gives the ways to the model's
//    cores together). Models whose instances hold no ways share the ways nobody holds, their
//    working sets together (co-location without CAT);
//  - miss ratio m_M = exp(-k_M * way_mb / (S_M + w_M * P_M)), as in contention.hpp;
//  - service time t_M(rho) = compute_ms (1 + cache_stall m_M) + traffic_M / core_bandwidth *
//    1 / (1 - rho^p), traffic_M = sparse_mb + dense_mb m_M;
//  - rho: the machine's DRAM utilisation now, the fixed point of rho = sum over R of traffic_j /
//    (f_j t_j(rho)) / bandwidth (each running batch draws its traffic over its service time;
//    unique, found by bisection as contention.cpp does);
//  - CPU: an instance whose "cores" knob is >= 1 runs on a core of its own (Hera's workers are
//    single-threaded, extra cores stay idle: f = 1); one without ("cores" 0) shares the cores no
//    instance holds with the other running batches without cores: f = max(1, those batches /
//    those cores), and cannot run (the largest slowdown) when every core is held. A machine that
//    does not declare cores gives every instance a core of its own;
//  - slowdown = f_i t_M(rho) / t_alone_M, where t_alone_M is the model's time alone on the whole
//    node (ModelProfile::alone_latency_ms: one worker, every way, idle DRAM). The profile's
//    service time of M is read as that time alone, so that a batch takes the contention model's
//    time under the current partition and co-runners.
// The machine's declared resources (llc_ways, memory_bw_gbps, cores) override the node's; the
// LLC's capacity (llc_mb), the per-core bandwidth and the knee are the node's.
//
// Where the paper is silent (choices): the instantaneous DRAM utilisation (the batches running
// now) rather than contention.cpp's average over a window (the two agree when every worker is
// busy, as at the latency bound's saturation); the ways' sum over a model's instances; the shared
// pool for instances without ways or cores. Steady-state agreement with evaluate_at() is tested
// (tests/cpp/hera/test_interference.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "servelab/cluster/interference.hpp"
#include "servelab/systems/hera/model_profile.hpp"
#include "servelab/systems/hera/node.hpp"

namespace servelab::hera {

class ContentionInterference final : public cluster::InterferenceModel {
 public:
  // models: the profile's model names -> Hera model profiles (validated); a profile model not
  // in the map is looked up among Table I's models by name when first met (KeyError otherwise).
  ContentionInterference(NodeSpec node, std::map<std::string, ModelProfile> models, std::string spec);

  double slowdown(const sched::ClusterView& view, sched::WorkerId worker,
                  std::span<const sched::WorkerId> co_runners) const override;
  void slowdowns(const sched::ClusterView& view, std::span<const sched::WorkerId> running,
                 std::span<double> out) const override;
  std::string describe() const override { return spec_; }

  const NodeSpec& node() const { return node_; }

 private:
  const ModelProfile& profile_of(const sched::ClusterView& view, sched::ModelId model) const;

  NodeSpec node_;
  std::map<std::string, ModelProfile> models_;
  std::string spec_;
  std::uint64_t id_;  // keys each thread's cached per-model lookups (interference.cpp)
};

// register_contention_model adds it as "hera_contention(...)" (register.cpp calls it).

void register_contention_model(cluster::InterferenceModelRegistry& registry);

}  // namespace servelab::hera
