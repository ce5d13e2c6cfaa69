// The "torchscript" executor: a module saved with torch.jit.save, run by LibTorch on the CPU or a
// CUDA GPU for every batch of the serving loop (or the profiler).
//
// A query's input is `size` rows of `width` float32 features, uniform in [-1, 1), from a counter
// stream keyed by the run's stream Rng(seed, "inputs") and the query id: the same (seed, query id)
// always gives the same input, and nothing is stored in the Query. A batch stacks its queries' rows, in order, and
// calls forward(batch) under inference mode.
//
// CPU: the batch is built in a buffer the worker reuses and handed to torch without a copy; the
// knob "intra_op_threads" (else the intra_op parameter) sets the worker thread's intra-op threads.
// CUDA: each worker has its own stream from torch's pool and a pinned host buffer; the input is
// copied asynchronously on that stream, the output copied back, then the stream is synchronised.
// Knob "max_batch_items" (> 0) runs a larger batch in chunks of that many rows.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "servelab/exec/tensor.hpp"
#include "servelab/serve/executor_registry.hpp"

namespace servelab::exec {

struct TorchScriptOptions {
  std::string path;
  std::string device = "cpu";        // "cpu", "cuda" or "cuda:N"
  std::int64_t intra_op = 0;         // 0: torch's default
  std::int64_t inter_op = 0;         // 0: torch's default; process-wide, settable once
  std::int64_t width = 0;            // input features; 0: the first 2-D parameter's column count
  std::int64_t max_batch_items = 0;  // 0: no limit
  std::string spec;                  // for messages: "torchscript(path='m.pt', ...)"
};

class TorchScriptBuilder final : public serve::ExecutorBuilder {
 public:
  // Loads the module and checks it accepts [1, width] inputs. ValueError naming the executor and
  // the parameter: missing or unreadable file, not TorchScript, bad device, no GPU, width that
  // does not fit the model.
  explicit TorchScriptBuilder(TorchScriptOptions options);
  ~TorchScriptBuilder() override;
  std::unique_ptr<serve::Executor> build(const serve::ExecutorContext& context) const override;
  std::string describe() const override;
  std::int64_t width() const;
  const std::string& device() const;

  // The inputs of queries [first_query, first_query + sizes.size()) (size rows each), as the
  // executor makes them with this seed.
  Matrix inputs(std::span<const std::int32_t> sizes, std::int64_t first_query, std::uint64_t seed) const;
  // forward(input) on the device, returned on the CPU as [rows, features].
  Matrix forward(const MatrixView& input) const;

  struct Shared;  // the loaded module, shared by every worker's executor

 private:
  std::shared_ptr<Shared> shared_;
};

// The registry entry "torchscript" that servelab._torch adds when it is loaded.
serve::ExecutorRegistry::Entry torchscript_executor_entry();

}  // namespace servelab::exec
