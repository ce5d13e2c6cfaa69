#include "servelab/exec/torchscript_executor.hpp"

#include <ATen/Parallel.h>
#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/cuda.h>
#include <torch/script.h>

#include <chrono>
#include <new>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "loaded_module.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/memory.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/serve/query_inputs.hpp"
#include "servelab/serve/query_outputs.hpp"

namespace servelab::exec {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kThreadsKnob = "intra_op_threads";
constexpr const char* kMaxItemsKnob = "max_batch_items";
// More threads than this is a typo, not a machine (and would overflow torch's int).
constexpr std::int64_t kMaxThreads = 4096;

// The rows of each query, stacked. Query q's values are a SplitMix64 counter stream keyed by
// (the stream Rng(seed, "inputs"), q): a function of (seed, q) alone, and about a nanosecond per
// value, so making inputs stays small next to the model even for tiny models.
void fill_inputs(float* out, std::span<const workload::QueryId> queries, std::span<const std::int32_t> sizes,
                 std::int64_t width, const Rng& base) {
  for (std::size_t q = 0; q < queries.size(); ++q) {
    const std::uint64_t key = mix64(base.identity() ^ mix64(static_cast<std::uint64_t>(queries[q])));
    const std::int64_t values = (sizes.empty() ? 1 : sizes[q]) * width;
    for (std::int64_t i = 0; i < values; ++i) {
      const std::uint64_t bits = mix64(key + static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL);
      *out++ = static_cast<float>(static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0);  // [-1, 1)
    }
  }
}

}  // namespace

struct TorchScriptBuilder::Shared {
  TorchScriptOptions options;
  std::optional<LoadedModule> loaded;  // set once the builder's checks pass
  std::int64_t width = 0;

  const torch::Device& device() const { return loaded->device(); }
  // forward(rows) on the device; the output on the CPU (LoadedModule::forward).
  torch::Tensor forward(const torch::Tensor& host, bool non_blocking) const {
    return loaded->forward(host, non_blocking);
  }
};

namespace {

// One worker's executor: its own input buffer (pinned on CUDA) and, on CUDA, its own stream.
class TorchScriptExecutor final : public serve::Executor {
 public:
  TorchScriptExecutor(std::shared_ptr<const TorchScriptBuilder::Shared> shared, std::uint64_t seed)
      : shared_(std::move(shared)), inputs_(seed, "inputs") {
    if (shared_->device().is_cuda()) {
      const c10::impl::VirtualGuardImpl cuda(c10::DeviceType::CUDA);
      const auto index = shared_->device().has_index() ? shared_->device().index() : c10::DeviceIndex{0};
      stream_ = cuda.getStreamFromGlobalPool(c10::Device(c10::DeviceType::CUDA, index), false);
    }
  }

  void run(const serve::ExecRequest& request) override {
    const auto& spec = shared_->options.spec;
    const std::int64_t rows = request.sizes.empty()
                                  ? static_cast<std::int64_t>(request.queries.size())
                                  : std::accumulate(request.sizes.begin(), request.sizes.end(), std::int64_t{0});
    const std::int64_t width = shared_->width;
    // The knobs first: a bad value fails the batch before its inputs are made.
    apply_threads(request.config);
    std::int64_t chunk = knob(request.config, kMaxItemsKnob, shared_->options.max_batch_items);
    if (chunk < 0) throw ValueError(str(spec, ": ", kMaxItemsKnob, "=", chunk, " must be >= 0 (0: no limit)"));
    if (chunk == 0) chunk = rows;
    core::check_fits_memory(static_cast<double>(rows), static_cast<double>(width) * sizeof(float),
                            str(spec, ": a batch of ", rows, " items"), "max_batch_items", "its input");
    reserve(rows);
    if (request.inputs) {  // the user's inputs (serve(inputs=...)); the drop reason names the executor
      serve::fill_batch_rows(*request.inputs, request.queries, request.sizes, width, buffer_.data_ptr<float>(), "");
    } else {
      fill_inputs(buffer_.data_ptr<float>(), request.queries, request.sizes, width, inputs_);
    }

    const auto start = Clock::now();
    std::optional<c10::StreamGuard> on_stream;
    if (stream_) on_stream.emplace(*stream_);
    std::vector<torch::Tensor> outputs;  // kept only when a session reads them
    for (std::int64_t first = 0; first < rows && !request.stop.stop_requested(); first += chunk) {
      auto out = shared_->forward(buffer_.narrow(0, first, std::min(chunk, rows - first)), stream_.has_value());
      if (request.outputs) outputs.push_back(std::move(out));
    }
    if (stream_) stream_->synchronize();
    if (request.report) request.report->compute = (Clock::now() - start).count();
    if (request.outputs && !request.stop.stop_requested()) {
      // forward() returns [rows, k] float32 on the CPU: each query gets its rows.
      const auto all = outputs.size() == 1 ? outputs.front() : torch::cat(outputs).contiguous();
      const std::int64_t width = all.size(1);
      serve::put_batch_rows(*request.outputs, request.queries, request.sizes, serve::DType::Float32,
                            std::span<const std::int64_t>(&width, 1), static_cast<const std::uint8_t*>(all.data_ptr()));
    }
  }

  std::vector<std::string> knobs() const override { return {kThreadsKnob, kMaxItemsKnob}; }
  double bytes_per_item() const override { return static_cast<double>(shared_->width) * sizeof(float); }
  std::string describe() const override { return shared_->options.spec; }

 private:
  static std::int64_t knob(const serve::ConfigKnobs& config, const char* name, std::int64_t fallback) {
    const auto it = config.find(name);
    return it == config.end() ? fallback : it->second;
  }

  // Grows the reusable input buffer (pinned host memory when the model runs on a GPU).
  void reserve(std::int64_t rows) {
    if (buffer_.defined() && buffer_.size(0) >= rows) return;
    try {
      const auto options = torch::dtype(torch::kFloat32).pinned_memory(stream_.has_value());
      buffer_ = torch::empty({rows, shared_->width}, options);
    } catch (const std::bad_alloc&) {
      throw MemoryError(
          str(shared_->options.spec, ": no memory for a batch of ", rows, " items; lower max_batch_items"));
    } catch (const c10::Error& e) {
      throw MemoryError(str(shared_->options.spec, ": no memory for a batch of ", rows,
                            " items: ", torch_message(e.what_without_backtrace()), "; lower max_batch_items"));
    }
  }

  // The worker thread's intra-op threads: the knob when a scheduler set it, else the parameter.
  void apply_threads(const serve::ConfigKnobs& config) {
    const std::int64_t wanted = knob(config, kThreadsKnob, shared_->options.intra_op);
    // 0 leaves torch's own count; a negative count is a mistake, not "the default".
    if (wanted < 0 || wanted > kMaxThreads) {
      throw ValueError(str(shared_->options.spec, ": ", kThreadsKnob, "=", wanted, " must be in [0, ", kMaxThreads,
                           "] (0: torch's default)"));
    }
    if (wanted == 0 || wanted == threads_) return;
    at::set_num_threads(static_cast<int>(wanted));
    threads_ = wanted;
  }

  std::shared_ptr<const TorchScriptBuilder::Shared> shared_;
  Rng inputs_;
  torch::Tensor buffer_;
  std::optional<c10::Stream> stream_;
  std::int64_t threads_ = 0;
};

}  // namespace

TorchScriptBuilder::TorchScriptBuilder(TorchScriptOptions options) : shared_(std::make_shared<Shared>()) {
  auto& s = *shared_;
  s.options = std::move(options);
  const auto& spec = s.options.spec;
  s.loaded.emplace(s.options.path, s.options.device, spec);
  if (s.options.inter_op > 0 && static_cast<std::int64_t>(at::get_num_interop_threads()) != s.options.inter_op) {
    try {
      at::set_num_interop_threads(static_cast<int>(s.options.inter_op));
    } catch (const c10::Error&) {
      throw ValueError(str(spec, ": inter_op=", s.options.inter_op, " cannot be applied: torch's inter-op pool ",
                           "(process-wide, set once) already has ", at::get_num_interop_threads(), " threads"));
    }
  }
  s.width = s.options.width;
  if (s.width == 0) {
    for (const auto& p : s.loaded->module().parameters()) {
      if (p.dim() == 2) {
        s.width = p.size(1);
        break;
      }
    }
    if (s.width == 0) {
      throw ValueError(
          str(spec, ": width=0 asks to infer the input width, but the model has no 2-D parameter; ", "pass width="));
    }
  }
  // One row through the model now, so a wrong width fails here, not in the middle of a run.
  try {
    const auto probe = inputs(std::vector<std::int32_t>{1}, 0, 0);
    forward(probe.view());
  } catch (const servelab::RuntimeError& e) {
    const std::string what = e.what();
    const auto cause = what.find(" items: ");  // drop the repeated spec and batch size
    throw ValueError(str(spec, ": width=", s.width,
                         " does not fit the model: ", cause == std::string::npos ? what : what.substr(cause + 8)));
  }
}

TorchScriptBuilder::~TorchScriptBuilder() = default;

std::unique_ptr<serve::Executor> TorchScriptBuilder::build(const serve::ExecutorContext& context) const {
  return std::make_unique<TorchScriptExecutor>(shared_, context.seed);
}

std::string TorchScriptBuilder::describe() const { return shared_->options.spec; }
std::int64_t TorchScriptBuilder::width() const { return shared_->width; }
const std::string& TorchScriptBuilder::device() const { return shared_->options.device; }

Matrix TorchScriptBuilder::inputs(std::span<const std::int32_t> sizes, std::int64_t first_query,
                                  std::uint64_t seed) const {
  if (first_query < 0) throw ValueError(str("first_query=", first_query, " must be >= 0"));
  std::vector<workload::QueryId> queries(sizes.size());
  std::iota(queries.begin(), queries.end(), static_cast<workload::QueryId>(first_query));
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1) throw ValueError(str("sizes[", i, "]=", sizes[i], " must be >= 1"));
  }
  const std::int64_t rows = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
  core::check_fits_memory(static_cast<double>(rows), static_cast<double>(shared_->width) * sizeof(float),
                          str("sizes summing to ", rows), "sizes", "the inputs");
  Matrix out(rows, shared_->width);
  fill_inputs(out.data.data(), queries, sizes, shared_->width, Rng(seed, "inputs"));
  return out;
}

Matrix TorchScriptBuilder::forward(const MatrixView& input) const {
  if (input.rows <= 0 || input.cols != shared_->width) {
    throw ValueError(str(shared_->options.spec, ": input has shape [", input.rows, ", ", input.cols,
                         "]; expected [rows >= 1, ", shared_->width, "]"));
  }
  const auto host = torch::from_blob(const_cast<float*>(input.data), {input.rows, input.cols}, torch::kFloat32);
  const auto out = shared_->forward(host, false);
  Matrix m(out.size(0), out.size(1));
  std::copy_n(out.data_ptr<float>(), m.data.size(), m.data.begin());
  return m;
}

serve::ExecutorRegistry::Entry torchscript_executor_entry() {
  auto param = [](const char* name, ParamType type, std::optional<ParamValue> value, const char* doc) {
    ParamSpec p;
    p.name = name;
    p.type = type;
    p.default_value = std::move(value);
    p.doc = doc;
    return p;
  };
  auto count = [&param](const char* name, const char* doc) {
    ParamSpec p = param(name, ParamType::Int, ParamValue{std::int64_t{0}}, doc);
    p.min = 0;
    return p;
  };
  auto threads = [&count](const char* name, const char* doc) {
    ParamSpec p = count(name, doc);
    p.max = kMaxThreads;
    return p;
  };
  return {"torchscript",
          "A TorchScript module (torch.jit.save) run by LibTorch on the CPU or a CUDA GPU; each query's input is "
          "`size` rows of `width` seeded float features. Knobs: intra_op_threads, max_batch_items.",
          {param("path", ParamType::String, std::nullopt, "the TorchScript file"),
           param("device", ParamType::String, ParamValue{std::string("cpu")}, "'cpu', 'cuda' or 'cuda:N'"),
           threads("intra_op", "intra-op threads of each worker (0: torch's default)"),
           threads("inter_op", "torch's inter-op threads, process-wide and settable once (0: torch's default)"),
           count("width", "input features per item (0: the first 2-D parameter's columns)"),
           count("max_batch_items", "run larger batches in chunks of this many items (0: no limit)")},
          [](const Params& p) {
            TorchScriptOptions o;
            o.path = p.get_string("path");
            o.device = p.get_string("device");
            o.intra_op = p.get_int("intra_op");
            o.inter_op = p.get_int("inter_op");
            o.width = p.get_int("width");
            o.max_batch_items = p.get_int("max_batch_items");
            o.spec = p.describe();
            return std::make_shared<TorchScriptBuilder>(std::move(o));
          }};
}

}  // namespace servelab::exec
