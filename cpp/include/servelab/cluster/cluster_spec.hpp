// What a run is made of: the cluster's worker groups, plus the run settings shared by the
// simulator and the real serving loop.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "servelab/cluster/stream_summary.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/time.hpp"
#include "servelab/profile/profile.hpp"
#include "servelab/sched/machine.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::cluster {

class ConfigModel;        // config_model.hpp
class InterferenceModel;  // interference.hpp
class LoopModel;          // loop_model.hpp

// The most workers one group may have (RunSpec::validate).
inline constexpr std::int32_t kMaxWorkersPerGroup = 1'000'000;

// `count` identical workers of one hardware type with the same loaded models. Without `machine`
// each worker is a machine of its own; with it, each machine of that MachineGroup hosts `count`
// of them (co-located instances, e.g. Triton's instance_group count).
struct WorkerGroup {
  std::string hardware;
  std::int32_t count = 1;
  std::vector<std::string> models;                  // empty: every model the profile has on this hardware
  std::map<std::string, std::int64_t> config = {};  // initial knobs (ClusterView::config)
  std::string machine = {};                         // a MachineGroup's name, or empty
};

// `count` identical machines that worker groups place instances on (WorkerGroup::machine). A
// machine is paid once, from the start to the end of the run (the hardware's price, booked on its
// first instance), whatever it hosts; a batch on a machine declared with k instances is charged
// its duration at price / k (its queries' cost column), instances added later included.
struct MachineGroup {
  std::string name;
  std::int32_t count = 1;
  std::string hardware = {};  // empty: its worker groups' (it must host at least one then)
  sched::MachineResources resources = {};
};

struct RunSpec {
  std::shared_ptr<const profile::Profile> profile;
  std::vector<WorkerGroup> workers;
  std::vector<MachineGroup> machines;  // empty: every worker is a machine of its own
  std::shared_ptr<const workload::Workload> workload;
  std::uint64_t seed = 0;
  // The statistic policies see (predicted_latency, busy_until).
  profile::Statistic decision_statistic = profile::Statistic::Mean;
  // Service times: sampled from the profile's distribution (nullopt) or always this statistic.
  std::optional<profile::Statistic> service_statistic;
  // How long after the last arrival the run may go on; what is still queued or running then is
  // dropped ("cut off at end of run").
  Nanos drain_limit = 3600 * kNanosPerSecond;
  // Which records the run keeps; a streamed mode summarises ended queries online, in windows of
  // stream_window of arrival time, and frees their records.
  RecordMode records;
  Nanos stream_window = kNanosPerSecond;
  // Simulator only: scales each drawn service time by the worker's set_config knobs (null: the
  // profile's times, untouched). See config_model.hpp.
  std::shared_ptr<const ConfigModel> config_model;
  // Simulator only: the serving loop's delays (null: an instantaneous loop, records untouched).
  // See loop_model.hpp.
  std::shared_ptr<const LoopModel> loop_model;
  // Simulator only: how instances running at once on one machine slow each other down; a batch
  // is re-timed whenever its machine's set of running batches or partition changes (null: none,
  // records bit-identical to a run without the hook). See interference.hpp.
  std::shared_ptr<const InterferenceModel> interference;

  // Checks everything a run needs, naming the field and value: a profile, a workload, at least
  // one worker, known hardware and models with latencies and prices, counts >= 1, machines that
  // exist, hold one hardware type and have room for their instances' models and knobs.
  void validate() const;
  // The workers group g starts with: its count, times its machine group's count when placed.
  std::int32_t group_size(std::size_t g) const;
  // Which group an initial worker belongs to and its index in it (workers are numbered group by
  // group); nullopt for a worker added during the run.
  struct GroupSlot {
    std::size_t group = 0;
    std::int32_t index = 0;
  };
  std::optional<GroupSlot> group_of(std::int64_t worker) const;
  // The machine group called `name`, or null.
  const MachineGroup* machine_group(std::string_view name) const;
};

// The models a group's workers start with, as profile indices (every model the profile has on
// its hardware when the group names none).
std::vector<std::int32_t> group_models(const profile::Profile& profile, const WorkerGroup& group);

// A drain limit given in seconds (drain_s): ValueError unless it is a non-negative number; from
// kUnlimitedDrainS on, no limit (a drain that never cuts a run short).
inline constexpr double kUnlimitedDrainS = 9e9;
Nanos drain_limit_from_seconds(double drain_s);

// MemoryError naming count or horizon_s when the run's per-query records (and the bookkeeping of
// where each query is) would not fit the memory available; both worlds check before they start.
void check_run_memory(const RunSpec& spec);

// Runs `run()`; running out of memory on the way (std::bad_alloc) leaves as a MemoryError naming
// the workload's limits, the inputs that decide how much a run keeps.
template <typename Run>
auto with_memory_context(const RunSpec& spec, Run&& run) {
  try {
    return run();
  } catch (const std::bad_alloc&) {
    throw MemoryError(str("out of memory during the run (workload ", spec.workload->describe_limits(),
                          "): lower count or horizon_s"));
  }
}

}  // namespace servelab::cluster
