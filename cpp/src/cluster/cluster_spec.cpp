#include "servelab/cluster/cluster_spec.hpp"

#include <cmath>
#include <limits>
#include <set>

#include "servelab/cluster/records.hpp"
#include "servelab/core/errors.hpp"

namespace servelab::cluster {

Nanos drain_limit_from_seconds(double drain_s) {
  if (!(drain_s >= 0)) throw ValueError(str("drain_s=", drain_s, " must be a non-negative number of seconds"));
  // A quarter of the range: the worlds add the limit to times without overflowing.
  return drain_s >= kUnlimitedDrainS ? std::numeric_limits<Nanos>::max() / 4 : seconds_to_nanos(drain_s, "drain_s");
}

namespace {

void check_resources(const std::string& where, const sched::MachineResources& r) {
  if (r.cores < 0) throw ValueError(str(where, ".cores=", r.cores, " must be >= 0 (0: not modelled)"));
  if (r.llc_ways < 0) throw ValueError(str(where, ".llc_ways=", r.llc_ways, " must be >= 0 (0: not modelled)"));
  const std::pair<const char*, double> amounts[] = {
      {"memory_mb", r.memory_mb}, {"accel_memory_mb", r.accel_memory_mb}, {"memory_bw_gbps", r.memory_bw_gbps}};
  for (const auto& [name, value] : amounts) {
    if (!std::isfinite(value) || value < 0) {
      throw ValueError(str(where, ".", name, "=", value, " must be a finite number >= 0 (0: not modelled)"));
    }
  }
}

// What one machine of `machine` must hold: the knobs and model memory of every group placed on
// it, against its resources.
void check_machine_fits(const RunSpec& spec, const MachineGroup& machine, std::size_t m) {
  const std::string where = str("machines[", m, "] ('", machine.name, "')");
  const auto& r = machine.resources;
  std::int64_t cores = 0, ways = 0;
  double memory = 0;
  std::string hardware = machine.hardware;
  if (!hardware.empty()) spec.profile->price(spec.profile->hardware_index(hardware));  // KeyError naming it
  for (std::size_t g = 0; g < spec.workers.size(); ++g) {
    const WorkerGroup& group = spec.workers[g];
    if (group.machine != machine.name) continue;
    if (!hardware.empty() && group.hardware != hardware) {
      throw ValueError(str("workers[", g, "].hardware='", group.hardware, "': machine '", machine.name,
                           "' already hosts hardware '", hardware, "' (a machine holds one hardware type)"));
    }
    hardware = group.hardware;
    const auto knob = [&](const char* key) {
      const auto it = group.config.find(key);
      return it == group.config.end() ? std::int64_t{0} : it->second;
    };
    cores += group.count * knob(sched::kCoresKnob);
    ways += group.count * knob(sched::kLlcWaysKnob);
    const auto hw = spec.profile->hardware_index(group.hardware);
    for (const auto m : group_models(*spec.profile, group)) {
      memory += group.count * spec.profile->memory_mb(hw, m).value_or(0.0);
    }
  }
  if (hardware.empty()) {
    throw ValueError(str(where, " hosts no worker group: give it hardware= to add instances to it later"));
  }
  if (r.cores > 0 && cores > r.cores) {
    throw ValueError(str(where, ": its instances ask for cores=", cores, " in all, more than its cores=", r.cores));
  }
  if (r.llc_ways > 0 && ways > r.llc_ways) {
    throw ValueError(
        str(where, ": its instances ask for llc_ways=", ways, " in all, more than its llc_ways=", r.llc_ways));
  }
  const double room = r.accel_memory_mb > 0 ? r.accel_memory_mb : r.memory_mb;
  if (room > 0 && memory > room) {
    throw ValueError(str(where, ": its instances' models need ", memory, " MB in all, more than its ",
                         r.accel_memory_mb > 0 ? "accel_memory_mb=" : "memory_mb=", room));
  }
}

}  // namespace

std::vector<std::int32_t> group_models(const profile::Profile& profile, const WorkerGroup& group) {
  const auto hw = profile.hardware_index(group.hardware);
  std::vector<std::int32_t> models;
  for (const auto& name : group.models) models.push_back(profile.model_index(name));
  if (group.models.empty()) {
    for (std::size_t m = 0; m < profile.models().size(); ++m) {
      if (profile.has_latency(hw, static_cast<int>(m))) models.push_back(static_cast<std::int32_t>(m));
    }
  }
  return models;
}

std::int32_t RunSpec::group_size(std::size_t g) const {
  const WorkerGroup& group = workers.at(g);
  if (group.machine.empty()) return group.count;
  const MachineGroup* machine = machine_group(group.machine);
  return group.count * (machine ? machine->count : 1);
}

std::optional<RunSpec::GroupSlot> RunSpec::group_of(std::int64_t worker) const {
  std::int64_t first = 0;
  for (std::size_t g = 0; g < workers.size(); ++g) {
    const std::int64_t size = group_size(g);
    if (worker >= first && worker < first + size) return GroupSlot{g, static_cast<std::int32_t>(worker - first)};
    first += size;
  }
  return std::nullopt;
}

const MachineGroup* RunSpec::machine_group(std::string_view name) const {
  for (const auto& m : machines) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

void RunSpec::validate() const {
  if (!profile) throw ValueError("profile=None: a run needs a profile");
  if (!workload) throw ValueError("workload=None: a run needs a workload");
  if (workers.empty()) throw ValueError("workers=[]: a run needs at least one worker group");
  if (drain_limit < 0) throw ValueError(str("drain_limit=", drain_limit, " ns must be >= 0"));
  for (std::size_t g = 0; g < workers.size(); ++g) {
    const WorkerGroup& group = workers[g];
    const std::string where = str("workers[", g, "]");
    if (group.count < 1) throw ValueError(str(where, ".count=", group.count, " must be >= 1"));
    if (group.count > kMaxWorkersPerGroup) {
      throw ValueError(str(where, ".count=", group.count, " is more than ", kMaxWorkersPerGroup, " workers"));
    }
    const auto hw = profile->hardware_index(group.hardware);  // KeyError naming the known ones
    profile->price(hw);                                       // KeyError when the price is missing
    bool any = false;
    for (const auto& model : group.models) {
      const auto m = profile->model_index(model);
      if (!profile->has_latency(hw, m)) {
        throw ValueError(str(where, ".models: the profile has no latency for model '", model, "' on hardware '",
                             group.hardware, "'"));
      }
      any = true;
    }
    if (group.models.empty()) {
      for (std::size_t m = 0; m < profile->models().size(); ++m) any |= profile->has_latency(hw, static_cast<int>(m));
    }
    if (!any)
      throw ValueError(str(where, ": the profile has no model with latencies on hardware '", group.hardware, "'"));
    if (!group.machine.empty()) {
      const MachineGroup* machine = machine_group(group.machine);
      if (!machine) {
        std::string known;
        for (const auto& m : machines) known += (known.empty() ? "'" : ", '") + m.name + "'";
        throw ValueError(str(where, ".machine='", group.machine, "' is not a machine group (",
                             known.empty() ? "none declared" : known, ")"));
      }
      if (static_cast<std::int64_t>(group.count) * machine->count > kMaxWorkersPerGroup) {
        throw ValueError(str(where, ": count=", group.count, " instances on each of ", machine->count,
                             " machines is more than ", kMaxWorkersPerGroup, " workers"));
      }
    }
  }
  std::set<std::string, std::less<>> names;
  for (std::size_t m = 0; m < machines.size(); ++m) {
    const MachineGroup& machine = machines[m];
    const std::string where = str("machines[", m, "]");
    if (machine.name.empty()) throw ValueError(str(where, ".name='' must name the machine group"));
    if (!names.insert(machine.name).second) {
      throw ValueError(str(where, ".name='", machine.name, "' names two machine groups"));
    }
    if (machine.count < 1 || machine.count > kMaxWorkersPerGroup) {
      throw ValueError(str(where, ".count=", machine.count, " must be in 1..", kMaxWorkersPerGroup));
    }
    check_resources(where, machine.resources);
    check_machine_fits(*this, machine, m);
  }
}

void check_run_memory(const RunSpec& spec) {
  if (spec.records.streaming()) return;  // a bounded window of records, not one per query
  // The peak a run reaches per query, measured from Python (benchmarks/python/bench_sim.py: 78
  // bytes): its records (QueryRecords::kBytesPerRecord, which also say where a pending query is)
  // and the `id` column made for the result next to them; rounded up for vector slack.
  constexpr double kBytesPerQuery = 90;
  static_assert(kBytesPerQuery > QueryRecords::kBytesPerRecord);
  spec.workload->check_memory(kBytesPerQuery, "the run's per-query records");
}

}  // namespace servelab::cluster
