// Memory that only grows, for buffers reused call after call (a GPU lane's device memory and its
// page-locked host memory): reserve() keeps the block while it is big enough, else frees it and
// allocates a bigger one (the contents are dropped). Plain C++, so its rules are tested anywhere;
// the memory comes from `Allocator`:
//   static constexpr const char* kName;           // "GPU memory", in error messages
//   static void* allocate(std::size_t bytes);     // nullptr when out of memory; throws otherwise
//   static void release(void* ptr) noexcept;
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::exec {

// "<who> needs N bytes of <kind>, which are not free": what an allocator that ran out reports.
inline MemoryError out_of_memory(const std::string& who, std::size_t bytes, const char* kind) {
  return MemoryError(str(who, " needs ", bytes, " bytes of ", kind, ", which are not free"));
}

template <typename Allocator>
class GrowOnlyArena {
 public:
  GrowOnlyArena() = default;
  GrowOnlyArena(const GrowOnlyArena&) = delete;
  GrowOnlyArena& operator=(const GrowOnlyArena&) = delete;
  ~GrowOnlyArena() {
    if (ptr_) Allocator::release(ptr_);
  }

  // At least `bytes`. MemoryError "<describe()> needs N bytes of <kName>, which are not free" when
  // the allocator has no room; describe() is called only then, so a call that fits pays nothing
  // for the message.
  template <typename Describe>
  char* reserve(std::size_t bytes, Describe&& describe) {
    if (bytes > capacity_) {
      if (ptr_) Allocator::release(std::exchange(ptr_, nullptr));
      capacity_ = 0;
      ptr_ = static_cast<char*>(Allocator::allocate(bytes));
      if (ptr_ == nullptr) throw out_of_memory(describe(), bytes, Allocator::kName);
      capacity_ = bytes;
    }
    return ptr_;
  }
  std::size_t capacity() const { return capacity_; }

 private:
  char* ptr_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace servelab::exec
