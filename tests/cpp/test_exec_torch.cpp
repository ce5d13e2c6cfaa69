#include <gtest/gtest.h>
#include <torch/script.h>

#include <filesystem>

#include "servelab/core/errors.hpp"
#include "servelab/exec/torchscript_model.hpp"

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

}  // namespace
}  // namespace servelab::exec
