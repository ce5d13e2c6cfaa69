#include <gtest/gtest.h>
#include <torch/script.h>

#include <filesystem>

#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/exec/torchscript_executor.hpp"
#include "servelab/exec/torchscript_model.hpp"
#include "servelab/serve/executor_timing.hpp"

namespace servelab::exec {
namespace {

// Writes a TorchScript module compiled from source by libtorch itself (no Python needed).
std::string save_affine_module() {
  torch::jit::Module module("Affine");
  module.define(R"(
def forward(self, x):
    return x * 2.0 + 1.0
)");
  const auto path = (std::filesystem::temp_directory_path() / "servelab_test_affine.pt").string();
  module.save(path);
  return path;
}

TEST(TorchScriptModel, RunsASavedModuleOnCpu) {
  const TorchScriptModel model(save_affine_module(), "cpu");
  Matrix x(2, 3);
  x.data = {0, 1, 2, -1, -2, 0.5f};
  const Matrix y = model.run(x.view());
  ASSERT_EQ(y.rows, 2);
  ASSERT_EQ(y.cols, 3);
  for (std::size_t i = 0; i < x.data.size(); ++i) EXPECT_FLOAT_EQ(y.data[i], x.data[i] * 2 + 1);
  EXPECT_EQ(model.backend(), "torch");
  EXPECT_EQ(torch_compiled_version().substr(0, 1), "2");
}

TEST(TorchScriptModel, BadPathAndDeviceAreValueErrors) {
  EXPECT_THROW(TorchScriptModel("/nonexistent/model.pt", "cpu"), ValueError);
  EXPECT_THROW(TorchScriptModel(save_affine_module(), "gpu7"), ValueError);
}

serve::ExecutorRegistry torchscript_registry() {
  serve::ExecutorRegistry registry("executor");
  registry.add(torchscript_executor_entry());
  return std::move(registry).freeze();
}

TEST(TorchScriptExecutor, RunsBatchesOfSeededInputsAndReportsItsTime) {
  const auto registry = torchscript_registry();
  const auto spec = "torchscript(path='" + save_affine_module() + "', width=3)";
  const auto builder = registry.make(spec);
  const auto& ts = dynamic_cast<const TorchScriptBuilder&>(*builder);
  EXPECT_EQ(ts.width(), 3);
  // The inputs are a function of (seed, query id): query 6 is the same row alone or in a batch.
  const std::vector<std::int32_t> sizes{2, 1, 3};
  const Matrix a = ts.inputs(sizes, 5, 1);
  ASSERT_EQ(a.rows, 6);
  const Matrix alone = ts.inputs(std::vector<std::int32_t>{1}, 6, 1);
  for (std::int64_t c = 0; c < 3; ++c) EXPECT_EQ(alone.at(0, c), a.at(2, c));
  EXPECT_NE(ts.inputs(sizes, 5, 2).data, a.data);
  for (const float v : a.data) EXPECT_TRUE(v >= -1.f && v < 1.f) << v;
  const Matrix y = ts.forward(a.view());
  for (std::size_t i = 0; i < a.data.size(); ++i) EXPECT_FLOAT_EQ(y.data[i], a.data[i] * 2 + 1);

  auto executor = builder->build(serve::ExecutorContext{0, 0, nullptr, 1});
  EXPECT_EQ(executor->knobs(), (std::vector<std::string>{"intra_op_threads", "max_batch_items"}));
  Rng rng(1, "service");
  std::int64_t next = 0;
  const auto timings =
      serve::time_batches(*executor, sizes, {{"max_batch_items", 2}, {"intra_op_threads", 1}}, 3, 1, next, rng);
  ASSERT_EQ(timings.size(), 3u);
  EXPECT_EQ(next, 12);  // (1 warm-up + 3) batches of 3 queries
  for (const auto& t : timings) {
    EXPECT_GT(t.exec, 0);
    EXPECT_LE(t.exec, t.wall);
  }
}

TEST(TorchScriptExecutor, BadSpecsAreValueErrorsNamingTheParameter) {
  const auto registry = torchscript_registry();
  const auto path = save_affine_module();
  auto message = [&](const std::string& spec) {
    try {
      registry.make(spec);
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no ValueError");
  };
  // The affine module has no 2-D parameter to infer the width from.
  EXPECT_NE(message("torchscript(path='" + path + "')").find("width=0"), std::string::npos);
  EXPECT_NE(message("torchscript(path='/nonexistent.pt')").find("is not a file"), std::string::npos);
  EXPECT_NE(message("torchscript(path='" + path + "', width=3, device='gpu7')").find("device='gpu7'"),
            std::string::npos);
  EXPECT_NE(message("torchscript(path='" + path + "', width=3, intra_op=5000)").find("intra_op=5000"),
            std::string::npos);
}

}  // namespace
}  // namespace servelab::exec
