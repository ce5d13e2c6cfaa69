#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/exec/cuda_mlp.hpp"
#include "servelab/exec/recsys/cuda_recsys.hpp"

namespace servelab::exec::recsys {
namespace {

void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw RuntimeError(str(what, " failed: ", cudaGetErrorString(status)));
}

// One feature (or one step of a behaviour sequence) of the batch, as the kernel sees it.
struct DeviceJob {
  const float* table;      // device rows [rows, dim]
  long long index_column;  // where its lookups start in a sample's row of indices
  int lookups;
};

// Block (job, sample): the threads of the block sum the sample's rows of the job's table over
// the embedding width, coalesced, into packed[sample, job * dim ...].
__global__ void embedding_bag_kernel(const DeviceJob* jobs, int job_count, const long long* indices,
                                     long long index_stride, long long dim, float* packed, long long rows) {
  const long long block = blockIdx.x;
  const int j = static_cast<int>(block % job_count);
  const long long b = block / job_count;
  if (b >= rows) return;
  const DeviceJob job = jobs[j];
  const long long* idx = indices + b * index_stride + job.index_column;
  float* out = packed + (b * job_count + j) * dim;
  for (long long c = threadIdx.x; c < dim; c += blockDim.x) {
    float acc = 0.0f;
    for (int l = 0; l < job.lookups; ++l) acc += __ldg(job.table + idx[l] * dim + c);
    out[c] = acc;
  }
}

template <typename T>
struct Device {
  T* ptr = nullptr;
  std::size_t count = 0;
  Device() = default;
  explicit Device(std::size_t n) : count(n) {
    cuda_check(cudaMalloc(&ptr, std::max<std::size_t>(n, 1) * sizeof(T)), "cudaMalloc");
  }
  Device(Device&& o) noexcept : ptr(std::exchange(o.ptr, nullptr)), count(o.count) {}
  Device& operator=(Device&& o) noexcept {
    std::swap(ptr, o.ptr);
    std::swap(count, o.count);
    return *this;
  }
  Device(const Device&) = delete;
  ~Device() {
    if (ptr) cudaFree(ptr);
  }
};

class CudaRecsys final : public RecsysModel {
 public:
  CudaRecsys(Spec spec, Weights weights) : RecsysModel(std::move(spec), std::move(weights)) {
    const CudaStatus status = cuda_status();
    if (status.device_count == 0)
      throw RuntimeError(str("recsys model ", spec_.name, ": no usable CUDA device: ", status.reason));
    cuda_check(cudaSetDevice(0), "cudaSetDevice");
    for (const auto& table : weights_.tables) {
      Device<float> d(table.data.size());
      cuda_check(cudaMemcpy(d.ptr, table.data.data(), table.data.size() * sizeof(float), cudaMemcpyHostToDevice),
                 "cudaMemcpy");
      tables_.push_back(std::move(d));
    }
    for (std::size_t slot = 0; slot < weights_.mlps.size(); ++slot) {
      const auto& mlp = weights_.mlps[slot];
      mlps_.push_back(mlp.layers.empty() ? nullptr
                                         : std::make_unique<CudaMlp>(mlp, 0, Weights::relu_after_last(spec_, slot)));
    }
  }

  std::string backend() const override { return "cuda"; }

  Matrix mlp(std::size_t slot, const MatrixView& input, int) const override { return mlps_.at(slot)->run(input); }

  // One launch for every job of the batch: indices up once, the packed sums down once, then
  // each job's columns copied to where the forward pass expects them.
  void gather(const std::vector<BagJob>& jobs, std::int64_t rows, int) const override {
    if (jobs.empty()) return;
    const std::int64_t dim = spec_.dim, stride = jobs.front().index_stride;
    const std::int64_t* base = jobs.front().indices;
    for (const auto& job : jobs) base = std::min(base, job.indices);
    std::vector<DeviceJob> host_jobs;
    for (const auto& job : jobs) {
      std::size_t t = 0;
      while (t < weights_.tables.size() && weights_.tables[t].data.data() != job.table) ++t;
      if (t == weights_.tables.size()) throw RuntimeError("recsys cuda: a gather job names no table of the model");
      host_jobs.push_back({tables_[t].ptr, static_cast<long long>(job.indices - base), job.lookups});
    }
    std::lock_guard lock(mutex_);
    cuda_check(cudaSetDevice(0), "cudaSetDevice");
    const std::size_t index_count = static_cast<std::size_t>(rows * stride);
    Device<long long> indices(index_count);
    cuda_check(cudaMemcpy(indices.ptr, base, index_count * sizeof(long long), cudaMemcpyHostToDevice), "cudaMemcpy");
    Device<DeviceJob> device_jobs(host_jobs.size());
    cuda_check(
        cudaMemcpy(device_jobs.ptr, host_jobs.data(), host_jobs.size() * sizeof(DeviceJob), cudaMemcpyHostToDevice),
        "cudaMemcpy");
    const auto job_count = static_cast<long long>(host_jobs.size());
    Device<float> packed(static_cast<std::size_t>(rows * job_count * dim));
    const int threads = static_cast<int>(std::min<std::int64_t>(256, ((dim + 31) / 32) * 32));
    embedding_bag_kernel<<<static_cast<unsigned>(rows * job_count), threads>>>(
        device_jobs.ptr, static_cast<int>(job_count), indices.ptr, stride, dim, packed.ptr, rows);
    cuda_check(cudaGetLastError(), "embedding_bag_kernel launch");
    std::vector<float> host(packed.count);
    cuda_check(cudaMemcpy(host.data(), packed.ptr, host.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (std::int64_t b = 0; b < rows; ++b) {
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        std::memcpy(jobs[j].out + b * jobs[j].out_stride, &host[(b * job_count + j) * dim], dim * sizeof(float));
      }
    }
  }

 private:
  std::vector<Device<float>> tables_;
  std::vector<std::unique_ptr<CudaMlp>> mlps_;  // by MlpSlot; null for unused slots
  mutable std::mutex mutex_;
};

}  // namespace

std::shared_ptr<RecsysModel> make_cuda_recsys(Spec spec, Weights weights) {
  return std::make_shared<CudaRecsys>(std::move(spec), std::move(weights));
}

}  // namespace servelab::exec::recsys
