// servelab._cuda: the CUDA backend, a separate extension module so that importing servelab never
// needs cuBLAS; it calls the CUDA runtime only when a function runs, so no driver is needed to load.
#include <pybind11/pybind11.h>

#include <memory>

#include "errors.hpp"
#include "recsys_plugin.hpp"
#include "servelab/exec/cuda_mlp.hpp"
#include "servelab/exec/recsys/cuda_recsys.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_cuda, m) {
  m.doc() = "servelab's CUDA backend. Use servelab.CudaMlp and servelab.build_info() instead.";
  servelab::bindings::register_error_translators();
  py::module_::import("servelab._core");  // registers the Model and MlpWeights classes
  m.def(
      "status",
      [] {
        const auto s = servelab::exec::cuda_status();
        py::dict d;
        d["device_count"] = s.device_count;
        d["reason"] = s.reason;
        d["runtime_version"] = s.runtime_version;
        d["driver_version"] = s.driver_version;
        d["device_name"] = s.device_name;
        d["compute_capability"] = s.compute_capability;
        return d;
      },
      "Devices the CUDA runtime sees now, or why it sees none.");
  py::class_<servelab::exec::CudaMlp, servelab::exec::Model, std::shared_ptr<servelab::exec::CudaMlp>>(
      m, "CudaMlp", "The MLP on a GPU: cuBLAS SGEMM per layer plus servelab's bias/ReLU kernel.")
      .def(py::init<servelab::exec::MlpWeights, int>(), py::arg("weights"), py::arg("device") = 0,
           py::call_guard<py::gil_scoped_release>());
  // Recommendation models on the GPU join _core's backend table (servelab.recsys.build(..., backend="cuda")).
  servelab::bindings::join_recsys_backends("cuda", &servelab::exec::recsys::make_cuda_recsys, "servelab._cuda");
}
