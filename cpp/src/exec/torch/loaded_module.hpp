// A TorchScript file loaded once, run by both servelab.TorchScriptModel (exec::TorchScriptModel)
// and the "torchscript" executor: the one place that checks the device and the file, loads the
// module, runs forward on a batch and turns torch's errors (out of memory included) into
// servelab's, each naming `who` (the executor's spec, or the model).
#pragma once

#include <torch/script.h>

#include <string>

namespace servelab::exec {

// TorchScript errors carry the interpreter's traceback; the cause is on the last line that is
// not a stack frame.
std::string torch_message(const std::string& what);

class LoadedModule {
 public:
  // device: "cpu", "cuda" or "cuda:N". ValueError naming `who` and the field: a device torch does
  // not know, a GPU this torch does not see, a path that is not a file or not TorchScript.
  LoadedModule(const std::string& path, const std::string& device, std::string who);

  // forward(rows) on the module's device (rows are copied there, asynchronously when
  // `non_blocking` and the rows are pinned), under inference mode; the output on the CPU as
  // float32 [rows, features]. MemoryError when the device or host runs out of memory (naming
  // max_batch_items, which runs large batches in chunks); RuntimeError for any other failure.
  torch::Tensor forward(const torch::Tensor& rows, bool non_blocking) const;

  const torch::Device& device() const { return device_; }
  const torch::jit::Module& module() const { return module_; }
  const std::string& who() const { return who_; }

 private:
  std::string who_;
  torch::Device device_{torch::kCPU};
  // forward() is not const; TorchScript allows concurrent inference calls on one module.
  mutable torch::jit::Module module_;
};

}  // namespace servelab::exec
