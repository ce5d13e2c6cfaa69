// servelab._core bindings of the exec area: the Model interface, MLP weights and the reference MLP
// (the optional backends have their own modules: _onednn, _torch, _cuda).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <utility>
#include <vector>

#include "long_call.hpp"
#include "numpy_args.hpp"
#include "numpy_matrix.hpp"
#include "servelab/exec/mlp.hpp"

namespace py = pybind11;

namespace servelab::bindings {

namespace {

exec::MlpWeights weights_from_python(const std::vector<std::pair<FloatArray, FloatArray>>& layers) {
  exec::MlpWeights w;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& [weight, bias] = layers[i];
    const std::string name = str("layers[", i, "].weight");
    exec::LinearLayer layer{to_matrix(weight, name.c_str()), {}};
    require_1d(bias, str("layers[", i, "].bias"));
    layer.bias.assign(bias.data(), bias.data() + bias.size());
    w.layers.push_back(std::move(layer));
  }
  w.validate();
  return w;
}

py::list weights_to_python(const exec::MlpWeights& w) {
  py::list out;
  for (const auto& layer : w.layers) {
    exec::Matrix weight = layer.weight;
    exec::Matrix bias(1, static_cast<std::int64_t>(layer.bias.size()));
    bias.data = layer.bias;
    out.append(py::make_tuple(to_numpy(std::move(weight)), to_numpy(std::move(bias)).attr("reshape")(-1)));
  }
  return out;
}

}  // namespace

void init_exec(py::module_& m) {
  py::class_<exec::Model, std::shared_ptr<exec::Model>>(m, "Model",
                                                        "A loaded model: maps a [batch, features] float32 batch "
                                                        "to [batch, outputs]. Call it like a function.")
      .def(
          "run",
          [](const exec::Model& model, const FloatArray& input) {
            const auto view = as_matrix_view(input, "input");
            return to_numpy(run_long([&] { return model.run(view); }));
          },
          py::arg("input"), "Runs one batch with the GIL released; returns a new float32 array.")
      .def(
          "__call__", [](py::object self, py::object input) { return self.attr("run")(input); }, py::arg("input"))
      .def_property_readonly("backend", &exec::Model::backend, "Which executor backend runs this model.")
      .def_property_readonly(
          "in_features",
          [](const exec::Model& model) -> py::object {
            const auto n = model.in_features();
            return n < 0 ? py::object(py::none()) : py::object(py::int_(n));
          },
          "Expected input width, or None when only a call can tell.");

  py::class_<exec::MlpWeights>(m, "MlpWeights",
                               "Weights of a Linear-ReLU-...-Linear MLP, layer i as (weight [out, in], bias [out]) "
                               "like torch.nn.Linear.")
      .def(py::init(&weights_from_python), py::arg("layers"))
      .def_static("random", &exec::MlpWeights::random, py::arg("widths"), py::arg("seed"),
                  "Random weights for layer widths [in, hidden..., out], uniform in +-1/sqrt(fan_in).")
      .def_property_readonly("layers", &weights_to_python, "Copies of the layers as (weight, bias) numpy arrays.")
      .def_property_readonly("in_features", &exec::MlpWeights::in_features)
      .def_property_readonly("out_features", &exec::MlpWeights::out_features)
      .def("__repr__", [](const exec::MlpWeights& w) {
        std::string widths = std::to_string(w.in_features());
        for (const auto& layer : w.layers) widths += ", " + std::to_string(layer.weight.rows);
        return "MlpWeights([" + widths + "])";
      });

  py::class_<exec::ReferenceMlp, exec::Model, std::shared_ptr<exec::ReferenceMlp>>(
      m, "ReferenceMlp", "The MLP in plain C++ loops (double accumulation): the reference for other backends.")
      .def(py::init<exec::MlpWeights>(), py::arg("weights"));
}

}  // namespace servelab::bindings
