#include "servelab/frontend/codec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "half_float.hpp"
#include "servelab/frontend/py_text.hpp"

namespace servelab::frontend {
namespace {

using nlohmann::json;
using serve::DType;
// Exact for every JSON integer (int64 and uint64 alike).
__extension__ typedef __int128 Int128;

struct NamedType {
  std::string_view name;
  DType dtype;
};
// In the protocol's order (the order the Python codec lists them in its messages).
constexpr NamedType kTypes[] = {
    {"BOOL", DType::Bool},     {"UINT8", DType::UInt8},  {"UINT16", DType::UInt16}, {"UINT32", DType::UInt32},
    {"UINT64", DType::UInt64}, {"INT8", DType::Int8},    {"INT16", DType::Int16},   {"INT32", DType::Int32},
    {"INT64", DType::Int64},   {"FP16", DType::Float16}, {"FP32", DType::Float32},  {"FP64", DType::Float64},
};

bool is_float(DType d) { return d == DType::Float16 || d == DType::Float32 || d == DType::Float64; }
bool is_integer(DType d) { return !is_float(d) && d != DType::Bool; }

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// The product of the dimensions, saturated (no real body holds that many values).
std::int64_t element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (const auto d : shape) {
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d) return std::numeric_limits<std::int64_t>::max();
    n *= d;
  }
  return n;
}

std::int64_t byte_count(std::int64_t count, DType dtype) {
  const auto size = static_cast<std::int64_t>(serve::dtype_size(dtype));
  return count > std::numeric_limits<std::int64_t>::max() / size ? std::numeric_limits<std::int64_t>::max()
                                                                 : count * size;
}

// Python's truthiness of a JSON value.
bool truthy(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return false;
    case json::value_t::boolean:
      return v.get<bool>();
    case json::value_t::number_float:
      return v.get<double>() != 0;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return v.get<std::int64_t>() != 0;
    default:
      return !v.empty();
  }
}

const json* find(const json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// `value` (None when absent or null) as a parameters object.
const json& parameters(const json* value, const std::string& where) {
  static const json empty = json::object();
  if (value == nullptr || value->is_null()) return empty;
  if (!value->is_object()) throw invalid(where + " must be an object, got " + py_type_name(*value));
  return *value;
}

bool is_int(const json& v) { return v.is_number_integer(); }  // true, false are not

std::vector<std::int64_t> check_shape(const json* shape, const std::string& where) {
  const bool listed = shape != nullptr && shape->is_array() && std::all_of(shape->begin(), shape->end(), is_int);
  if (!listed) throw invalid(where + "=" + (shape ? py_repr(*shape) : "None") + " must be a list of integers");
  std::vector<std::int64_t> dims;
  bool negative = false;
  for (const auto& d : *shape) {
    if (d.is_number_unsigned() && d.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max())) {
      dims.push_back(std::numeric_limits<std::int64_t>::max());
      continue;
    }
    dims.push_back(d.get<std::int64_t>());
    negative = negative || dims.back() < 0;
  }
  if (negative) throw invalid(where + "=" + shape_text(dims) + " has a negative dimension");
  if (dims.size() > kMaxRank) {
    throw invalid(where + " has " + std::to_string(dims.size()) + " dimensions; at most " + std::to_string(kMaxRank));
  }
  return dims;
}

// np.asarray(data) of nested lists: the values in row-major order, or false when the lists are
// not regular (ragged, or lists beside scalars at one depth).
bool flatten(const json& v, const std::vector<std::size_t>& dims, std::size_t depth, std::vector<const json*>& out) {
  if (depth == dims.size()) {
    if (v.is_array()) return false;
    out.push_back(&v);
    return true;
  }
  if (!v.is_array() || v.size() != dims[depth]) return false;
  for (const auto& item : v)
    if (!flatten(item, dims, depth + 1, out)) return false;
  return true;
}

// A value as an exact integer (bools as 0/1); JSON integers fit in 65 bits.
Int128 integer_value(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_number_unsigned()) return static_cast<Int128>(v.get<std::uint64_t>());
  return static_cast<Int128>(v.get<std::int64_t>());
}

double float_value(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number_float()) return v.get<double>();
  return static_cast<double>(integer_value(v));
}

std::string int128_text(Int128 x) {
  if (x >= 0 && x <= static_cast<Int128>(std::numeric_limits<std::uint64_t>::max()))
    return std::to_string(static_cast<std::uint64_t>(x));
  if (x < 0 && x >= std::numeric_limits<std::int64_t>::min()) return std::to_string(static_cast<std::int64_t>(x));
  return "?";
}

std::pair<Int128, Int128> integer_range(DType d) {
  switch (d) {
    case DType::UInt8:
      return {0, 0xff};
    case DType::UInt16:
      return {0, 0xffff};
    case DType::UInt32:
      return {0, 0xffffffffLL};
    case DType::UInt64:
      return {0, static_cast<Int128>(std::numeric_limits<std::uint64_t>::max())};
    case DType::Int8:
      return {-128, 127};
    case DType::Int16:
      return {-32768, 32767};
    case DType::Int32:
      return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    default:
      return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
  }
}

double float_max(DType d) {
  if (d == DType::Float16) return 65504.0;
  if (d == DType::Float32) return std::numeric_limits<float>::max();
  return std::numeric_limits<double>::max();
}

template <class T>
void put(std::uint8_t* out, T value) {
  std::memcpy(out, &value, sizeof value);
}

void write_value(const json& v, DType dtype, std::uint8_t* out) {
  switch (dtype) {
    case DType::Bool:
      *out = truthy(v) ? 1 : 0;
      break;
    case DType::UInt8:
      put(out, static_cast<std::uint8_t>(integer_value(v)));
      break;
    case DType::UInt16:
      put(out, static_cast<std::uint16_t>(integer_value(v)));
      break;
    case DType::UInt32:
      put(out, static_cast<std::uint32_t>(integer_value(v)));
      break;
    case DType::UInt64:
      put(out, static_cast<std::uint64_t>(integer_value(v)));
      break;
    case DType::Int8:
      put(out, static_cast<std::int8_t>(integer_value(v)));
      break;
    case DType::Int16:
      put(out, static_cast<std::int16_t>(integer_value(v)));
      break;
    case DType::Int32:
      put(out, static_cast<std::int32_t>(integer_value(v)));
      break;
    case DType::Int64:
      put(out, static_cast<std::int64_t>(integer_value(v)));
      break;
    case DType::Float16:
      put(out, float_to_half(static_cast<float>(float_value(v))));
      break;
    case DType::Float32:
      put(out, static_cast<float>(float_value(v)));
      break;
    case DType::Float64:
      put(out, float_value(v));
      break;
  }
}

serve::InputArray from_json_data(const json& data, DType dtype, std::vector<std::int64_t> shape,
                                 const std::string& where) {
  if (!data.is_array()) throw invalid(where + ".data must be a list of values, got " + py_type_name(data));
  // The nesting's dimensions, read along the first elements, then checked everywhere.
  std::vector<std::size_t> dims;
  for (const json* v = &data; v->is_array(); v = &(*v)[0]) {
    dims.push_back(v->size());
    if (v->empty()) break;
  }
  std::vector<const json*> values;
  if (!flatten(data, dims, 0, values)) throw invalid(where + ".data is not a regular list of numbers");
  const std::string name(datatype_name(dtype));
  if (!values.empty()) {
    bool all_bool = true, any_float = false, any_string = false, any_object = false;
    std::size_t longest = 0;
    for (const json* v : values) {
      all_bool = all_bool && v->is_boolean();
      any_float = any_float || v->is_number_float();
      if (v->is_string()) {
        any_string = true;
        longest = std::max(longest, v->get_ref<const std::string&>().size());
      }
      any_object = any_object || v->is_null() || v->is_object();
    }
    if (any_object || any_string) {
      const std::string numpy = any_object ? "object" : "<U" + std::to_string(longest);
      throw invalid(where + ".data holds values that are not numbers (" + numpy + ") for " + name);
    }
    if (dtype == DType::Bool && !all_bool)
      throw invalid(where + ".data holds non-boolean values for BOOL (use true/false)");
    if (is_integer(dtype) && any_float) throw invalid(where + ".data holds non-integer values for " + name);
  }
  const auto need = element_count(shape);
  if (static_cast<std::int64_t>(values.size()) != need) {
    throw invalid(where + ".data has " + std::to_string(values.size()) + " values but shape=" + shape_text(shape) +
                  " needs " + std::to_string(need));
  }
  if (is_float(dtype)) {
    double largest = -1;
    for (const json* v : values) {
      const double x = std::abs(float_value(*v));
      if (std::isfinite(x)) largest = std::max(largest, x);
    }
    if (largest > float_max(dtype))
      throw invalid(where + ".data holds " + py_g(largest) + ", out of range for " + name);
  } else if (is_integer(dtype) && !values.empty()) {
    const auto [lo, hi] = integer_range(dtype);
    Int128 low = integer_value(*values[0]), high = low;
    for (const json* v : values) {
      const auto x = integer_value(*v);
      low = std::min(low, x);
      high = std::max(high, x);
    }
    if (low < lo || high > hi) {
      throw invalid(where + ".data holds " + int128_text(low < lo ? low : high) + ", out of range for " + name);
    }
  }
  serve::InputArray array;
  array.dtype = dtype;
  array.shape = std::move(shape);
  const auto item = serve::dtype_size(dtype);
  array.data.resize(values.size() * item);
  for (std::size_t i = 0; i < values.size(); ++i) write_value(*values[i], dtype, array.data.data() + i * item);
  return array;
}

template <class T>
T get(const std::uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

json value_json(DType dtype, const std::uint8_t* p) {
  switch (dtype) {
    case DType::Bool:
      return *p != 0;
    case DType::UInt8:
      return *p;
    case DType::UInt16:
      return get<std::uint16_t>(p);
    case DType::UInt32:
      return get<std::uint32_t>(p);
    case DType::UInt64:
      return get<std::uint64_t>(p);
    case DType::Int8:
      return get<std::int8_t>(p);
    case DType::Int16:
      return get<std::int16_t>(p);
    case DType::Int32:
      return get<std::int32_t>(p);
    case DType::Int64:
      return get<std::int64_t>(p);
    case DType::Float16:
      return static_cast<double>(half_to_float(get<std::uint16_t>(p)));
    case DType::Float32:
      return static_cast<double>(get<float>(p));
    case DType::Float64:
      return get<double>(p);
  }
  return nullptr;
}

}  // namespace

std::string_view datatype_name(DType dtype) {
  for (const auto& t : kTypes)
    if (t.dtype == dtype) return t.name;
  return "?";
}

DType parse_datatype(const json& name, const std::string& where) {
  if (!name.is_string()) throw invalid(where + "=" + py_repr(name) + " must be a data type name such as 'FP32'");
  const auto& text = name.get_ref<const std::string&>();
  for (const auto& t : kTypes)
    if (t.name == text) return t.dtype;
  if (text == "BYTES") {
    throw invalid(where + "='BYTES' is not supported: strings are not served (the executors read numeric rows)");
  }
  if (text == "BF16") throw invalid(where + "='BF16' is not supported: numpy has no bfloat16; send FP32");
  std::string names;
  for (const auto& t : kTypes) names += (names.empty() ? "" : ", ") + std::string(t.name);
  throw invalid(where + "=" + py_repr(name) + " is not a data type; one of " + names);
}

std::int64_t parse_header_length(std::string_view value) {
  // int() of Python: surrounding whitespace and a sign are allowed.
  auto first = value.find_first_not_of(" \t");
  auto last = value.find_last_not_of(" \t");
  std::string_view digits =
      first == std::string_view::npos ? std::string_view() : value.substr(first, last - first + 1);
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    throw invalid("Inference-Header-Content-Length=" + py_repr(value) + " is not an integer");
  }
  return n;
}

InferRequest decode_request(std::string_view body, std::optional<std::int64_t> header_length) {
  std::string_view header = body, rest;
  if (header_length) {
    if (*header_length < 0 || *header_length > static_cast<std::int64_t>(body.size())) {
      throw invalid("Inference-Header-Content-Length=" + std::to_string(*header_length) + " is outside the body of " +
                    std::to_string(body.size()) + " bytes");
    }
    header = body.substr(0, static_cast<std::size_t>(*header_length));
    rest = body.substr(static_cast<std::size_t>(*header_length));
  }
  json doc;
  try {
    doc = json::parse(header);
  } catch (const json::exception& e) {
    throw invalid(std::string("the request body is not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) throw invalid("the request body must be a JSON object, got " + py_type_name(doc));
  InferRequest request;
  if (const json* id = find(doc, "id")) {
    if (!id->is_string()) throw invalid("id=" + py_repr(*id) + " must be a string");
    request.id = id->get<std::string>();
  }
  request.parameters = parameters(find(doc, "parameters"), "parameters");
  if (const json* b = find(request.parameters, "binary_data_output")) request.binary_output = truthy(*b);
  const json* inputs = find(doc, "inputs");
  if (inputs == nullptr || !inputs->is_array()) {
    const std::string shown = inputs ? py_repr(*inputs) : "None";
    throw invalid("inputs must be a list of tensors, got " + shown.substr(0, 80));
  }
  std::size_t offset = 0;
  for (std::size_t i = 0; i < inputs->size(); ++i) {
    const json& tensor = (*inputs)[i];
    std::string where = "inputs[" + std::to_string(i) + "]";
    if (!tensor.is_object()) throw invalid(where + " must be an object with name, datatype, shape and data");
    const json* name = find(tensor, "name");
    if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty()) {
      throw invalid(where + ".name=" + (name ? py_repr(*name) : "None") + " must be a non-empty string");
    }
    where += " (" + name->get<std::string>() + ")";
    const json* datatype = find(tensor, "datatype");
    const DType dtype = parse_datatype(datatype ? *datatype : json(), where + ".datatype");
    auto shape = check_shape(find(tensor, "shape"), where + ".shape");
    const json& tparams = parameters(find(tensor, "parameters"), where + ".parameters");
    const json* size = find(tparams, "binary_data_size");
    Tensor t;
    t.name = name->get<std::string>();
    if (size != nullptr && !size->is_null()) {
      const bool whole = size->is_number_unsigned() || (size->is_number_integer() && size->get<std::int64_t>() >= 0);
      if (!whole) {
        throw invalid(where + ".parameters.binary_data_size=" + py_repr(*size) + " must be an integer >= 0");
      }
      if (tensor.contains("data")) throw invalid(where + " has both data and binary_data_size");
      const auto bytes = size->get<std::uint64_t>();
      const auto need = byte_count(element_count(shape), dtype);
      if (bytes != static_cast<std::uint64_t>(need)) {
        throw invalid(where + ".parameters.binary_data_size=" + std::to_string(bytes) +
                      " but shape=" + shape_text(shape) + " of " + datatype->get<std::string>() + " needs " +
                      std::to_string(need) + " bytes");
      }
      if (offset + bytes > rest.size()) {
        throw invalid(where + ".parameters.binary_data_size=" + std::to_string(bytes) + ": the body has only " +
                      std::to_string(rest.size() - offset) + " binary bytes left");
      }
      t.array.dtype = dtype;
      t.array.shape = std::move(shape);
      const auto* p = reinterpret_cast<const std::uint8_t*>(rest.data()) + offset;
      t.array.data.assign(p, p + bytes);
      offset += bytes;
    } else {
      const json* data = find(tensor, "data");
      if (data == nullptr) throw invalid(where + " has neither data nor parameters.binary_data_size");
      t.array = from_json_data(*data, dtype, std::move(shape), where);
    }
    request.inputs.push_back(std::move(t));
  }
  if (offset != rest.size()) {
    throw invalid("the body has " + std::to_string(rest.size() - offset) +
                  " binary bytes that no input's binary_data_size claims");
  }
  const json* outputs = find(doc, "outputs");
  if (outputs != nullptr && !outputs->is_null()) {
    if (!outputs->is_array()) throw invalid("outputs must be a list, got " + py_type_name(*outputs));
    request.outputs.emplace();
    for (std::size_t i = 0; i < outputs->size(); ++i) {
      const json& out = (*outputs)[i];
      const std::string where = "outputs[" + std::to_string(i) + "]";
      const json* name = out.is_object() ? find(out, "name") : nullptr;
      if (name == nullptr || !name->is_string()) throw invalid(where + " must be an object with a name");
      const json& oparams = parameters(find(out, "parameters"), where + ".parameters");
      RequestedOutput r{name->get<std::string>(), std::nullopt};
      if (const json* b = find(oparams, "binary_data"); b != nullptr && !b->is_null()) r.binary = truthy(*b);
      request.outputs->push_back(std::move(r));
    }
  }
  return request;
}

EncodedResponse encode_response(const std::string& model, const std::string& version, const InferRequest& request,
                                const std::vector<OutputTensor>& outputs, const json& parameters) {
  json tensors = json::array();
  std::string blobs;
  for (const auto& out : outputs) {
    const auto& a = *out.array;
    json tensor = {{"name", out.name}, {"datatype", datatype_name(a.dtype)}, {"shape", a.shape}};
    bool binary = request.binary_output;
    if (request.outputs) {
      for (const auto& r : *request.outputs)
        if (r.name == out.name && r.binary) binary = *r.binary;
    }
    if (binary) {
      tensor["parameters"] = {{"binary_data_size", a.data.size()}};
      blobs.append(reinterpret_cast<const char*>(a.data.data()), a.data.size());
    } else {
      json data = json::array();
      const auto item = serve::dtype_size(a.dtype);
      for (std::size_t i = 0; i + item <= a.data.size(); i += item)
        data.push_back(value_json(a.dtype, a.data.data() + i));
      tensor["data"] = std::move(data);
    }
    tensors.push_back(std::move(tensor));
  }
  json doc = {{"model_name", model}, {"model_version", version}, {"outputs", std::move(tensors)}};
  if (!request.id.empty()) doc["id"] = request.id;
  if (!parameters.empty()) doc["parameters"] = parameters;
  EncodedResponse encoded{doc.dump(), std::nullopt};
  bool any_binary = false;
  for (const auto& t : doc["outputs"]) any_binary = any_binary || t.contains("parameters");
  if (any_binary) {
    encoded.json_length = encoded.body.size();
    encoded.body += blobs;
  }
  return encoded;
}

}  // namespace servelab::frontend
