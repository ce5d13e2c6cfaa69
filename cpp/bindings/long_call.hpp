// Wrap every C++ call that may run long in a LongCall: it releases the GIL, so other Python
// threads run meanwhile, and lets check_interrupt() see a pending Ctrl-C so the call stops.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <thread>

#include "servelab/core/interrupt.hpp"

namespace servelab::bindings {

// Whether the interpreter is exiting: a thread that takes the GIL then is ended by Python
// (pthread_exit, which unwinds its stack).
inline bool interpreter_exiting() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

// pybind11's gil_scoped_release, but for a call that returns while the interpreter exits (e.g.
// one a batch timeout abandoned on a daemon thread). Taking the GIL back then ends the thread by
// unwinding it, which through pybind11's noexcept destructor, or while the call's own exception
// unwinds (torch's operators are gone by then), is std::terminate: "terminate called without an
// active exception", exit code 134. So this thread waits for the process to end instead, as
// Python 3.14 does with such threads; a finalization that starts just after the check unwinds
// through this destructor, which allows it.
class ReleasedGil {
 public:
  ReleasedGil() {
    pybind11::detail::get_internals();  // as pybind11's: set up for gil_scoped_acquire within
    state_ = PyEval_SaveThread();
  }
  ReleasedGil(const ReleasedGil&) = delete;
  ReleasedGil& operator=(const ReleasedGil&) = delete;
  ~ReleasedGil() noexcept(false) {
    if (interpreter_exiting()) {
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // until the process ends
    }
    PyEval_RestoreThread(state_);
  }

 private:
  PyThreadState* state_ = nullptr;
};

class LongCall {
 public:
  LongCall() = default;

 private:
  static bool python_signal_pending() {
    if (interpreter_exiting()) return false;  // no GIL to take (see ReleasedGil)
    pybind11::gil_scoped_acquire gil;
    // Runs Python's signal handlers; a -1 leaves KeyboardInterrupt set for the translator.
    return PyErr_CheckSignals() != 0;
  }

  ReleasedGil release_;
  core::InterruptScope scope_{&LongCall::python_signal_pending};
};

// Runs `work` inside a LongCall and returns its result once the GIL is held again.
template <typename Work>
auto run_long(Work&& work) {
  LongCall call;
  return work();
}

}  // namespace servelab::bindings
