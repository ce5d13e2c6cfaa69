// The Open Inference Protocol's HTTP/REST inference body <-> tensors: the JSON request with its
// binary tensor data extension (Inference-Header-Content-Length), and the response. The same
// decisions and messages as the Python codec (servelab/frontend/codec.py): every refusal is an
// invalid FrontendError naming the field (inputs[0] (INPUT0).shape) and its value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "servelab/frontend/errors.hpp"
#include "servelab/serve/input_array.hpp"

namespace servelab::frontend {

// The protocol's data type names (BOOL, UINT8..UINT64, INT8..INT64, FP16, FP32, FP64).
std::string_view datatype_name(serve::DType dtype);
// The dtype of a protocol name; invalid naming `where` for one that is not a string, not
// supported (BYTES, BF16) or unknown.
serve::DType parse_datatype(const nlohmann::json& name, const std::string& where);
// The most dimensions a tensor may have.
inline constexpr std::size_t kMaxRank = 32;

struct Tensor {
  std::string name;
  serve::InputArray array;  // dtype, shape and C-order bytes
};

struct RequestedOutput {
  std::string name;
  std::optional<bool> binary;  // none: the request's binary_data_output
};

struct InferRequest {
  std::string id;
  std::vector<Tensor> inputs;
  std::optional<std::vector<RequestedOutput>> outputs;  // none: every output
  bool binary_output = false;                           // parameters.binary_data_output
  nlohmann::json parameters = nlohmann::json::object();
};

// `body`, its first `header_length` bytes the JSON when given (the rest the inputs' binary data,
// in input order).
InferRequest decode_request(std::string_view body, std::optional<std::int64_t> header_length);

// Parses the Inference-Header-Content-Length header's value (invalid when not an integer).
std::int64_t parse_header_length(std::string_view value);

struct EncodedResponse {
  std::string body;
  std::optional<std::size_t> json_length;  // set when outputs follow the JSON as binary data
};

struct OutputTensor {
  std::string name;
  const serve::InputArray* array;
};

// The response body: model_name, model_version, outputs, and id and parameters when not empty.
// Each output goes as binary data when the request asked for it.
EncodedResponse encode_response(const std::string& model, const std::string& version, const InferRequest& request,
                                const std::vector<OutputTensor>& outputs, const nlohmann::json& parameters);

}  // namespace servelab::frontend
