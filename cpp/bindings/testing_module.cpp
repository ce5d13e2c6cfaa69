// servelab._testing: diagnostics for servelab's own test suite, built only with
// SERVELAB_BUILD_TESTS=ON (never part of an installed package).
#include <pybind11/pybind11.h>

#include <chrono>
#include <string>

#include "errors.hpp"
#include "long_call.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

void define_testing(py::module_& m) {
  m.def(
      "spin_for",
      [](double seconds) {
        if (!(seconds >= 0)) throw ValueError(str("seconds=", seconds, " must be >= 0"));
        LongCall call;
        return core::spin_for(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds)));
      },
      py::arg("seconds"),
      "Busy-loops in C++ for `seconds` with the GIL released; Ctrl-C stops it with KeyboardInterrupt.\n"
      "Returns the number of iterations made.");
  m.def(
      "throw_error",
      [](const std::string& kind, const std::string& message) {
        if (kind == "value") throw ValueError(message);
        if (kind == "key") throw KeyError(message);
        if (kind == "runtime") throw RuntimeError(message);
        throw ValueError(str("kind='", kind, "' is not one of 'value', 'key', 'runtime'"));
      },
      py::arg("kind"), py::arg("message"),
      "Throws servelab's C++ exception of `kind`, to check how it arrives in Python.");
}

}  // namespace
}  // namespace servelab::bindings

PYBIND11_MODULE(_testing, m) {
  m.doc() = "Diagnostics used by servelab's own tests.";
  servelab::bindings::register_error_translators();
  servelab::bindings::define_testing(m);
}
