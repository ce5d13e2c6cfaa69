// What the HTTP engine serves: the session's applications as models, their metadata, and the
// checks an inference request passes before it reaches the session, decided as the Python
// front-end decides them (servelab/frontend/service.py: ModelService).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "servelab/core/time.hpp"
#include "servelab/frontend/codec.hpp"
#include "servelab/serve/input_array.hpp"

namespace servelab::frontend {

inline constexpr const char* kInputName = "INPUT0";
inline constexpr const char* kOutputName = "OUTPUT0";
inline constexpr const char* kVersion = "1";

// What a model's INPUT0 must be: the data type and one item's dimensions (-1: any).
struct InputSpec {
  serve::DType dtype = serve::DType::Float32;
  std::vector<std::int64_t> dims;
};

struct Model {
  std::string name;
  double slo_ms = 0;
  std::optional<InputSpec> input;
};

// A request's input and goals, checked and ready for serve::Session::submit.
struct SessionQuery {
  std::int32_t app = 0;
  std::int32_t size = 1;
  std::optional<serve::InputArray> input;
  Nanos slo = 0;               // 0: the application's
  double accuracy_floor = -1;  // negative: the application's
};

class ModelTable {
 public:
  // `float_width`: the feature width every input must have where the session's executors read
  // float32 rows of one width (servelab.Session refuses others at submit).
  ModelTable(std::vector<Model> models, std::optional<std::int64_t> float_width);

  const std::vector<Model>& models() const { return models_; }
  // The model's index (its application's); not_found naming the models, or the version.
  std::int32_t check(const std::string& name, const std::string& version) const;
  nlohmann::json metadata(std::int32_t model) const;
  nlohmann::json config(std::int32_t model) const;
  // The request as a query of `model`: one input named INPUT0 of rank >= 2 (or fitting the
  // model's spec), at least one item, only OUTPUT0 asked for, numeric slo_ms / accuracy.
  SessionQuery query(std::int32_t model, InferRequest& request) const;

 private:
  std::vector<Model> models_;
  std::map<std::string, std::int32_t> index_;
  std::optional<std::int64_t> float_width_;
};

}  // namespace servelab::frontend
