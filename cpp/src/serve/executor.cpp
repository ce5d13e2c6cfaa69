#include "servelab/serve/executor.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/serve/added_workers.hpp"

namespace servelab::serve {

using Clock = std::chrono::steady_clock;

Nanos wait_until_precise(Clock::time_point deadline, std::stop_token stop, Nanos spin) {
  if (spin < 0) throw ValueError(str("spin=", spin, " ns must be >= 0"));
  const auto wake = deadline - std::chrono::nanoseconds(spin);
  if (Clock::now() < wake) {
    // A condition variable rather than sleep_until, so that a stop request wakes it at once.
    std::mutex mutex;
    std::condition_variable_any cv;
    std::unique_lock lock(mutex);
    cv.wait_until(lock, stop, wake, [] { return false; });
  }
  for (;;) {
    const auto now = Clock::now();
    if (now >= deadline) return (now - deadline).count();
    if (stop.stop_requested()) return -std::max<Nanos>(1, (deadline - now).count());
    std::this_thread::yield();
  }
}

EmulatedExecutor::EmulatedExecutor(std::shared_ptr<const profile::Profile> profile,
                                   std::optional<profile::Statistic> service, Nanos spin)
    : times_(std::move(profile), service), spin_(spin) {
  if (spin < 0) throw ValueError(str("EmulatedExecutor: spin=", spin, " ns must be >= 0"));
}

std::string EmulatedExecutor::describe() const {
  return str("emulated(service='", times_.fixed() ? profile::statistic_name(*times_.fixed()) : "sample", "')");
}

Nanos EmulatedExecutor::service_time(const ExecRequest& request) {
  return times_.draw(request.hardware, request.model, request.items, request.rng);
}

void EmulatedExecutor::run(const ExecRequest& request) {
  const auto start = Clock::now();
  const Nanos latency = service_time(request);
  wait_until_precise(start + std::chrono::nanoseconds(latency), request.stop, spin_);
}

ExecutorFactory emulated_executors(Nanos spin) {
  if (spin < 0) throw ValueError(str("emulated_executors: spin=", spin, " ns must be >= 0"));
  return [spin](sched::WorkerId, sched::HardwareId, const cluster::RunSpec& spec) {
    return std::make_unique<EmulatedExecutor>(spec.profile, spec.service_statistic, spin);
  };
}

}  // namespace servelab::serve

namespace servelab::serve {
namespace {
thread_local std::optional<std::size_t> current_added_group;
}  // namespace

std::optional<std::size_t> added_worker_group() { return current_added_group; }

AddedWorkerGroupScope::AddedWorkerGroupScope(std::optional<std::size_t> group) : previous_(current_added_group) {
  current_added_group = group;
}

AddedWorkerGroupScope::~AddedWorkerGroupScope() { current_added_group = previous_; }

std::optional<std::size_t> choose_added_worker_group(const cluster::RunSpec& spec, const sched::ClusterView& view,
                                                     sched::WorkerId worker) {
  const auto hardware = view.hardware(worker);
  const auto& models = view.models(worker);
  const sched::ModelId model = models.empty() ? -1 : models.front();
  // The machine group of the worker's machine (declared machines come first, group by group).
  std::string machine_group;
  sched::MachineId first = 0;
  const auto machine = view.machine(worker);
  for (const auto& group : spec.machines) {
    if (machine >= first && machine < first + group.count) machine_group = group.name;
    first += group.count;
  }
  std::optional<std::size_t> same_machine_and_model, same_model, same_machine, same_hardware;
  for (std::size_t g = 0; g < spec.workers.size(); ++g) {
    const auto& group = spec.workers[g];
    if (spec.profile->hardware_index(group.hardware) != hardware) continue;
    const auto held = cluster::group_models(*spec.profile, group);
    const bool holds = model >= 0 && std::find(held.begin(), held.end(), model) != held.end();
    const bool placed = !machine_group.empty() && group.machine == machine_group;
    if (holds && placed && !same_machine_and_model) same_machine_and_model = g;
    if (holds && !same_model) same_model = g;
    if (placed && !same_machine) same_machine = g;
    if (!same_hardware) same_hardware = g;
  }
  if (same_machine_and_model) return same_machine_and_model;
  if (same_model) return same_model;
  if (same_machine) return same_machine;
  return same_hardware;
}

}  // namespace servelab::serve
