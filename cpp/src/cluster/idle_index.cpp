#include "servelab/cluster/idle_index.hpp"

#include <algorithm>
#include <bit>

namespace servelab::cluster {

using sched::HardwareId;
using sched::WorkerId;

void HierarchicalBitset::resize(std::size_t n) {
  size_ = n;
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

void IdleIndex::add_worker(WorkerId worker, HardwareId hardware) {
  const auto n = static_cast<std::size_t>(worker) + 1;
  while (static_cast<HardwareId>(groups_.size()) < hardware + 2) {
    groups_.emplace_back();
    groups_.back().bits.resize(n);
  }
  for (auto& g : groups_) {
    g.bits.resize(n);
    g.dense.resize(n);  // room for every worker to be idle
  }
  slots_.resize(n, Slot{-1, -1, {-1, -1}, {-1, -1}, hardware, 0});
  slots_[worker].hardware = hardware;
  if (single_ == -2) single_ = hardware;
  if (!split_ && hardware != single_) split();
}

std::vector<WorkerId> IdleIndex::idle_in_order() const {
  const auto idle = members(kAll);
  std::vector<WorkerId> order(idle.begin(), idle.end());
  std::sort(order.begin(), order.end(), [&](WorkerId a, WorkerId b) { return slots_[a].since < slots_[b].since; });
  return order;
}

void IdleIndex::split() {
  split_ = true;
  // Fill the hardware groups longest idle first, so each keeps the order in which its workers
  // became idle (their dense lists show that order).
  for (const WorkerId w : idle_in_order()) add_to_hardware_group(w);
}

void IdleIndex::start_lists() const {
  lists_ = true;
  // Each list holds its group's idle workers in the order they became idle: ascending `since`,
  // which set_idle() increases for every worker that becomes idle.
  for (const WorkerId w : idle_in_order()) {
    link(groups_[0], 0, w);
    if (split_) link(groups_[slots_[w].hardware + 1], 1, w);
  }
}

void IdleIndex::add_to_hardware_group(WorkerId w) {
  Group& hw = groups_[slots_[w].hardware + 1];
  slots_[w].hw_pos = hw.count;
  hw.dense[static_cast<std::size_t>(hw.count++)] = w;
  hw.bits.insert(w);
  if (lists_) link(hw, 1, w);
}

void IdleIndex::link(const Group& g, int slot, WorkerId w) const {
  slots_[w].prev[slot] = g.tail;
  slots_[w].next[slot] = -1;
  if (g.tail >= 0) {
    slots_[g.tail].next[slot] = w;
  } else {
    g.head = w;
  }
  g.tail = w;
}

void IdleIndex::unlink(const Group& g, int slot, WorkerId w) const {
  const WorkerId p = slots_[w].prev[slot], n = slots_[w].next[slot];
  (p >= 0 ? slots_[p].next[slot] : g.head) = n;
  (n >= 0 ? slots_[n].prev[slot] : g.tail) = p;
}

void IdleIndex::set_idle_rest(WorkerId w) {
  if (lists_) link(groups_[0], 0, w);
  if (split_) add_to_hardware_group(w);
}

void IdleIndex::set_not_idle_rest(WorkerId w) {
  if (lists_) unlink(groups_[0], 0, w);
  if (!split_) return;
  Group& hw = groups_[slots_[w].hardware + 1];
  const WorkerId hw_last = hw.dense[static_cast<std::size_t>(--hw.count)];
  hw.dense[static_cast<std::size_t>(slots_[w].hw_pos)] = hw_last;
  slots_[hw_last].hw_pos = slots_[w].hw_pos;
  slots_[w].hw_pos = -1;
  hw.bits.erase(w);
  if (lists_) unlink(hw, 1, w);
}

WorkerId IdleIndex::longest_idle(HardwareId g) const {
  if (!lists_) start_lists();
  const Group* group_ptr = group(g);
  return group_ptr ? group_ptr->head : -1;
}

}  // namespace servelab::cluster
