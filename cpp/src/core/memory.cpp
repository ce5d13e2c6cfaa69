#include "servelab/core/memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>
#include <string>

#include "servelab/core/errors.hpp"

namespace servelab::core {

namespace {

// MemAvailable counts what the kernel can reclaim (page cache) too, unlike free pages.
std::optional<std::uint64_t> meminfo_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key, unit;
    std::uint64_t kb = 0;
    if (fields >> key >> kb >> unit && key == "MemAvailable:" && unit == "kB") return kb * 1024;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> free_physical_pages() {
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

}  // namespace

std::optional<std::uint64_t> available_memory_bytes() {
  if (const auto bytes = meminfo_available()) return bytes;
  return free_physical_pages();
}

std::string format_bytes(double bytes) {
  static constexpr std::array<const char*, 7> kUnits{"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  std::size_t unit = 0;
  while (bytes >= 1000 && unit + 1 < kUnits.size()) {
    bytes /= 1000;
    ++unit;
  }
  char text[48];
  std::snprintf(text, sizeof text, "%.3g %s", bytes, kUnits[unit]);
  return text;
}

void check_fits_memory(double items, double bytes_per_item, std::string_view given, std::string_view field,
                       std::string_view what) {
  const double need = items * bytes_per_item;
  const auto available = available_memory_bytes();
  if (!available || !(need > static_cast<double>(*available))) return;
  throw MemoryError(str(given, ": ", what, " would need about ", format_bytes(need), " (", bytes_per_item,
                        " bytes each), more than the ", format_bytes(static_cast<double>(*available)),
                        " of memory available: lower ", field));
}

void prefer_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = 2u << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t end = begin + bytes;
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1), last = end & ~(kHuge - 1);
  if (last <= first) return;
  void* start = reinterpret_cast<void*>(first);
  if (madvise(start, last - first, MADV_HUGEPAGE) == 0) madvise(start, last - first, MADV_DONTNEED);
#else
  (void)data;
  (void)bytes;
#endif
}

void* allocate_for_random_reads(std::size_t bytes) {
  constexpr std::size_t kLine = 64, kHuge = std::size_t{2} << 20;
  const std::size_t align = bytes >= kHuge / 2 ? kHuge : kLine;
  if (bytes > SIZE_MAX - align) throw std::bad_alloc();
  const std::size_t size = std::max<std::size_t>(align, (bytes + align - 1) / align * align);
  void* data = std::aligned_alloc(align, size);
  if (data == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Before the first touch, so the pages fault in as 2 MB ones (advice only: failure is harmless).
  if (align == kHuge) madvise(data, size, MADV_HUGEPAGE);
#endif
  return data;
}

void free_for_random_reads(void* data) noexcept { std::free(data); }

}  // namespace servelab::core
