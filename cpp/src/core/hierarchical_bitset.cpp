#include "servelab/core/hierarchical_bitset.hpp"

namespace servelab::core {

void HierarchicalBitset::resize(std::size_t n) {
  std::size_t words = (n + 63) / 64;
  for (std::size_t level = 0;; ++level) {
    if (level == levels_.size()) {
      // A new top level: one bit per non-empty word of the old top.
      levels_.emplace_back();
      if (level > 0) {
        const auto& below = levels_[level - 1];
        levels_[level].assign((below.size() + 63) / 64, 0);
        for (std::size_t j = 0; j < below.size(); ++j) {
          if (below[j]) levels_[level][j >> 6] |= std::uint64_t{1} << (j & 63);
        }
      }
    }
    if (levels_[level].size() < words) levels_[level].resize(words, 0);
    if (words <= 1) break;
    words = (words + 63) / 64;
  }
}

void HierarchicalBitset::insert_above(std::size_t i) {
  for (std::size_t level = 1; level < levels_.size(); ++level) {
    auto& words = levels_[level];
    const bool was_empty = words[i >> 6] == 0;
    words[i >> 6] |= std::uint64_t{1} << (i & 63);
    if (!was_empty) return;
    i >>= 6;
  }
}

void HierarchicalBitset::erase_above(std::size_t i) {
  for (std::size_t level = 1; level < levels_.size(); ++level) {
    auto& words = levels_[level];
    words[i >> 6] &= ~(std::uint64_t{1} << (i & 63));
    if (words[i >> 6] != 0) return;
    i >>= 6;
  }
}

std::int64_t HierarchicalBitset::find_at(std::size_t level, std::size_t from) const {
  if (level >= levels_.size()) return -1;
  const auto& words = levels_[level];
  std::size_t wi = from >> 6;
  if (wi >= words.size()) return -1;
  const std::uint64_t w = words[wi] & (~std::uint64_t{0} << (from & 63));
  if (w) return static_cast<std::int64_t>((wi << 6) + std::countr_zero(w));
  // The next non-empty word of this level, found one level up.
  const std::int64_t up = find_at(level + 1, wi + 1);
  if (up < 0) return -1;
  return static_cast<std::int64_t>((static_cast<std::size_t>(up) << 6) + std::countr_zero(words[up]));
}

}  // namespace servelab::core
