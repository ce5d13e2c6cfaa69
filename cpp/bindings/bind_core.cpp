#include <pybind11/pybind11.h>

#include <chrono>
#include <string>

#include "long_call.hpp"
#include "servelab/core/build_info.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace py = pybind11;

namespace servelab::bindings {

namespace {
py::dict backend_dict(const core::BackendBuild& b) {
  py::dict d;
  d["compiled"] = b.compiled;
  d["version"] = b.version.empty() ? py::object(py::none()) : py::object(py::str(b.version));
  d["why_off"] = b.why_off;
  return d;
}
}  // namespace

void init_core(py::module_& m) {
  m.def(
      "build_info",
      [] {
        const auto info = core::build_info();
        py::dict d, backends;
        d["version"] = info.version;
        d["compiler"] = info.compiler;
        d["build_type"] = info.build_type;
        d["cxx_standard"] = info.cxx_standard;
        backends["onednn"] = backend_dict(info.onednn);
        backends["torch"] = backend_dict(info.torch);
        backends["cuda"] = backend_dict(info.cuda);
        backends["cuda"]["architectures"] = info.cuda_architectures;
        d["backends"] = backends;
        return d;
      },
      "What this build was compiled with (servelab.build_info() adds what is usable now).");

  auto testing = m.def_submodule("testing", "Diagnostics used by servelab's own tests.");
  testing.def(
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
  testing.def(
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

}  // namespace servelab::bindings
