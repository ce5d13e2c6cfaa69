// servelab._torch: the LibTorch backend, a separate extension module so that importing servelab
// never loads torch's libraries. servelab.backends imports torch first, then this module.
#include <pybind11/pybind11.h>

#include <memory>

#include "errors.hpp"
#include "servelab/exec/torchscript_model.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_torch, m) {
  m.doc() = "servelab's LibTorch backend. Use servelab.TorchScriptModel instead.";
  servelab::bindings::register_error_translators();
  py::module_::import("servelab._core");  // registers the Model base class
  py::class_<servelab::exec::TorchScriptModel, servelab::exec::Model,
             std::shared_ptr<servelab::exec::TorchScriptModel>>(
      m, "TorchScriptModel", "A TorchScript module file (torch.jit.save) run by LibTorch from C++.")
      .def(py::init<const std::string&, const std::string&>(), py::arg("path"), py::arg("device") = "cpu",
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("device", &servelab::exec::TorchScriptModel::device);
  m.def("compiled_version", &servelab::exec::torch_compiled_version,
        "The libtorch version this module was compiled against.");
}
