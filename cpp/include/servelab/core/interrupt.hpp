// Cooperative interruption of long C++ calls.
//
// Long loops call check_interrupt() at safe points. Outside an InterruptScope it does nothing, so
// pure C++ users and tests pay one thread-local read. The Python bindings open a scope around each
// long call with a checker that looks for a pending Ctrl-C; check_interrupt() consults it at most
// once per interval and throws servelab::Interrupted when it reports one.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace servelab::core {

class InterruptScope {
 public:
  // `stop_requested` is called on the thread that opened the scope; true means stop now.
  explicit InterruptScope(std::function<bool()> stop_requested,
                          std::chrono::nanoseconds interval = std::chrono::milliseconds(20));
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  friend void check_interrupt();
  std::function<bool()> stop_requested_;
  std::chrono::nanoseconds interval_;
  std::chrono::steady_clock::time_point next_check_;
  InterruptScope* outer_;
};

// Throws servelab::Interrupted if the innermost scope of this thread asks to stop.
void check_interrupt();

// Busy-loops for `duration`, calling check_interrupt() as it goes; returns the iterations made.
// A deliberately long call: it is how tests show that Ctrl-C stops C++ work promptly.
std::int64_t spin_for(std::chrono::nanoseconds duration);

}  // namespace servelab::core
