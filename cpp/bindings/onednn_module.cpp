// servelab._onednn: the oneDNN backend, a separate extension module so that importing servelab
// never needs libdnnl (servelab.backends loads it on first use and says why when it cannot).
#include <pybind11/pybind11.h>

#include <memory>

#include "errors.hpp"
#include "recsys_plugin.hpp"
#include "servelab/exec/mlp.hpp"
#include "servelab/exec/onednn_mlp.hpp"
#include "servelab/exec/recsys/onednn_recsys.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_onednn, m) {
  m.doc() = "servelab's oneDNN backend. Use servelab.OneDnnMlp instead.";
  servelab::bindings::register_error_translators();
  py::module_::import("servelab._core");  // registers the Model base class and MlpWeights
  py::class_<servelab::exec::OneDnnMlp, servelab::exec::Model, std::shared_ptr<servelab::exec::OneDnnMlp>>(
      m, "OneDnnMlp", "The MLP on oneDNN's CPU inner-product primitives.")
      .def(py::init<servelab::exec::MlpWeights>(), py::arg("weights"));
  m.def("runtime_version", &servelab::exec::onednn_runtime_version, "The oneDNN version loaded at run time.");
  // Recommendation models on oneDNN join _core's backend table (servelab.recsys.build(..., backend="onednn")).
  servelab::bindings::join_recsys_backends("onednn", &servelab::exec::recsys::make_onednn_recsys, "servelab._onednn");
}
