#include "servelab/frontend/models.hpp"

#include <cmath>
#include <limits>

#include "servelab/frontend/py_text.hpp"
#include "servelab/serve/session.hpp"

namespace servelab::frontend {
namespace {

using nlohmann::json;

// The longest per-query SLO accepted, as servelab.Session takes it (about 11.6 days).
constexpr double kMaxSloMs = 1e9;

std::string shape_text(const std::vector<std::int64_t>& shape, bool tuple = false) {
  std::string out = tuple ? "(" : "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  if (tuple && shape.size() == 1) out += ",";
  return out + (tuple ? ")" : "]");
}

json input_shape(const Model& m) {
  json shape = json::array({-1});
  if (!m.input) return json::array({-1, -1});
  for (const auto d : m.input->dims) shape.push_back(d);
  return shape;
}

std::string input_datatype(const Model& m) {
  return std::string(m.input ? datatype_name(m.input->dtype) : std::string_view("FP32"));
}

// The number a request parameter holds (not a bool), or an invalid error naming it.
std::optional<double> number_parameter(const json& parameters, const char* key) {
  const auto it = parameters.find(key);
  if (it == parameters.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) throw invalid(std::string("parameters.") + key + "=" + py_repr(*it) + " must be a number");
  return it->get<double>();
}

}  // namespace

ModelTable::ModelTable(std::vector<Model> models, std::optional<std::int64_t> float_width)
    : models_(std::move(models)), float_width_(float_width) {
  for (std::size_t i = 0; i < models_.size(); ++i) index_.emplace(models_[i].name, static_cast<std::int32_t>(i));
}

std::int32_t ModelTable::check(const std::string& name, const std::string& version) const {
  const auto it = index_.find(name);
  if (it == index_.end()) {
    std::string names;
    for (const auto& m : models_) names += (names.empty() ? "" : ", ") + m.name;
    throw FrontendError(ErrorKind::NotFound, "unknown model " + py_repr(name) +
                                                 "; this server's models (the scenario's applications): " + names);
  }
  if (!version.empty() && version != kVersion) {
    throw FrontendError(ErrorKind::NotFound,
                        "model " + py_repr(name) + " has no version " + py_repr(version) + "; its only version is 1");
  }
  return it->second;
}

json ModelTable::metadata(std::int32_t model) const {
  const auto& m = models_[model];
  return {{"name", m.name},
          {"versions", json::array({kVersion})},
          {"platform", "servelab"},
          {"inputs", json::array({{{"name", kInputName}, {"datatype", input_datatype(m)}, {"shape", input_shape(m)}}})},
          {"outputs", json::array({{{"name", kOutputName}, {"datatype", "FP32"}, {"shape", {-1, -1}}}})},
          {"parameters", {{"slo_ms", m.slo_ms}}}};
}

json ModelTable::config(std::int32_t model) const {
  const auto& m = models_[model];
  return {{"name", m.name},
          {"platform", "servelab"},
          {"max_batch_size", 0},
          {"input",
           json::array({{{"name", kInputName}, {"data_type", "TYPE_" + input_datatype(m)}, {"dims", input_shape(m)}}})},
          {"output", json::array({{{"name", kOutputName}, {"data_type", "TYPE_FP32"}, {"dims", {-1, -1}}}})}};
}

SessionQuery ModelTable::query(std::int32_t model, InferRequest& request) const {
  const auto& m = models_[model];
  const std::string name = py_repr(m.name);
  if (request.inputs.size() > 1) {
    std::string names;
    for (const auto& t : request.inputs) names += (names.empty() ? "" : ", ") + t.name;
    throw invalid("model " + name + " takes one input (INPUT0), got " + names);
  }
  if (request.outputs) {
    for (const auto& out : *request.outputs) {
      if (out.name != kOutputName) {
        throw invalid("model " + name + " has no output " + py_repr(out.name) + "; its output is OUTPUT0");
      }
    }
  }
  SessionQuery q;
  q.app = model;
  if (!request.inputs.empty()) {
    auto& t = request.inputs[0];
    if (t.name != kInputName)
      throw invalid("model " + name + " has no input " + py_repr(t.name) + "; its input is INPUT0");
    const auto& shape = t.array.shape;
    if (m.input) {
      bool fits = t.array.dtype == m.input->dtype && shape.size() == m.input->dims.size() + 1;
      for (std::size_t i = 0; fits && i < m.input->dims.size(); ++i)
        fits = m.input->dims[i] == -1 || m.input->dims[i] == shape[i + 1];
      if (!fits) {
        std::vector<std::int64_t> want{-1};
        want.insert(want.end(), m.input->dims.begin(), m.input->dims.end());
        throw invalid("inputs[0] (INPUT0): model " + name + " takes " + std::string(datatype_name(m.input->dtype)) +
                      " of shape " + shape_text(want) + " (items first); got " +
                      std::string(datatype_name(t.array.dtype)) + " of shape " + shape_text(shape));
      }
    } else if (shape.size() < 2) {
      throw invalid("inputs[0] (INPUT0).shape=" + shape_text(shape) +
                    " must be [items, ...], rank 2 or more (one row per item)");
    }
    if (shape[0] < 1) {
      throw invalid("inputs[0] (INPUT0).shape=" + shape_text(shape) +
                    ": the first dimension is the query's number of items and must be at least 1");
    }
    if (float_width_) {  // as servelab.Session refuses it at submit (in a batch it fails others)
      const auto w = *float_width_;
      const bool rows = t.array.dtype == serve::DType::Float32 &&
                        ((shape.size() == 1 && shape[0] == w) || (shape.size() == 2 && shape[1] == w));
      if (!rows) {
        throw invalid("model " + name + ": inputs=array(" + std::string(serve::dtype_name(t.array.dtype)) + ", shape=" +
                      shape_text(shape, true) + "): the session's executor takes float32 rows of " + std::to_string(w) +
                      " features, shape (" + std::to_string(w) + ",) or (size, " + std::to_string(w) + ")");
      }
    }
    if (shape[0] > serve::kMaxQuerySize) {
      throw invalid("model " + name + ": size=" + std::to_string(shape[0]) + " must be in 1.." +
                    std::to_string(serve::kMaxQuerySize));
    }
    q.size = static_cast<std::int32_t>(shape[0]);
    q.input = std::move(t.array);
  }
  if (const auto slo_ms = number_parameter(request.parameters, "slo_ms")) {
    if (!(std::isfinite(*slo_ms) && *slo_ms > 0 && *slo_ms <= kMaxSloMs)) {
      throw invalid("model " + name + ": slo_ms=" + py_g(*slo_ms) + " must be > 0 and at most " + py_g(kMaxSloMs) +
                    " (None: the application's)");
    }
    q.slo = std::max<Nanos>(1, static_cast<Nanos>(std::llround(*slo_ms * 1e6)));
  }
  if (const auto accuracy = number_parameter(request.parameters, "accuracy")) {
    if (!(*accuracy >= 0 && *accuracy <= 1)) {
      throw invalid("model " + name + ": accuracy=" + py_g(*accuracy) + " must be in [0, 1] (None: the application's)");
    }
    q.accuracy_floor = *accuracy;
  }
  return q;
}

}  // namespace servelab::frontend
