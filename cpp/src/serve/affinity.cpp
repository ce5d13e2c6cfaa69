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
  std::sort(out.begin(), out.end(), [](const PinRecord& a, const PinRecord& b) { return a.worker < b.worker; });
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
    // in its hardware's first group.
    std::optional<std::size_t> group;
    int index = 0;
    if (const auto slot = spec.group_of(worker)) {
      group = slot->group;
      index = slot->index;
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
    return std::make_unique<PinnedExecutor>(std::move(executor), std::move(record), log);
  };
}

}  // namespace servelab::serve
