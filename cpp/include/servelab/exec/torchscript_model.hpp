// A TorchScript module (saved from Python with torch.jit.save) run by LibTorch on CPU or CUDA.
#pragma once

#include <memory>
#include <string>

#include "servelab/exec/model.hpp"

namespace servelab::exec {

class TorchScriptModel final : public Model {
 public:
  // device: "cpu", "cuda" or "cuda:N". Throws ValueError for an unreadable file or a bad device.
  TorchScriptModel(const std::string& path, const std::string& device);
  ~TorchScriptModel() override;
  // Calls forward(input) under inference mode; the module must return one float tensor of shape
  // [batch, features] (or [batch]).
  Matrix run(const MatrixView& input) const override;
  std::int64_t in_features() const override { return -1; }
  std::string backend() const override { return "torch"; }
  const std::string& device() const;

 private:
  struct Impl;  // keeps torch headers out of this header
  std::unique_ptr<Impl> impl_;
};

// Version of the libtorch this module was compiled against, e.g. "2.13.0".
std::string torch_compiled_version();

}  // namespace servelab::exec
