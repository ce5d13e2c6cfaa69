#include "servelab/serve/executor.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "servelab/core/errors.hpp"

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
    : profile_(std::move(profile)), service_(service), spin_(spin) {
  if (!profile_) throw ValueError("EmulatedExecutor: profile is null");
  if (spin < 0) throw ValueError(str("EmulatedExecutor: spin=", spin, " ns must be >= 0"));
}

std::string EmulatedExecutor::describe() const {
  return str("emulated(service='", service_ ? profile::statistic_name(*service_) : "sample", "')");
}

Nanos EmulatedExecutor::service_time(const ExecRequest& request) {
  const auto& profile = *profile_;
  if (!service_) return profile.sample_ns(request.hardware, request.model, request.items, request.rng);
  // The statistic's decision table, as the simulator's fixed service times (entry b = batch b).
  const std::size_t n_models = profile.models().size();
  const std::size_t key = static_cast<std::size_t>(request.hardware) * n_models + request.model;
  if (fixed_.size() <= key) fixed_.resize(profile.hardware().size() * n_models);
  auto& table = fixed_[key];
  if (table.empty()) table = profile.decision_table(request.hardware, request.model, *service_);
  const auto max_batch = static_cast<std::int64_t>(table.size()) - 1;
  if (request.items < 1 || request.items > max_batch) {
    throw ValueError(str("EmulatedExecutor: batch=", request.items, " is outside the profile of model '",
                         profile.models()[request.model], "' on '", profile.hardware()[request.hardware], "' (1..",
                         max_batch, ")"));
  }
  return table[request.items];
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
