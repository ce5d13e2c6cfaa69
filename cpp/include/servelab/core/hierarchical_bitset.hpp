// A set of small integers with find-next in O(log64 n): the idle workers' index keeps one, and a
// cluster view hands it to its base class so that policies search it without a virtual call.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace servelab::core {

// Level 0 holds one bit per member, each level above one bit per non-empty word of the level below.
class HierarchicalBitset {
 public:
  void resize(std::size_t n);  // new positions are absent
  // Positions 0..capacity()-1 may be inserted (resize() makes room).
  std::size_t capacity() const { return levels_.empty() ? 0 : levels_[0].size() * 64; }
  bool contains(std::size_t i) const {
    return !levels_.empty() && (i >> 6) < levels_[0].size() && ((levels_[0][i >> 6] >> (i & 63)) & 1);
  }
  // Inline at the first level: the levels above change only when a word empties or fills up.
  void insert(std::size_t i) {
    std::uint64_t& word = levels_[0][i >> 6];
    const bool was_empty = word == 0;
    word |= std::uint64_t{1} << (i & 63);
    if (was_empty) insert_above(i >> 6);
  }
  void erase(std::size_t i) {
    std::uint64_t& word = levels_[0][i >> 6];
    word &= ~(std::uint64_t{1} << (i & 63));
    if (word == 0) erase_above(i >> 6);
  }
  // The smallest member >= from, or -1.
  std::int64_t find_next(std::size_t from) const {
    // Inline when `from`'s own word or the next one has a member (the common cases: with the
    // lowest ids kept busy, the first idle worker is often just past the first full word),
    // else up the levels.
    if (!levels_.empty()) {
      const auto& words = levels_[0];
      const std::size_t wi = from >> 6;
      if (wi < words.size()) {
        const std::uint64_t w = words[wi] & (~std::uint64_t{0} << (from & 63));
        if (w) return static_cast<std::int64_t>((wi << 6) + static_cast<std::size_t>(std::countr_zero(w)));
        if (wi + 1 < words.size() && words[wi + 1]) {
          return static_cast<std::int64_t>(((wi + 1) << 6) + static_cast<std::size_t>(std::countr_zero(words[wi + 1])));
        }
      }
    }
    return find_at(0, from);
  }

 private:
  std::int64_t find_at(std::size_t level, std::size_t from) const;
  // insert() / erase() from level 1 up; `i` is the bit at level 1 (the word index at level 0).
  void insert_above(std::size_t i);
  void erase_above(std::size_t i);
  std::vector<std::vector<std::uint64_t>> levels_;
};

}  // namespace servelab::core
