#include "servelab/cluster/record_arena.hpp"

#include <cstdint>
#include <mutex>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace servelab::cluster {
namespace {

constexpr std::size_t kPage = std::size_t{4} << 10;
constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::uintptr_t round_up(std::uintptr_t x, std::size_t to) { return (x + to - 1) & ~(std::uintptr_t{to} - 1); }
std::uintptr_t round_down(std::uintptr_t x, std::size_t to) { return x & ~(std::uintptr_t{to} - 1); }

}  // namespace

#if defined(__linux__)

namespace {

// Pages no longer needed go back lazily (MADV_FREE): the kernel takes them when it needs memory,
// and until then writing them again costs neither a page fault nor zeroing. Kernels before 4.5
// lack it: there they go at once.
void release_pages(std::uintptr_t first, std::uintptr_t last) {
  if (last <= first) return;
  auto* p = reinterpret_cast<void*>(first);
#if defined(MADV_FREE)
  if (madvise(p, last - first, MADV_FREE) == 0) return;
#endif
  madvise(p, last - first, MADV_DONTNEED);
}

// The last freed arena's mapping (its pages released lazily), for the next run to reuse: a sweep
// of runs then writes the same pages each time, as the heap reused its blocks before the arena.
struct MappingCache {
  std::mutex mutex;
  char* base = nullptr;
  std::size_t size = 0;
};
MappingCache& mapping_cache() {
  static MappingCache* cache = new MappingCache();  // never destroyed: arenas may die at exit
  return *cache;
}

// A fresh mapping of `size` bytes starting on a 2 MB boundary (Linux backs only whole aligned
// 2 MB ranges with huge pages), or null.
char* map_aligned(std::size_t size) {
  void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = round_up(start, kHugePage);
  if (aligned > start) munmap(raw, aligned - start);
  const std::uintptr_t end = start + size + kHugePage;
  if (end > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
#if defined(MADV_HUGEPAGE)
  madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);  // advice: contents never change
#endif
  return reinterpret_cast<char*>(aligned);
}

}  // namespace

std::shared_ptr<RecordArena> RecordArena::create(std::size_t bytes) {
  if (bytes < kMinBytes) return nullptr;
  std::size_t size = round_up(bytes, kHugePage);
  char* base = nullptr;
  char* stale = nullptr;
  std::size_t stale_size = 0;
  {
    auto& cache = mapping_cache();
    const std::lock_guard lock(cache.mutex);
    if (cache.base && cache.size >= size) {
      base = cache.base;
      size = cache.size;
    } else {
      stale = cache.base;
      stale_size = cache.size;
    }
    cache.base = nullptr;
    cache.size = 0;
  }
  if (stale) munmap(stale, stale_size);
  // The pages come on first write: room reserved for queries that never come is address space.
  if (!base) base = map_aligned(size);
  if (!base) return nullptr;
  return std::shared_ptr<RecordArena>(new RecordArena(base, size));
}

RecordArena::~RecordArena() {
  if (size_ > kMaxCachedBytes) {
    munmap(base_, size_);
    return;
  }
  release_pages(reinterpret_cast<std::uintptr_t>(base_), reinterpret_cast<std::uintptr_t>(base_) + size_);
  char* stale = nullptr;
  std::size_t stale_size = 0;
  {
    auto& cache = mapping_cache();
    const std::lock_guard lock(cache.mutex);
    stale = cache.base;
    stale_size = cache.size;
    cache.base = base_;
    cache.size = size_;
  }
  if (stale) munmap(stale, stale_size);
}

void RecordArena::give_back(void* p, std::size_t bytes) {
  // Only the whole 2 MB pages inside the block: releasing part of one would split it into 4 kB
  // pages for the run that reuses the mapping. The addresses stay reserved, so nothing else is
  // mapped inside the arena, where owns() would claim it.
  release_pages(round_up(reinterpret_cast<std::uintptr_t>(p), kHugePage),
                round_down(reinterpret_cast<std::uintptr_t>(p) + bytes, kHugePage));
}

#else

std::shared_ptr<RecordArena> RecordArena::create(std::size_t) { return nullptr; }  // heap blocks
RecordArena::~RecordArena() = default;
void RecordArena::give_back(void*, std::size_t) {}

#endif

void* RecordArena::take(std::size_t bytes) {
  // Each block starts at its own offset within a page (seven cache lines further each time):
  // columns starting at the same offset would put row i of every column in the same cache set,
  // and a load after a store 4 kB away waits for it (4K aliasing).
  const std::size_t at = round_up(used_, kPage) + (blocks_ * 7 * 64) % kPage;
  if (bytes > size_ || at > size_ - bytes) return nullptr;
  used_ = at + bytes;
  ++blocks_;
  return base_ + at;
}

}  // namespace servelab::cluster
