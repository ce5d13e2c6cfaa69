// The run's own inputs over the remote protocol: typed arrays round trip byte for byte, every
// field of a malformed input section is named, and a worker server hands them to its executor
// (float rows as in-process, typed arrays as given).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "servelab/catalogue/executors.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/serve/query_outputs.hpp"
#include "servelab/serve/remote/protocol.hpp"
#include "servelab/serve/remote/received_inputs.hpp"
#include "servelab/serve/remote/remote_executor.hpp"
#include "servelab/serve/remote/worker_server.hpp"

namespace servelab::serve::remote {
namespace {

template <typename T>
InputArray typed(DType dtype, std::vector<std::int64_t> shape, const std::vector<T>& values, bool scalar = false) {
  InputArray out;
  out.dtype = dtype;
  out.shape = std::move(shape);
  out.scalar = scalar;
  out.data.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(out.data.data(), values.data(), out.data.size());  // memcpy of null is UB
  return out;
}

InputArray floats(std::vector<std::int64_t> shape, const std::vector<float>& values) {
  return typed(DType::Float32, std::move(shape), values);
}

// One query (id 5), no sizes or config, one input: the input section starts at this body offset.
// (model, items, five counts and the flags, then the query id.)
constexpr std::size_t kInputAt = 40 + 8;

Bytes one_input_batch(const InputArray& input) {
  Batch batch;
  batch.items = 1;
  batch.queries = {5};
  batch.inputs = {input};
  Bytes frame;
  encode(1, batch, frame);
  return Bytes(frame.begin() + kHeaderBytes, frame.end());
}

std::string malformed(const Bytes& body) {
  try {
    decode_batch(body);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(RemoteInputs, TypedArraysRoundTripByteForByte) {
  Batch batch;
  batch.items = 4;
  batch.queries = {3, 9, 1};
  batch.sizes = {2, 1, 1};
  batch.padding_bytes = 16;
  batch.inputs = {floats({2, 2}, {1.5f, -2.0f, 3.25f, 7.0f}), typed<std::int64_t>(DType::Int64, {}, {-42}, true),
                  typed<std::uint8_t>(DType::Bool, {0}, {})};
  Bytes frame;
  encode(2, batch, frame);
  const Batch back = decode_batch(std::span<const std::uint8_t>(frame).subspan(kHeaderBytes));
  ASSERT_EQ(back.inputs.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back.inputs[i].dtype, batch.inputs[i].dtype);
    EXPECT_EQ(back.inputs[i].shape, batch.inputs[i].shape);
    EXPECT_EQ(back.inputs[i].data, batch.inputs[i].data);
    EXPECT_EQ(back.inputs[i].scalar, batch.inputs[i].scalar);
  }
  EXPECT_EQ(back.padding_bytes, 16u);
}

TEST(RemoteInputs, HelloCarriesTheProbeAndTheReplyWhatTheExecutorTakes) {
  Bytes frame;
  encode(Hello{2, 1, 9, "constant", true}, frame);
  const Hello hello = decode_hello(std::span<const std::uint8_t>(frame).subspan(kHeaderBytes));
  EXPECT_TRUE(hello.probe);
  EXPECT_EQ(hello.executor, "constant");
  HelloReply reply{Status::Ok, "torchscript(...)", {}, TakesInputs::FloatRows, 16};
  encode(reply, frame);
  const HelloReply back = decode_hello_reply(std::span<const std::uint8_t>(frame).subspan(kHeaderBytes));
  EXPECT_EQ(back.inputs, TakesInputs::FloatRows);
  EXPECT_EQ(back.width, 16);
}

TEST(RemoteInputs, ABatchAsksForOutputsAndItsReplyCarriesThem) {
  Batch batch;
  batch.items = 2;
  batch.queries = {4, 9};
  batch.wants_outputs = true;
  Bytes frame;
  encode(1, batch, frame);
  EXPECT_TRUE(decode_batch(std::span<const std::uint8_t>(frame).subspan(kHeaderBytes)).wants_outputs);
  BatchReply reply;
  reply.exec_ns = 5;
  reply.outputs = {floats({1, 2}, {1.0f, 2.0f}), std::nullopt};
  encode(1, reply, frame);
  const BatchReply back = decode_batch_reply(std::span<const std::uint8_t>(frame).subspan(kHeaderBytes));
  ASSERT_EQ(back.outputs.size(), 2u);
  ASSERT_TRUE(back.outputs[0].has_value());
  EXPECT_EQ(back.outputs[0]->shape, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(back.outputs[0]->data, reply.outputs[0]->data);
  EXPECT_FALSE(back.outputs[1].has_value());
  // A bad presence byte and a bad output are named as outputs.
  auto bad = frame;
  const std::size_t present_at = frame.size() - 1;  // the second output's presence byte
  bad[present_at] = 7;
  try {
    decode_batch_reply(std::span<const std::uint8_t>(bad).subspan(kHeaderBytes));
    FAIL() << "present=7 accepted";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("output 1 present=7 is neither 0 nor 1"), std::string::npos) << e.what();
  }
  // Flags other than "wants outputs" are refused.
  encode(1, batch, frame);
  bad = frame;
  bad[kHeaderBytes + 36] = 2;
  try {
    decode_batch(std::span<const std::uint8_t>(bad).subspan(kHeaderBytes));
    FAIL() << "flags=2 accepted";
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("flags=2"), std::string::npos) << e.what();
  }
}

TEST(RemoteInputs, EveryFieldOfAMalformedInputSectionIsNamed) {
  const Bytes good = one_input_batch(floats({2}, {1.0f, 2.0f}));
  ASSERT_EQ(malformed(good), "accepted");
  auto bad = good;
  bad[kInputAt] = 99;
  EXPECT_NE(malformed(bad).find("input 0 (query 5) dtype code=99 is not a dtype (1..12)"), std::string::npos)
      << malformed(bad);
  bad = good;
  bad[kInputAt + 1] = 2;
  EXPECT_NE(malformed(bad).find("scalar=2 is neither 0 nor 1"), std::string::npos) << malformed(bad);
  bad = good;
  bad[kInputAt + 2] = 33;
  EXPECT_NE(malformed(bad).find("ndim=33 is over 32"), std::string::npos) << malformed(bad);
  bad = good;
  bad[kInputAt + 1] = 1;  // a scalar with a dimension
  EXPECT_NE(malformed(bad).find("scalar=1 with ndim=1"), std::string::npos) << malformed(bad);
  bad = good;
  std::memset(&bad[kInputAt + 3], 0xFF, 8);  // shape (-1,)
  EXPECT_NE(malformed(bad).find("shape has dimension -1 < 0"), std::string::npos) << malformed(bad);
  bad = good;
  const std::int64_t huge = std::int64_t{1} << 40;
  std::memcpy(&bad[kInputAt + 3], &huge, 8);
  EXPECT_NE(malformed(bad).find("is over 67108864 bytes"), std::string::npos) << malformed(bad);
  bad = good;
  bad[kInputAt + 11] = 12;  // data length 12 for 8 bytes of shape (2,) float32
  EXPECT_NE(malformed(bad).find("data length=12 is not the 8 bytes of shape=(2,) of float32"), std::string::npos)
      << malformed(bad);
  bad = good;
  bad.resize(bad.size() - 3);  // the data cut short
  EXPECT_NE(malformed(bad).find("the body ends inside input data"), std::string::npos) << malformed(bad);
  bad = good;
  bad[28] = 2;  // input count 2 for one query
  EXPECT_NE(malformed(bad).find("input count=2 is neither 0 nor the query count 1"), std::string::npos)
      << malformed(bad);
}

TEST(RemoteInputs, EncodingRefusesWhatTheProtocolCannotCarry) {
  Batch batch;
  batch.items = 1;
  batch.queries = {0};
  batch.inputs = {floats({3}, {1.0f, 2.0f})};  // 8 bytes for a shape of 12
  Bytes frame;
  EXPECT_THROW(encode(1, batch, frame), ValueError);
  batch.inputs = {floats(std::vector<std::int64_t>(33, 1), {1.0f})};
  EXPECT_THROW(encode(1, batch, frame), ValueError);
  batch.inputs = {floats({2}, {1.0f, 2.0f})};
  batch.padding_bytes = kMaxBodyBytes - 16;  // with the input, over the limit: refused before any copy
  try {
    encode(1, batch, frame);
    FAIL() << "a batch over the limit was encoded";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("over the limit of 67108864"), std::string::npos) << e.what();
  }
}

TEST(RemoteInputs, ReceivedRowsFollowTheInProcessRules) {
  const std::vector<workload::QueryId> queries = {4, 8};
  ReceivedInputs inputs(queries, {floats({2}, {1.0f, 2.0f}), floats({2, 2}, {3.0f, 4.0f, 5.0f, 6.0f})});
  std::vector<float> rows(8);
  const std::vector<std::int32_t> sizes = {2, 2};
  fill_batch_rows(inputs, queries, sizes, 2, rows.data(), "");
  EXPECT_EQ(rows, (std::vector<float>{1, 2, 1, 2, 3, 4, 5, 6}));  // one row repeated, then one per item
  try {
    inputs.fill_rows(8, 1, 2, rows.data(), "torchscript(path='m.pt')");
    FAIL() << "two rows accepted for one item";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("torchscript(path='m.pt'): takes float32 rows of 2 features; the input sent "
                                         "for query 8 (1 items) is array(float32, shape=(2, 2))"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(inputs.array(5, ""), ValueError);  // no such query in the batch
  EXPECT_EQ(inputs.array(4, "").data, floats({2}, {1.0f, 2.0f}).data);
}

// A user's rows, as serve(inputs=array) would give them: query q's row is (q, q + 0.5).
class Rows final : public QueryInputs {
 public:
  void fill_rows(workload::QueryId query, std::int32_t size, std::int64_t width, float* out,
                 const std::string&) const override {
    for (std::int32_t r = 0; r < size; ++r) {
      out[r * width] = static_cast<float>(query);
      out[r * width + 1] = static_cast<float>(query) + 0.5f;
    }
  }
  std::string describe() const override { return "rows"; }
  InputArray array(workload::QueryId query, const std::string&) const override {
    return floats({2}, {static_cast<float>(query), static_cast<float>(query) + 0.5f});
  }
};

// Hosted by the worker server: reads float rows of width 2, as torchscript does, and keeps them.
class RowReader final : public Executor {
 public:
  explicit RowReader(std::vector<float>* seen, std::mutex* mutex) : seen_(seen), mutex_(mutex) {}
  void run(const ExecRequest& request) override {
    if (request.inputs == nullptr) throw ValueError("no inputs");
    std::vector<float> rows(static_cast<std::size_t>(request.items) * 2);
    fill_batch_rows(*request.inputs, request.queries, request.sizes, 2, rows.data(), "row_reader");
    if (request.outputs) {  // a session reads outputs: each query's rows, doubled
      for (auto& x : rows) x *= 2;
      const std::int64_t width = 2;
      put_batch_rows(*request.outputs, request.queries, request.sizes, DType::Float32,
                     std::span<const std::int64_t>(&width, 1), reinterpret_cast<const std::uint8_t*>(rows.data()));
    }
    std::lock_guard lock(*mutex_);
    seen_->insert(seen_->end(), rows.begin(), rows.end());
  }
  std::string describe() const override { return "row_reader"; }

 private:
  std::vector<float>* seen_;
  std::mutex* mutex_;
};

class RowReaderBuilder final : public ExecutorBuilder {
 public:
  std::unique_ptr<Executor> build(const ExecutorContext&) const override {
    return std::make_unique<RowReader>(&seen, &mutex);
  }
  std::string describe() const override { return "row_reader"; }
  mutable std::vector<float> seen;
  mutable std::mutex mutex;
};

TEST(RemoteInputs, AWorkerServerHandsTheRowsToItsExecutorAndTellsWhatItTakes) {
  const auto path = std::filesystem::temp_directory_path() / ("servelab-inputs-test-" + std::to_string(::getpid()));
  auto hosted = std::make_shared<RowReaderBuilder>();
  WorkerServerOptions options;
  options.listen = parse_address("unix:" + path.string(), "listen");
  options.inputs = TakesInputs::FloatRows;
  options.width = 2;
  WorkerServer server(hosted, options, nullptr);
  std::thread serving([&] { server.serve(); });
  {
    const auto builder = catalogue::executors().make(str("remote(address='", server.address(), "')"));
    const auto probed = probe_hosted(*builder);
    ASSERT_TRUE(probed.has_value());
    EXPECT_EQ(probed->executor, "row_reader");
    EXPECT_EQ(probed->inputs, TakesInputs::FloatRows);
    EXPECT_EQ(probed->width, 2);
    EXPECT_FALSE(probe_hosted(*catalogue::executors().make("constant")).has_value());

    auto executor = builder->build(ExecutorContext{0, 0, nullptr, 1});
    const std::vector<workload::QueryId> queries = {3, 7};
    const std::vector<std::int32_t> sizes = {1, 2};
    const ConfigKnobs config;
    Rng rng(1, "service");
    const Rows rows;
    executor->run(ExecRequest{0, 0, 0, 3, queries, config, rng, {}, sizes, nullptr, &rows});
    {
      std::lock_guard lock(hosted->mutex);
      EXPECT_EQ(hosted->seen, (std::vector<float>{3.0f, 3.5f, 7.0f, 7.5f, 7.0f, 7.5f}));
    }
    // Asked for (a session), each query's output comes back to the controller's store.
    QueryOutputs outputs;
    executor->run(ExecRequest{0, 0, 0, 3, queries, config, rng, {}, sizes, nullptr, &rows, &outputs});
    const auto first = outputs.take(3), second = outputs.take(7);
    ASSERT_TRUE(first.has_value() && second.has_value());
    EXPECT_EQ(first->shape, (std::vector<std::int64_t>{1, 2}));
    EXPECT_EQ(second->shape, (std::vector<std::int64_t>{2, 2}));
    std::vector<float> got(4);
    std::memcpy(got.data(), second->data.data(), 16);
    EXPECT_EQ(got, (std::vector<float>{14.0f, 15.0f, 14.0f, 15.0f}));
    EXPECT_EQ(outputs.size(), 0u);
  }
  server.stop();
  serving.join();
}

}  // namespace
}  // namespace servelab::serve::remote
