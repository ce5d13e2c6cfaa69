#include "servelab/exec/torchscript_model.hpp"

#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/version.h>

#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::exec {

struct TorchScriptModel::Impl {
  std::string device_name;
  torch::Device device{torch::kCPU};
  // torch::jit::Module::forward is not const; the module is shared between concurrent callers,
  // which TorchScript allows for inference.
  mutable torch::jit::Module module;
};

TorchScriptModel::TorchScriptModel(const std::string& path, const std::string& device)
    : impl_(std::make_unique<Impl>()) {
  impl_->device_name = device;
  try {
    impl_->device = torch::Device(device);
  } catch (const c10::Error& e) {
    throw ValueError(str("device='", device, "' is not a torch device (expected 'cpu', 'cuda' or 'cuda:N')"));
  }
  if (impl_->device.is_cuda() && !torch::cuda::is_available()) {
    throw ValueError(str("device='", device, "' but this torch sees no CUDA GPU"));
  }
  try {
    impl_->module = torch::jit::load(path, impl_->device);
  } catch (const c10::Error& e) {
    throw ValueError(str("path='", path, "' could not be loaded as TorchScript: ", e.what_without_backtrace()));
  }
  impl_->module.eval();
}

TorchScriptModel::~TorchScriptModel() = default;

const std::string& TorchScriptModel::device() const { return impl_->device_name; }

Matrix TorchScriptModel::run(const MatrixView& input) const {
  if (input.rows <= 0 || input.cols <= 0) {
    throw ValueError(str("input has shape [", input.rows, ", ", input.cols, "]; both must be positive"));
  }
  try {
    c10::InferenceMode guard;
    // from_blob does not copy; to(device) copies only when the device is not the CPU.
    auto in =
        torch::from_blob(const_cast<float*>(input.data), {input.rows, input.cols}, torch::kFloat32).to(impl_->device);
    auto result = impl_->module.forward({in});
    if (!result.isTensor()) {
      throw RuntimeError(str("forward returned ", result.tagKind(), ", expected one tensor"));
    }
    auto out = result.toTensor().to(torch::kCPU, torch::kFloat32).contiguous();
    if (out.dim() == 1) out = out.unsqueeze(1);
    if (out.dim() != 2 || out.size(0) != input.rows) {
      throw RuntimeError(
          str("forward returned a tensor of shape ", out.sizes(), ", expected [", input.rows, ", features]"));
    }
    Matrix m(out.size(0), out.size(1));
    std::copy_n(out.data_ptr<float>(), m.data.size(), m.data.begin());
    return m;
  } catch (const RuntimeError&) {
    throw;
  } catch (const c10::Error& e) {
    throw RuntimeError(str("TorchScript forward failed: ", e.what_without_backtrace()));
  } catch (const std::exception& e) {  // the TorchScript interpreter throws std::runtime_error
    throw RuntimeError(str("TorchScript forward failed: ", e.what()));
  }
}

std::string torch_compiled_version() { return TORCH_VERSION; }

}  // namespace servelab::exec
