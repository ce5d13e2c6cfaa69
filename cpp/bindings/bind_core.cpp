#include <pybind11/pybind11.h>

#include <chrono>
#include <string>

#include "servelab/core/build_info.hpp"
#include "servelab/core/errors.hpp"

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
}

}  // namespace servelab::bindings
