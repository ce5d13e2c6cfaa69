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
