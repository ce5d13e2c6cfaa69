// Maps servelab's C++ exceptions to Python ones. Each extension module registers this locally.
#pragma once

#include <pybind11/pybind11.h>

#include "servelab/core/errors.hpp"

namespace servelab::bindings {

inline void register_error_translators() {
  pybind11::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Interrupted&) {
      // PyErr_CheckSignals already set KeyboardInterrupt when the checker saw Ctrl-C.
      if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const KeyError& e) {
      PyErr_SetString(PyExc_KeyError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace servelab::bindings
