// Maps servelab's C++ exceptions to Python ones. Each extension module registers this locally.
#pragma once

#include <pybind11/pybind11.h>

#include <cstring>

#include "servelab/core/errors.hpp"

namespace servelab::bindings {

// Sets a Python exception from a C++ message. Messages may quote bytes from user files (a parse
// error shows what it read), which need not be UTF-8: those are shown as \xNN escapes instead of
// turning the error into a UnicodeDecodeError.
inline void set_python_error(PyObject* type, const char* message) {
  PyObject* text = PyUnicode_DecodeUTF8(message, static_cast<Py_ssize_t>(std::strlen(message)), "backslashreplace");
  if (text == nullptr) {  // only on memory exhaustion
    PyErr_SetString(type, "(the error message could not be decoded)");
    return;
  }
  PyErr_SetObject(type, text);
  Py_DECREF(text);
}

inline void register_error_translators() {
  pybind11::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Interrupted&) {
      // PyErr_CheckSignals already set KeyboardInterrupt when the checker saw Ctrl-C.
      if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const KeyError& e) {
      set_python_error(PyExc_KeyError, e.what());
    } catch (const ValueError& e) {
      set_python_error(PyExc_ValueError, e.what());
    } catch (const RuntimeError& e) {
      set_python_error(PyExc_RuntimeError, e.what());
    } catch (const MemoryError& e) {
      set_python_error(PyExc_MemoryError, e.what());
    }
  });
}

}  // namespace servelab::bindings
