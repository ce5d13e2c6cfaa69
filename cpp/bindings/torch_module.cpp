// servelab._torch: the LibTorch backend, a separate extension module so that importing servelab
// never loads torch's libraries. servelab.backends imports torch first, then this module, which
// adds the "torchscript" executor and the "libtorch" RRL estimator backend to _core's registries as it loads.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <vector>

#include "errors.hpp"
#include "estimator_plugin.hpp"
#include "executor_plugin.hpp"
#include "long_call.hpp"
#include "numpy_matrix.hpp"
#include "seed.hpp"
#include "servelab/exec/torchscript_executor.hpp"
#include "servelab/exec/torchscript_model.hpp"
#include "servelab/systems/rrl/torch_estimator.hpp"

namespace py = pybind11;
using servelab::exec::TorchScriptBuilder;

PYBIND11_MODULE(_torch, m) {
  m.doc() = "servelab's LibTorch backend. Use servelab.TorchScriptModel or make_executor('torchscript(...)').";
  servelab::bindings::register_error_translators();
  py::module_::import("servelab._core");  // registers the Model and ExecutorBuilder base classes
  py::class_<servelab::exec::TorchScriptModel, servelab::exec::Model,
             std::shared_ptr<servelab::exec::TorchScriptModel>>(
      m, "TorchScriptModel", "A TorchScript module file (torch.jit.save) run by LibTorch from C++.")
      .def(py::init<const std::string&, const std::string&>(), py::arg("path"), py::arg("device") = "cpu",
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("device", &servelab::exec::TorchScriptModel::device);

  py::class_<TorchScriptBuilder, servelab::serve::ExecutorBuilder, std::shared_ptr<TorchScriptBuilder>>(
      m, "TorchScriptExecutor", "The 'torchscript' executor (make_executor('torchscript(path=...)')).")
      .def_property_readonly("width", &TorchScriptBuilder::width, "Input features per item.")
      .def_property_readonly("device", &TorchScriptBuilder::device)
      .def(
          "inputs",
          [](const TorchScriptBuilder& b, const std::vector<std::int32_t>& sizes, std::int64_t first_query,
             const py::object& seed) {
            const auto s = servelab::bindings::to_seed(seed);
            servelab::exec::Matrix out;
            {
              py::gil_scoped_release release;
              out = b.inputs(sizes, first_query, s);
            }
            return servelab::bindings::to_numpy(std::move(out));
          },
          py::arg("sizes"), py::arg("first_query") = 0, py::arg("seed") = 0,
          "The float32 inputs [sum(sizes), width] of queries first_query, first_query + 1, ... (sizes[i] rows\n"
          "each), exactly as a run with this seed makes them.")
      .def(
          "forward",
          [](const TorchScriptBuilder& b, const servelab::bindings::FloatArray& input) {
            const auto view = servelab::bindings::as_matrix_view(input, "input");
            servelab::exec::Matrix out;
            {
              servelab::bindings::LongCall call;
              out = b.forward(view);
            }
            return servelab::bindings::to_numpy(std::move(out));
          },
          py::arg("input"), "The model's output [rows, features] for a float32 [rows, width] input, from C++.");

  m.def("compiled_version", &servelab::exec::torch_compiled_version,
        "The libtorch version this module was compiled against.");
  servelab::bindings::join_executor_registry(servelab::exec::torchscript_executor_entry(), "servelab._torch");
  servelab::bindings::join_estimator_registry("libtorch", servelab::rrl::make_torch_estimator, "servelab._torch");
}
