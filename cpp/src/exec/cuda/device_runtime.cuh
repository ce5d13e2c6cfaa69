// What servelab's CUDA backends share: error checks that throw servelab's exceptions, device
// arrays, grow-only device and pinned-host arenas, and lanes. A lane is a stream, a cuBLAS handle
// bound to it and the arenas; each concurrent call leases one, so serving threads run on the GPU
// side by side, and once a lane has grown to the batches it serves no call allocates memory.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/exec/grow_only_arena.hpp"

namespace servelab::exec::cuda {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw RuntimeError(str(what, " failed: ", cudaGetErrorString(status)));
}

inline void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw RuntimeError(str(what, " failed: ", cublasGetStatusString(status)));
}

// The pointer an allocation call gave, or nullptr when it ran out of memory (not sticky: the
// runtime's error state is cleared, so the next call starts clean); other failures throw.
inline void* allocated_or_null(cudaError_t status, void* ptr, const char* call) {
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return nullptr;
  }
  check(status, call);
  return ptr;
}

// The two kinds of memory a lane grows (GrowOnlyArena's allocators).
struct DeviceMemory {
  static constexpr const char* kName = "GPU memory";
  static void* allocate(std::size_t bytes) {
    void* ptr = nullptr;
    const cudaError_t status = cudaMalloc(&ptr, bytes == 0 ? 1 : bytes);
    return allocated_or_null(status, ptr, "cudaMalloc");
  }
  static void release(void* ptr) noexcept { cudaFree(ptr); }
};

// Page-locked host memory, so copies to and from the device are asynchronous DMA.
struct PinnedMemory {
  static constexpr const char* kName = "page-locked host memory";
  static void* allocate(std::size_t bytes) {
    void* ptr = nullptr;
    const cudaError_t status = cudaMallocHost(&ptr, bytes == 0 ? 1 : bytes);
    return allocated_or_null(status, ptr, "cudaMallocHost");
  }
  static void release(void* ptr) noexcept { cudaFreeHost(ptr); }
};

// Callers reserve before they queue work on the lane's stream and synchronise before the next
// reserve, so no copy or kernel can be using a block the arena replaces.
using DeviceArena = GrowOnlyArena<DeviceMemory>;
using PinnedArena = GrowOnlyArena<PinnedMemory>;

// A fixed-size device array (weights, tables), uploaded once.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const T* host, std::size_t count, const std::string& what)
      : ptr_(static_cast<T*>(DeviceMemory::allocate(count * sizeof(T)))), count_(count) {
    if (ptr_ == nullptr) throw out_of_memory(what, count * sizeof(T), DeviceMemory::kName);
    if (count > 0) check(cudaMemcpy(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  DeviceArray(DeviceArray&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() {
    if (ptr_) cudaFree(ptr_);
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Offsets of the pieces of one call's buffers inside an arena, each aligned for any type.
class ArenaLayout {
 public:
  template <typename T>
  std::size_t add(std::size_t count) {
    const std::size_t at = bytes_;
    bytes_ += (count * sizeof(T) + kAlign - 1) / kAlign * kAlign;
    return at;
  }
  std::size_t bytes() const { return bytes_; }

 private:
  static constexpr std::size_t kAlign = 256;  // cudaMalloc's own alignment
  std::size_t bytes_ = 0;
};

struct Lane {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  DeviceArena device_memory;
  PinnedArena host_memory;
  std::vector<cudaEvent_t> events;  // for stage timing, made the first time they are asked for

  explicit Lane(int device_index) : device(device_index) {
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cublasCreate(&blas), "cublasCreate");
    check(cublasSetStream(blas, stream), "cublasSetStream");
  }
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;
  ~Lane() {
    for (auto e : events) cudaEventDestroy(e);
    if (blas) cublasDestroy(blas);
    if (stream) cudaStreamDestroy(stream);
  }
  cudaEvent_t event(std::size_t i) {
    while (events.size() <= i) {
      cudaEvent_t e = nullptr;
      check(cudaEventCreate(&e), "cudaEventCreate");
      events.push_back(e);
    }
    return events[i];
  }
  void synchronize() { check(cudaStreamSynchronize(stream), "cudaStreamSynchronize"); }
};

// Idle lanes of one device; a call takes one (making it when none is idle) and gives it back.
class LanePool {
 public:
  explicit LanePool(int device) : device_(device) {}

  class Lease {
   public:
    Lease(LanePool& pool, std::unique_ptr<Lane> lane) : pool_(&pool), lane_(std::move(lane)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      // A call that threw may have left work queued: let it finish before anyone reuses the lane.
      cudaStreamSynchronize(lane_->stream);
      cudaGetLastError();
      pool_->give_back(std::move(lane_));
    }
    Lane& operator*() const { return *lane_; }
    Lane* operator->() const { return lane_.get(); }

   private:
    LanePool* pool_;
    std::unique_ptr<Lane> lane_;
  };

  Lease acquire() {
    check(cudaSetDevice(device_), "cudaSetDevice");
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        auto lane = std::move(idle_.back());
        idle_.pop_back();
        return Lease(*this, std::move(lane));
      }
    }
    return Lease(*this, std::make_unique<Lane>(device_));
  }
  int device() const { return device_; }

 private:
  void give_back(std::unique_ptr<Lane> lane) {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(lane));
  }

  int device_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Lane>> idle_;
};

}  // namespace servelab::exec::cuda
