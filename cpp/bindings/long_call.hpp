// Wrap every C++ call that may run long in a LongCall: it releases the GIL, so other Python
// threads run meanwhile, and lets check_interrupt() see a pending Ctrl-C so the call stops.
#pragma once

#include <pybind11/pybind11.h>

#include "servelab/core/interrupt.hpp"

namespace servelab::bindings {

class LongCall {
 public:
  LongCall() = default;

 private:
  static bool python_signal_pending() {
    pybind11::gil_scoped_acquire gil;
    // Runs Python's signal handlers; a -1 leaves KeyboardInterrupt set for the translator.
    return PyErr_CheckSignals() != 0;
  }

  pybind11::gil_scoped_release release_;
  core::InterruptScope scope_{&LongCall::python_signal_pending};
};

// Runs `work` inside a LongCall and returns its result once the GIL is held again.
template <typename Work>
auto run_long(Work&& work) {
  LongCall call;
  return work();
}

}  // namespace servelab::bindings
