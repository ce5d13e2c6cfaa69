#include "servelab/core/interrupt.hpp"

#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::core {
namespace {
thread_local InterruptScope* current_scope = nullptr;
}

InterruptScope::InterruptScope(std::function<bool()> stop_requested, std::chrono::nanoseconds interval)
    : stop_requested_(std::move(stop_requested)),
      interval_(interval),
      next_check_(std::chrono::steady_clock::now() + interval),
      outer_(current_scope) {
  current_scope = this;
}

InterruptScope::~InterruptScope() { current_scope = outer_; }

void check_interrupt() {
  InterruptScope* scope = current_scope;
  if (scope == nullptr) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < scope->next_check_) return;
  scope->next_check_ = now + scope->interval_;
  if (scope->stop_requested_()) throw Interrupted();
}

std::int64_t spin_for(std::chrono::nanoseconds duration) {
  if (duration.count() < 0) throw ValueError(str("duration=", duration.count(), "ns is negative"));
  const auto end = std::chrono::steady_clock::now() + duration;
  std::int64_t iterations = 0;
  while (std::chrono::steady_clock::now() < end) {
    ++iterations;
    check_interrupt();
  }
  return iterations;
}

}  // namespace servelab::core
