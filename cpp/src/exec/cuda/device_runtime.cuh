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

namespace servelab::exec::cuda {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw RuntimeError(str(what, " failed: ", cudaGetErrorString(status)));
}

inline void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw RuntimeError(str(what, " failed: ", cublasGetStatusString(status)));
}

// cudaMalloc that says what did not fit as a MemoryError (an allocation failure is not sticky:
// the runtime's error state is cleared so the next call starts clean).
inline void* device_alloc(std::size_t bytes, const std::string& what) {
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes == 0 ? 1 : bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw MemoryError(str(what, " needs ", bytes, " bytes of GPU memory, which are not free"));
  }
  check(status, "cudaMalloc");
  return ptr;
}

// A fixed-size device array (weights, tables), uploaded once.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const T* host, std::size_t count, const std::string& what)
      : ptr_(static_cast<T*>(device_alloc(count * sizeof(T), what))), count_(count) {
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

// Memory that only grows: reserve() keeps the block when it is big enough, else replaces it
// (dropping its contents). Callers reserve before they queue work on the lane's stream and
// synchronise before the next reserve, so no copy or kernel can be using a replaced block.
class DeviceArena {
 public:
  DeviceArena() = default;
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;
  ~DeviceArena() {
    if (ptr_) cudaFree(ptr_);
  }
  char* reserve(std::size_t bytes, const std::string& what) {
    if (bytes > capacity_) {
      if (ptr_) cudaFree(std::exchange(ptr_, nullptr));
      capacity_ = 0;
      ptr_ = static_cast<char*>(device_alloc(bytes, what));
      capacity_ = bytes;
    }
    return ptr_;
  }

 private:
  char* ptr_ = nullptr;
  std::size_t capacity_ = 0;
};

// Page-locked host memory, so copies to and from the device are asynchronous DMA.
class PinnedArena {
 public:
  PinnedArena() = default;
  PinnedArena(const PinnedArena&) = delete;
  PinnedArena& operator=(const PinnedArena&) = delete;
  ~PinnedArena() {
    if (ptr_) cudaFreeHost(ptr_);
  }
  char* reserve(std::size_t bytes, const std::string& what) {
    if (bytes > capacity_) {
      if (ptr_) cudaFreeHost(std::exchange(ptr_, nullptr));
      capacity_ = 0;
      void* p = nullptr;
      const cudaError_t status = cudaMallocHost(&p, bytes == 0 ? 1 : bytes);
      if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        throw MemoryError(str(what, " needs ", bytes, " bytes of page-locked host memory, which are not free"));
      }
      check(status, "cudaMallocHost");
      ptr_ = static_cast<char*>(p);
      capacity_ = bytes;
    }
    return ptr_;
  }

 private:
  char* ptr_ = nullptr;
  std::size_t capacity_ = 0;
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
