#include "servelab/exec/torchscript_model.hpp"

#include <torch/version.h>

#include <algorithm>
#include <utility>

#include "loaded_module.hpp"
#include "servelab/core/errors.hpp"

namespace servelab::exec {

struct TorchScriptModel::Impl {
  Impl(const std::string& path, const std::string& device)
      : device_name(device), loaded(path, device, "TorchScriptModel") {}
  std::string device_name;
  LoadedModule loaded;
};

TorchScriptModel::TorchScriptModel(const std::string& path, const std::string& device)
    : impl_(std::make_unique<Impl>(path, device)) {}

TorchScriptModel::~TorchScriptModel() = default;

const std::string& TorchScriptModel::device() const { return impl_->device_name; }

Matrix TorchScriptModel::run(const MatrixView& input) const {
  if (input.rows <= 0 || input.cols <= 0) {
    throw ValueError(str("input has shape [", input.rows, ", ", input.cols, "]; both must be positive"));
  }
  // from_blob does not copy; forward copies to the device only when it is not the CPU.
  const auto rows = torch::from_blob(const_cast<float*>(input.data), {input.rows, input.cols}, torch::kFloat32);
  const auto out = impl_->loaded.forward(rows, false);
  Matrix m(out.size(0), out.size(1));
  std::copy_n(out.data_ptr<float>(), m.data.size(), m.data.begin());
  return m;
}

std::string torch_compiled_version() { return TORCH_VERSION; }

}  // namespace servelab::exec
