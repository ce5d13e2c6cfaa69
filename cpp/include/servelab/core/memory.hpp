// What memory the machine has left, for checks that refuse a run up front instead of letting it
// fail (or the system swap) after allocating most of what a too-large input asks for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace servelab::core {

// Bytes the system can still give this process without swapping: MemAvailable from /proc/meminfo
// (Linux), else the free physical pages; nullopt when neither is known.
std::optional<std::uint64_t> available_memory_bytes();

// "1.5 GB", "740 MB", "12 kB": three significant digits at most, decimal units.
std::string format_bytes(double bytes);

// MemoryError "<given>: <what> would need about X (B bytes each), more than the Y available: lower
// <field>" when `items` x `bytes_per_item` does not fit the memory available (no check when unknown).
// `given` shows the value ("count=1e12"), `field` names what to change ("count").
void check_fits_memory(double items, double bytes_per_item, std::string_view given, std::string_view field,
                       std::string_view what);

// Asks Linux to back [data, data + bytes) with 2 MB pages (the aligned interior of it), for big
// arrays read at random, where 4 kB pages make nearly every access miss the TLB too. The interior
// is dropped and faults in again as huge pages when written next, so the range must hold nothing
// yet but zeros (a freshly value-initialised vector). A no-op elsewhere than Linux.
void prefer_huge_pages(void* data, std::size_t bytes);

// Memory for arrays read at random positions (embedding tables): at least 64-byte aligned, so a row
// whose size is a multiple of 64 bytes spans whole cache lines (malloc's 16-byte alignment makes a
// 256-byte row straddle five lines instead of four: a quarter more traffic and a line the gather's
// prefetch misses); from 1 MB on, aligned to and rounded up to 2 MB and backed by 2 MB pages (on
// Linux) before the first touch, so all of it, not only the aligned interior, misses the TLB less.
// Throws std::bad_alloc when the memory cannot be had.
void* allocate_for_random_reads(std::size_t bytes);
void free_for_random_reads(void* data) noexcept;

// A std::allocator that takes its memory from allocate_for_random_reads.
template <class T>
struct RandomReadAllocator {
  using value_type = T;
  RandomReadAllocator() = default;
  template <class U>
  RandomReadAllocator(const RandomReadAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_for_random_reads(n * sizeof(T))); }
  void deallocate(T* p, std::size_t) noexcept { free_for_random_reads(p); }
  template <class U>
  bool operator==(const RandomReadAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace servelab::core
