// The HTTP engine's request codec and routes: JSON and binary (Inference-Header-Content-Length)
// inputs decoded to the arrays the session takes, responses encoded as the protocol writes them,
// and every bad input refused with a message naming the field and value, as the Python codec.
#include <gtest/gtest.h>

#include <boost/beast/zlib/deflate_stream.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "servelab/frontend/codec.hpp"
#include "servelab/frontend/content_encoding.hpp"
#include "servelab/frontend/errors.hpp"
#include "servelab/frontend/models.hpp"
#include "servelab/frontend/routes.hpp"

namespace servelab::frontend {
namespace {

using serve::DType;

template <class T>
std::vector<T> values(const serve::InputArray& a) {
  std::vector<T> out(a.data.size() / sizeof(T));
  std::memcpy(out.data(), a.data.data(), a.data.size());
  return out;
}

// The message of the invalid error decoding `body` throws.
std::string refusal(const std::string& body, std::optional<std::int64_t> header_length = std::nullopt) {
  try {
    decode_request(body, header_length);
  } catch (const FrontendError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << body;
  return "";
}

TEST(FrontendCodec, JsonInputsFlatOrNestedBecomeTypedArrays) {
  const auto r = decode_request(
      R"({"id": "q1", "inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [2, 2], "data": [[1, 2.5], [3, 4]]}],
          "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": true}}], "parameters": {"slo_ms": 20}})",
      std::nullopt);
  EXPECT_EQ(r.id, "q1");
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_EQ(r.inputs[0].array.dtype, DType::Float32);
  EXPECT_EQ(r.inputs[0].array.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(values<float>(r.inputs[0].array), (std::vector<float>{1, 2.5, 3, 4}));
  ASSERT_TRUE(r.outputs.has_value());
  EXPECT_EQ((*r.outputs)[0].binary, std::optional<bool>(true));
  EXPECT_EQ(r.parameters["slo_ms"], 20);
  const auto flat = decode_request(
      R"({"inputs": [{"name": "X", "datatype": "INT16", "shape": [1, 3], "data": [-3, 0, 7]},
                     {"name": "B", "datatype": "BOOL", "shape": [2], "data": [true, false]},
                     {"name": "H", "datatype": "FP16", "shape": [1], "data": [1.5]}]})",
      std::nullopt);
  EXPECT_EQ(values<std::int16_t>(flat.inputs[0].array), (std::vector<std::int16_t>{-3, 0, 7}));
  EXPECT_EQ(flat.inputs[1].array.data, (std::vector<std::uint8_t>{1, 0}));
  EXPECT_EQ(values<std::uint16_t>(flat.inputs[2].array), (std::vector<std::uint16_t>{0x3e00}));  // 1.5 in half
  EXPECT_FALSE(flat.outputs.has_value());
}

TEST(FrontendCodec, BinaryInputsTakeTheirBytesInOrderAfterTheHeader) {
  const std::string header =
      R"({"inputs": [{"name": "A", "datatype": "FP32", "shape": [1, 2], "parameters": {"binary_data_size": 8}},
                     {"name": "B", "datatype": "UINT8", "shape": [3], "parameters": {"binary_data_size": 3}}],
          "parameters": {"binary_data_output": true}})";
  const float a[2] = {1.25f, -2.0f};
  std::string body = header;
  body.append(reinterpret_cast<const char*>(a), sizeof a);
  body += std::string("\x01\x02\x03", 3);
  const auto r = decode_request(body, static_cast<std::int64_t>(header.size()));
  EXPECT_EQ(values<float>(r.inputs[0].array), (std::vector<float>{1.25f, -2.0f}));
  EXPECT_EQ(r.inputs[1].array.data, (std::vector<std::uint8_t>{1, 2, 3}));
  EXPECT_TRUE(r.binary_output);
  // The sizes must add up to the body's binary part.
  const auto n = static_cast<std::int64_t>(header.size());
  EXPECT_EQ(refusal(body + "x", n), "the body has 1 binary bytes that no input's binary_data_size claims");
  EXPECT_EQ(refusal(body.substr(0, body.size() - 2), n),
            "inputs[1] (B).parameters.binary_data_size=3: the body has only 1 binary bytes left");
  EXPECT_EQ(refusal(body, 99999),
            "Inference-Header-Content-Length=99999 is outside the body of " + std::to_string(body.size()) + " bytes");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "A", "datatype": "FP32", "shape": [1, 2],
                        "parameters": {"binary_data_size": 4}}]})"),
            "inputs[0] (A).parameters.binary_data_size=4 but shape=[1, 2] of FP32 needs 8 bytes");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "A", "datatype": "FP32", "shape": [1], "data": [1],
                        "parameters": {"binary_data_size": 4}}]})"),
            "inputs[0] (A) has both data and binary_data_size");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "A", "datatype": "FP32", "shape": [1],
                        "parameters": {"binary_data_size": -1}}]})"),
            "inputs[0] (A).parameters.binary_data_size=-1 must be an integer >= 0");
}

TEST(FrontendCodec, BadBodiesAreRefusedNamingTheFieldAndValue) {
  EXPECT_NE(refusal(R"({"inputs": [)").find("the request body is not valid JSON"), std::string::npos);
  EXPECT_NE(refusal("\xff\xfe").find("not valid JSON"), std::string::npos);
  EXPECT_EQ(refusal("[1]"), "the request body must be a JSON object, got list");
  EXPECT_EQ(refusal(R"({"id": 5, "inputs": []})"), "id=5 must be a string");
  EXPECT_EQ(refusal(R"({"inputs": 3})"), "inputs must be a list of tensors, got 3");
  EXPECT_EQ(refusal(R"({})"), "inputs must be a list of tensors, got None");
  EXPECT_EQ(refusal(R"({"inputs": [], "parameters": [1]})"), "parameters must be an object, got list");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": ""}]})"), "inputs[0].name='' must be a non-empty string");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "BYTES", "shape": [1], "data": ["a"]}]})"),
            "inputs[0] (X).datatype='BYTES' is not supported: strings are not served (the executors read numeric "
            "rows)");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "FP33", "shape": [1], "data": [1]}]})"),
            "inputs[0] (X).datatype='FP33' is not a data type; one of BOOL, UINT8, UINT16, UINT32, UINT64, INT8, "
            "INT16, INT32, INT64, FP16, FP32, FP64");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "FP32", "shape": [1, true], "data": [1]}]})"),
            "inputs[0] (X).shape=[1, True] must be a list of integers");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "FP32", "shape": [-1, 2], "data": [1]}]})"),
            "inputs[0] (X).shape=[-1, 2] has a negative dimension");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "FP32", "shape": [3], "data": [1, 2]}]})"),
            "inputs[0] (X).data has 2 values but shape=[3] needs 3");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "FP32", "shape": [2], "data": [[1], [2, 3]]}]})"),
            "inputs[0] (X).data is not a regular list of numbers");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "INT8", "shape": [2], "data": [1, 300]}]})"),
            "inputs[0] (X).data holds 300, out of range for INT8");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "UINT8", "shape": [1], "data": [-1]}]})"),
            "inputs[0] (X).data holds -1, out of range for UINT8");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "FP16", "shape": [1], "data": [1e6]}]})"),
            "inputs[0] (X).data holds 1e+06, out of range for FP16");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "INT32", "shape": [1], "data": [1.5]}]})"),
            "inputs[0] (X).data holds non-integer values for INT32");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "BOOL", "shape": [1], "data": [1]}]})"),
            "inputs[0] (X).data holds non-boolean values for BOOL (use true/false)");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "FP32", "shape": [1], "data": [null]}]})"),
            "inputs[0] (X).data holds values that are not numbers (object) for FP32");
  EXPECT_EQ(refusal(R"({"inputs": [{"name": "X", "datatype": "FP32", "shape": [1]}]})"),
            "inputs[0] (X) has neither data nor parameters.binary_data_size");
  EXPECT_EQ(refusal(R"({"inputs": [], "outputs": [{"nam": 1}]})"), "outputs[0] must be an object with a name");
  EXPECT_EQ(parse_header_length(" 12 "), 12);
  try {
    parse_header_length("x");
    ADD_FAILURE();
  } catch (const FrontendError& e) {
    EXPECT_STREQ(e.what(), "Inference-Header-Content-Length='x' is not an integer");
  }
}

TEST(FrontendCodec, ResponsesAreJsonOrBinaryAsAsked) {
  serve::InputArray out;
  out.dtype = DType::Float32;
  out.shape = {1, 2};
  const float v[2] = {0.5f, 2.0f};
  out.data.assign(reinterpret_cast<const std::uint8_t*>(v), reinterpret_cast<const std::uint8_t*>(v) + sizeof v);
  InferRequest request;
  request.id = "r";
  const nlohmann::json params = {{"servelab_query", 3}};
  auto e = encode_response("m", "1", request, {{"OUTPUT0", &out}}, params);
  EXPECT_FALSE(e.json_length.has_value());
  const auto doc = nlohmann::json::parse(e.body);
  EXPECT_EQ(doc["id"], "r");
  EXPECT_EQ(doc["outputs"][0]["data"], (nlohmann::json{0.5, 2.0}));
  EXPECT_EQ(doc["outputs"][0]["shape"], (nlohmann::json{1, 2}));
  EXPECT_EQ(doc["parameters"]["servelab_query"], 3);
  request.binary_output = true;
  e = encode_response("m", "1", request, {{"OUTPUT0", &out}}, params);
  ASSERT_TRUE(e.json_length.has_value());
  EXPECT_EQ(e.body.size(), *e.json_length + 8);
  EXPECT_EQ(nlohmann::json::parse(e.body.substr(0, *e.json_length))["outputs"][0]["parameters"]["binary_data_size"], 8);
  request.outputs = std::vector<RequestedOutput>{{"OUTPUT0", false}};  // the output's own choice wins
  EXPECT_FALSE(encode_response("m", "1", request, {{"OUTPUT0", &out}}, params).json_length.has_value());
}

// `text` as raw deflate data.
std::string deflated(const std::string& text) {
  namespace zlib = boost::beast::zlib;
  zlib::deflate_stream stream;
  stream.reset(6, 15, 8, zlib::Strategy::normal);
  std::string out(text.size() + 1024, '\0');
  zlib::z_params zs;
  zs.next_in = text.data();
  zs.avail_in = text.size();
  zs.next_out = out.data();
  zs.avail_out = out.size();
  boost::system::error_code ec;
  stream.write(zs, zlib::Flush::finish, ec);
  out.resize(out.size() - zs.avail_out);
  return out;
}

TEST(FrontendContentEncoding, GzipAndDeflateBodiesAreInflatedWithinTheLimit) {
  const std::string body = R"({"inputs": []})";
  const std::string gzip = std::string("\x1f\x8b\x08\x00\0\0\0\0\x00\x03", 10) + deflated(body) + std::string(8, '\0');
  EXPECT_EQ(decode_content(gzip, "gzip", 1000), body);
  EXPECT_EQ(decode_content(std::string("\x78\x9c") + deflated(body), "deflate", 1000), body);  // zlib
  EXPECT_EQ(decode_content(deflated(body), "deflate", 1000), body);                            // raw
  EXPECT_EQ(decode_content(body, "identity", 1000), body);
  auto refusal = [](const std::string& data, const char* encoding, std::int64_t limit) {
    try {
      decode_content(data, encoding, limit);
    } catch (const FrontendError& e) {
      return std::pair(e.kind(), std::string(e.what()));
    }
    return std::pair(ErrorKind::Internal, std::string("accepted"));
  };
  // A bomb: small, over the limit once inflated.
  const auto bomb = std::string("\x1f\x8b\x08\x00\0\0\0\0\x00\x03", 10) + deflated(std::string(1'000'000, ' '));
  EXPECT_EQ(refusal(bomb, "gzip", 4096),
            std::pair(ErrorKind::TooLarge, std::string("the request body is over the limit max_body_bytes=4096")));
  EXPECT_EQ(refusal("xx", "gzip", 4096).first, ErrorKind::Invalid);
  EXPECT_EQ(
      refusal(gzip.substr(0, 14), "gzip", 4096),
      std::pair(ErrorKind::Invalid, std::string("the request body could not be read: the compressed body ends early")));
  EXPECT_EQ(refusal(body, "br", 4096).second,
            "the request body could not be read: Content-Encoding 'br' is not supported (gzip, deflate or identity)");
}

TEST(FrontendModels, RequestsAreCheckedAsTheSessionTakesThem) {
  ModelTable table({{"rm2", 100, std::nullopt}, {"mlp", 50, InputSpec{DType::Float32, {16}}}}, std::nullopt);
  try {
    table.check("nope", "");
    ADD_FAILURE();
  } catch (const FrontendError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotFound);
    EXPECT_STREQ(e.what(), "unknown model 'nope'; this server's models (the scenario's applications): rm2, mlp");
  }
  EXPECT_THROW(table.check("rm2", "3"), FrontendError);
  EXPECT_EQ(table.check("mlp", "1"), 1);
  EXPECT_EQ(table.metadata(1)["inputs"][0]["shape"], (nlohmann::json{-1, 16}));
  auto request = [](const std::string& body) { return decode_request(body, std::nullopt); };
  auto message = [&](std::int32_t model, const std::string& body) {
    auto r = request(body);
    try {
      table.query(model, r);
    } catch (const FrontendError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message(1, R"({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [2, 7], "data": [
                           1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]})"),
            "inputs[0] (INPUT0): model 'mlp' takes FP32 of shape [-1, 16] (items first); got FP32 of shape [2, 7]");
  EXPECT_EQ(message(0, R"({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [0, 4], "data": []}]})"),
            "inputs[0] (INPUT0).shape=[0, 4]: the first dimension is the query's number of items and must be at least "
            "1");
  EXPECT_EQ(message(0, R"({"inputs": [{"name": "X", "datatype": "FP32", "shape": [1, 1], "data": [1]}]})"),
            "model 'rm2' has no input 'X'; its input is INPUT0");
  EXPECT_EQ(message(0, R"({"inputs": [], "outputs": [{"name": "OUT"}]})"),
            "model 'rm2' has no output 'OUT'; its output is OUTPUT0");
  EXPECT_EQ(message(0, R"({"inputs": [], "parameters": {"slo_ms": "x"}})"), "parameters.slo_ms='x' must be a number");
  auto r = request(R"({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [3, 2], "data": [1,2,3,4,5,6]}],
                       "parameters": {"slo_ms": 7, "accuracy": 0.5}})");
  const auto q = table.query(0, r);
  EXPECT_EQ(q.size, 3);
  EXPECT_EQ(q.slo, 7'000'000);
  EXPECT_EQ(q.accuracy_floor, 0.5);
  ASSERT_TRUE(q.input.has_value());
  // A session whose executors read float32 rows of one width refuses others before a batch.
  ModelTable rows({{"m", 10, std::nullopt}}, 16);
  auto bad = request(R"({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, 2], "data": [1, 2]}]})");
  try {
    rows.query(0, bad);
    ADD_FAILURE();
  } catch (const FrontendError& e) {
    EXPECT_STREQ(e.what(),
                 "model 'm': inputs=array(float32, shape=(1, 2)): the session's executor takes float32 rows of 16 "
                 "features, shape (16,) or (size, 16)");
  }
}

TEST(FrontendRoutes, PathsAndMethods) {
  EXPECT_EQ(parse_route("GET", "/v2/health/live").kind, RouteKind::Live);
  EXPECT_EQ(parse_route("HEAD", "/v2/health/live").kind, RouteKind::Live);
  EXPECT_EQ(parse_route("HEAD", "/v2/models/a/infer").kind, RouteKind::WrongMethod);
  EXPECT_EQ(parse_route("GET", "/v2").kind, RouteKind::ServerMetadata);
  const auto infer = parse_route("POST", "/v2/models/r%20m/versions/1/infer?x=1");
  EXPECT_EQ(infer.kind, RouteKind::Infer);
  EXPECT_EQ(infer.model, "r m");
  EXPECT_EQ(infer.version, "1");
  EXPECT_EQ(parse_route("DELETE", "/v2/models/a/infer").kind, RouteKind::WrongMethod);
  EXPECT_EQ(parse_route("GET", "/v2/models/a/ready").kind, RouteKind::ModelReady);
  EXPECT_EQ(parse_route("GET", "/metrics").kind, RouteKind::Forwarded);
  EXPECT_EQ(parse_route("GET", "/v2/models/a/stats").kind, RouteKind::Forwarded);
  EXPECT_EQ(parse_route("GET", "/v2/nothing").kind, RouteKind::None);
  EXPECT_EQ(parse_route("GET", "/v2/models/a/b/c").kind, RouteKind::None);
  EXPECT_EQ(parse_route("POST", "/v2/repository/index").kind, RouteKind::RepositoryIndex);
}

}  // namespace
}  // namespace servelab::frontend
