#include "loaded_module.hpp"

#include <torch/cuda.h>

#include <filesystem>
#include <new>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::exec {

std::string torch_message(const std::string& what) {
  std::string cause;
  std::size_t begin = 0;
  while (begin < what.size()) {
    auto end = what.find('\n', begin);
    if (end == std::string::npos) end = what.size();
    std::string line = what.substr(begin, end - begin);
    begin = end + 1;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (line.empty() || line.rfind("frame #", 0) == 0 || line.rfind("Exception raised from", 0) == 0) continue;
    cause = line;
  }
  return cause.empty() ? what : cause;
}

LoadedModule::LoadedModule(const std::string& path, const std::string& device, std::string who) : who_(std::move(who)) {
  try {
    device_ = torch::Device(device);
  } catch (const c10::Error&) {
    throw ValueError(str(who_, ": device='", device, "' is not a torch device ('cpu', 'cuda' or 'cuda:N')"));
  }
  if (!device_.is_cpu() && !device_.is_cuda()) {
    throw ValueError(str(who_, ": device='", device, "' is neither 'cpu' nor 'cuda[:N]'"));
  }
  if (device_.is_cuda() && !torch::cuda::is_available()) {
    throw ValueError(str(who_, ": device='", device, "' but this torch sees no CUDA GPU"));
  }
  if (device_.is_cuda() && device_.has_index() && device_.index() >= torch::cuda::device_count()) {
    throw ValueError(str(who_, ": device='", device, "' but torch sees ", torch::cuda::device_count(), " GPU(s)"));
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw ValueError(str(who_, ": path='", path, "' is not a file"));
  try {
    module_ = torch::jit::load(path, device_);
  } catch (const c10::Error& e) {
    throw ValueError(str(who_, ": path='", path, "' could not be loaded as TorchScript (torch.jit.save): ",
                         torch_message(e.what_without_backtrace())));
  } catch (const std::exception& e) {
    throw ValueError(str(who_, ": path='", path,
                         "' could not be loaded as TorchScript (torch.jit.save): ", torch_message(e.what())));
  }
  module_.eval();
}

torch::Tensor LoadedModule::forward(const torch::Tensor& rows_in, bool non_blocking) const {
  const auto rows = rows_in.size(0);
  try {
    c10::InferenceMode guard;
    auto in = device_.is_cpu() ? rows_in : rows_in.to(device_, non_blocking);
    auto result = module_.forward({in});
    if (!result.isTensor()) {
      throw RuntimeError(str(who_, ": forward returned ", result.tagKind(), ", expected one tensor"));
    }
    auto out = result.toTensor();
    if (out.dim() == 0 || out.size(0) != rows) {
      throw RuntimeError(str(who_, ": forward returned a tensor of shape ", out.sizes(), " for a batch of ", rows,
                             " rows; expected [", rows, ", ...]"));
    }
    out = out.to(torch::kCPU, torch::kFloat32).contiguous();
    return out.dim() == 1 ? out.unsqueeze(1) : out.reshape({rows, -1});
  } catch (const servelab::RuntimeError&) {
    throw;
  } catch (const c10::OutOfMemoryError& e) {
    throw MemoryError(str(who_, ": out of memory running a batch of ", rows,
                          " items: ", torch_message(e.what_without_backtrace()), "; lower max_batch_items"));
  } catch (const std::bad_alloc&) {
    throw MemoryError(str(who_, ": out of memory running a batch of ", rows, " items; lower max_batch_items"));
  } catch (const c10::Error& e) {
    throw RuntimeError(
        str(who_, ": forward failed on a batch of ", rows, " items: ", torch_message(e.what_without_backtrace())));
  } catch (const std::exception& e) {  // the interpreter's own errors (a `raise` in the model)
    throw RuntimeError(str(who_, ": forward failed on a batch of ", rows, " items: ", torch_message(e.what())));
  }
}

}  // namespace servelab::exec
