#include "servelab/serve/affinity.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/serve/added_workers.hpp"

namespace servelab::serve {

namespace {

std::string list_text(std::span<const int> cores) {
  std::string out = "{";
  for (std::size_t i = 0; i < cores.size(); ++i) out += str(i ? ", " : "", cores[i]);
  return out + "}";
}

std::vector<int> current_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    throw RuntimeError(str("sched_getaffinity: ", std::strerror(errno)));
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

// Runs the inner executor on a thread pinned before its first batch.
class PinnedExecutor final : public Executor {
 public:
  PinnedExecutor(std::unique_ptr<Executor> inner, PinRecord record, std::shared_ptr<PinLog> log)
      : inner_(std::move(inner)), record_(std::move(record)), log_(std::move(log)) {}

  void run(const ExecRequest& request) override {
    if (!pinned_) {
      pinned_ = true;
      record_.thread_id = static_cast<std::int64_t>(::syscall(SYS_gettid));
      try {
        const int core = record_.core;
        record_.applied = pin_this_thread(std::span<const int>(&core, 1));
      } catch (const std::exception& e) {
        record_.error = e.what();
      }
      log_->add(record_);
    }
    if (!record_.error.empty()) throw RuntimeError(str("pinning worker ", record_.worker, ": ", record_.error));
    inner_->run(request);
  }
  std::vector<std::string> knobs() const override { return inner_->knobs(); }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::unique_ptr<Executor> inner_;
  PinRecord record_;
  std::shared_ptr<PinLog> log_;
  bool pinned_ = false;
};

}  // namespace

void PinLog::add(PinRecord record) {
  std::lock_guard lock(mutex_);
  records_.push_back(std::move(record));
}

std::vector<PinRecord> PinLog::records() const {
  std::lock_guard lock(mutex_);
  auto out = records_;
  std::stable_sort(out.begin(), out.end(), [](const PinRecord& a, const PinRecord& b) { return a.worker < b.worker; });
  return out;
}

std::vector<int> allowed_cpus() { return current_affinity(); }

void check_core_plan(const CorePlan& plan, std::size_t groups) {
  if (plan.by_group.size() != groups)
    throw ValueError(str("cores: ", plan.by_group.size(), " lists for ", groups, " worker groups"));
  const auto allowed = allowed_cpus();
  const long online = ::sysconf(_SC_NPROCESSORS_CONF);
  for (std::size_t g = 0; g < groups; ++g) {
    for (const int c : plan.by_group[g]) {
      if (c < 0 || c >= CPU_SETSIZE || (online > 0 && c >= online))
        throw ValueError(
            str("workers[", g, "].cores: core ", c, " does not exist (this machine has cores 0..", online - 1, ")"));
      if (!std::binary_search(allowed.begin(), allowed.end(), c))
        throw ValueError(
            str("workers[", g, "].cores: core ", c, " is not in this process's allowed set ", list_text(allowed)));
    }
  }
}

void check_machine_cores(const MachineCores& cores, const cluster::RunSpec& spec) {
  const auto allowed = allowed_cpus();
  const long online = ::sysconf(_SC_NPROCESSORS_CONF);
  std::size_t total = 0;
  for (const auto& group : spec.machines) total += static_cast<std::size_t>(group.count);
  if (cores.by_machine.size() > total) {
    throw ValueError(str("machine cores: ", cores.by_machine.size(), " lists for ", total, " declared machines"));
  }
  std::map<int, std::string> owner;  // core -> the machine that has it
  std::size_t id = 0;
  for (std::size_t g = 0; g < spec.machines.size(); ++g) {
    const auto& group = spec.machines[g];
    for (std::int32_t k = 0; k < group.count; ++k, ++id) {
      if (id >= cores.by_machine.size() || cores.by_machine[id].empty()) continue;
      const auto& list = cores.by_machine[id];
      const std::string where = str("machines[", g, "] ('", group.name, "') machine ", k);
      if (static_cast<std::int64_t>(list.size()) != group.resources.cores) {
        throw ValueError(str(where, ": core_ids ", list_text(list), " has ", list.size(),
                             " cores, but the machine has cores=", group.resources.cores,
                             " (give one host core per machine core)"));
      }
      for (const int c : list) {
        if (c < 0 || c >= CPU_SETSIZE || (online > 0 && c >= online)) {
          throw ValueError(str(where, ": core ", c, " does not exist (this host has cores 0..", online - 1, ")"));
        }
        if (!std::binary_search(allowed.begin(), allowed.end(), c)) {
          throw ValueError(str(where, ": core ", c, " is not in this process's allowed set ", list_text(allowed)));
        }
        const std::string me = str("machines[", g, "] machine ", k);
        const auto [it, fresh] = owner.emplace(c, me);
        if (!fresh) {
          throw ValueError(str(where, ": core ", c, it->second == me ? " is listed twice" : " is also given to ",
                               it->second == me ? "" : it->second, " (machines share no core)"));
        }
      }
    }
  }
}

std::vector<int> instance_cores(const sched::ClusterView& view, sched::WorkerId worker,
                                std::span<const int> machine_cores) {
  if (machine_cores.empty()) return {};
  const auto machine = view.machine(worker);
  std::size_t taken = 0;
  std::optional<std::pair<std::size_t, std::size_t>> mine;  // [first, first + n)
  for (const auto w : view.instances(machine)) {
    if (w != worker && view.status(w) == sched::WorkerStatus::Stopped) continue;
    const std::int64_t n = std::max<std::int64_t>(view.config(w, sched::kCoresKnob, 0), 0);
    if (n == 0) continue;
    const std::size_t first = std::min(taken, machine_cores.size());
    const std::size_t last = std::min(taken + static_cast<std::size_t>(n), machine_cores.size());
    if (w == worker) mine = std::pair{first, last};
    taken = last;
  }
  if (mine && mine->second > mine->first) {
    return {machine_cores.begin() + static_cast<std::ptrdiff_t>(mine->first),
            machine_cores.begin() + static_cast<std::ptrdiff_t>(mine->second)};
  }
  // No knob (or nothing left for it): the cores nobody took, else the whole machine.
  if (taken < machine_cores.size()) {
    return {machine_cores.begin() + static_cast<std::ptrdiff_t>(taken), machine_cores.end()};
  }
  return {machine_cores.begin(), machine_cores.end()};
}

LlcShare instance_llc_share(const sched::ClusterView& view, const cluster::RunSpec& spec, sched::WorkerId worker) {
  const auto machine = view.machine(worker);
  const auto model_of = [&](sched::WorkerId w) {
    const auto& models = view.models(w);
    return models.empty() ? sched::ModelId{-1} : models.front();
  };
  LlcShare share;
  sched::MachineId id = 0;
  for (const auto& group : spec.machines) {
    for (std::int32_t k = 0; k < group.count && id < machine; ++k, ++id) share.first += group.resources.llc_ways;
  }
  // The machine's models in the order their first instance came, with their summed ways.
  std::vector<std::pair<sched::ModelId, std::int64_t>> models;
  for (const auto w : view.instances(machine)) {
    const auto model = model_of(w);
    auto it = std::find_if(models.begin(), models.end(), [&](const auto& m) { return m.first == model; });
    if (it == models.end()) it = models.insert(models.end(), {model, 0});
    if (w != worker && view.status(w) == sched::WorkerStatus::Stopped) continue;
    it->second += std::max<std::int64_t>(view.config(w, sched::kLlcWaysKnob, 0), 0);
  }
  const auto mine = model_of(worker);
  for (const auto& [model, ways] : models) {
    if (model == mine) {
      share.ways = ways;
      break;
    }
    share.first += ways;
  }
  return share;
}

std::vector<int> pin_this_thread(std::span<const int> cores) {
  if (cores.empty()) throw ValueError("pin_this_thread: no cores");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int c : cores) {
    if (c < 0 || c >= CPU_SETSIZE) throw ValueError(str("pin_this_thread: core ", c, " is out of range"));
    CPU_SET(c, &set);
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0)
    throw RuntimeError(str("sched_setaffinity(", list_text(cores), "): ", std::strerror(errno)));
  return current_affinity();
}

ExecutorFactory pinned_executors(ExecutorFactory inner, CorePlan plan, std::shared_ptr<PinLog> log) {
  // The factory is called on the controller thread, once per worker in id order: the count of
  // added workers per group needs no lock.
  auto added = std::make_shared<std::map<std::size_t, int>>();
  return [inner = std::move(inner), plan = std::move(plan), log = std::move(log), added](
             sched::WorkerId worker, sched::HardwareId hardware,
             const cluster::RunSpec& spec) -> std::unique_ptr<Executor> {
    auto executor = inner(worker, hardware, spec);
    // The same group rule as executors_by_group: initial workers group by group, an added worker
    // in the group the serving loop chose (added_worker_group), else its hardware's first group.
    std::optional<std::size_t> group;
    int index = 0;
    if (const auto slot = spec.group_of(worker)) {
      group = slot->group;
      index = slot->index;
    }
    if (!group) {
      if (const auto chosen = added_worker_group()) {
        group = chosen;
        index = static_cast<int>(spec.group_size(*chosen)) + (*added)[*chosen]++;
      }
    }
    for (std::size_t g = 0; g < spec.workers.size() && !group; ++g) {
      if (spec.profile->hardware_index(spec.workers[g].hardware) == hardware) {
        group = g;
        index = static_cast<int>(spec.group_size(g)) + (*added)[g]++;
      }
    }
    if (!group || *group >= plan.by_group.size() || plan.by_group[*group].empty()) return executor;
    const auto& cores = plan.by_group[*group];
    PinRecord record;
    record.worker = worker;
    record.group = static_cast<int>(*group);
    record.core = cores[static_cast<std::size_t>(index) % cores.size()];
    record.cores = {record.core};
    return std::make_unique<PinnedExecutor>(std::move(executor), std::move(record), log);
  };
}

}  // namespace servelab::serve
