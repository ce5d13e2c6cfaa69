// Interference between co-located variants (INFaaS Sec. 4.1's Interfered state, Sec. 6.1's variants
// sharing GPU and CPU VMs, Sec. 6.3.1's GPU sharing), in the simulator.
//
// `infaas` is an interference model (cluster/interference.hpp; scenario key `interference:`,
// simulate(..., interference="infaas(...)")): variant instances placed on one machine (a VM:
// machines: groups, workers' machine:) run batches concurrently and slow each other down while
// they overlap; the simulator re-times a running batch whenever a co-runner starts or ends. The
// paper measures interference (Fig. 1, Fig. 7) but gives no model of it, so the model is ours:
//   - gpu (and any hardware not named below): a batch runs 1 + gpu x n times slower with n other
//     instances of its GPU running a batch now (the paper's linear per-co-runner view, Sec. 4.1;
//     Fig. 1: unaffected alone, slowed when a co-runner is busy). gpu = 0.5 is an assumption: two
//     overlapping batches then finish together in 1.5x the time of one, i.e. concurrent variants
//     gain 1.33x over running one after the other (a V100 running several small TensorRT
//     engines). Not measured here (no GPU on the development machine).
//   - cpu: a co-runner is a busy batch sharing the VM's cores. Each running batch keeps
//     `cpu_threads` threads busy (its instance's "threads" knob when set; 4 by default: Table 2's
//     CPU variant A takes 4 CPUs); with T threads on the machine's C cores (machines[].cores; 8
//     for an m5.2xlarge) a batch runs max(1, T / C) times slower (fair time slicing), times
//     1 + cpu x n for contention beyond the cores (caches, memory bandwidth). cpu = 0 is measured:
//     two single-thread CPU executors on separate cores of the development machine did not slow
//     each other (docs/infaas.md, "Measured interference"). A machine without cores gives no
//     time-slicing term.
//   - inferentia: "co-locating models on an Inferentia chip did not cause noticeable
//     interference, since variants can run on separate cores" (Sec. 6.3.1): no slowdown while at
//     most `neuron_cores` (4 on an inf1.2xlarge's chip) batches run, then they share the cores
//     (max(1, running / neuron_cores)).
//
// The config model `infaas_interference(alpha, key)` is kept as an alias for runs without
// declared machines: workers with the same value of the worker knob `key` stand for one machine,
// and a batch starting on worker w takes service time x (1 + alpha x u), u the busy share of w's
// co-located workers at its start (fixed for the batch: no re-timing). Prefer `infaas` on
// declared machines; the alias stays for the runs and tests written against it.
#pragma once

#include <string>

#include "servelab/cluster/config_model.hpp"
#include "servelab/cluster/interference.hpp"

namespace servelab::infaas {

// The `infaas` interference model (above).
class CoLocationInterference final : public cluster::InterferenceModel {
 public:
  // ValueError naming a negative or non-finite parameter, or cpu_threads / neuron_cores < 1.
  CoLocationInterference(double gpu, double cpu, double cpu_threads, double neuron_cores);
  double slowdown(const sched::ClusterView& view, sched::WorkerId worker,
                  std::span<const sched::WorkerId> co_runners) const override;
  // Every batch on one machine (one hardware type) gets the same factor: computed once.
  void slowdowns(const sched::ClusterView& view, std::span<const sched::WorkerId> running,
                 std::span<double> out) const override;
  std::string describe() const override;

 private:
  double gpu_, cpu_, cpu_threads_, neuron_cores_;
};

// Adds "infaas(gpu=0.5, cpu=0, cpu_threads=4, neuron_cores=4)" to the interference-model registry.
void register_interference_models(cluster::InterferenceModelRegistry& registry);

// The alias: a config model (above), for workers that name their machine through a knob.
class InterferenceModel final : public cluster::ConfigModel {
 public:
  InterferenceModel(double alpha, std::string key);  // ValueError naming a bad alpha or key
  double scale(const sched::ClusterView& view, sched::WorkerId worker, sched::ModelId model,
               std::int64_t items) const override;
  std::string describe() const override;

 private:
  double alpha_;
  std::string key_;
};

// Adds "infaas_interference(alpha=..., key='machine')" to the config-model registry.
void register_config_models(cluster::ConfigModelRegistry& registry);

}  // namespace servelab::infaas
