// The idle workers, grouped by hardware type and all together, kept so that a policy picks one
// by a tie rule without scanning them: the lowest idle id at or after a point (a hierarchical
// bitset, O(log64 W)), the worker idle the longest (an intrusive list, O(1)) or the i-th idle
// worker (a dense list, O(1)). ClusterState updates it on every status change.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "servelab/sched/scheduler.hpp"

namespace servelab::cluster {

// A set of small integers with find-next in O(log64 n): level 0 holds one bit per member, each
// level above one bit per non-empty word of the level below.
class HierarchicalBitset {
 public:
  void resize(std::size_t n);  // new positions are absent
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
  std::size_t size_ = 0;
};

class IdleIndex {
 public:
  static constexpr sched::HardwareId kAll = -1;

  // A new worker, not idle yet.
  void add_worker(sched::WorkerId worker, sched::HardwareId hardware);
  // Inline: once per batch start and end. The hardware groups and the longest-idle lists, when
  // kept, are updated out of line.
  [[gnu::always_inline]] void set_idle(sched::WorkerId w) {
    Slot& s = slots_[w];
    if (s.pos >= 0) return;
    s.since = ++clock_;
    Group& all = groups_[0];
    s.pos = all.count;
    all.dense[static_cast<std::size_t>(all.count++)] = w;
    all.bits.insert(static_cast<std::size_t>(w));
    if (lists_ || split_) [[unlikely]]
      set_idle_rest(w);
  }
  [[gnu::always_inline]] void set_not_idle(sched::WorkerId w) {
    Slot& s = slots_[w];
    if (s.pos < 0) return;
    Group& all = groups_[0];
    // Swap-with-last removal: the order idle_workers() shows is the one it always had.
    const sched::WorkerId last = all.dense[static_cast<std::size_t>(--all.count)];
    all.dense[static_cast<std::size_t>(s.pos)] = last;
    slots_[last].pos = s.pos;
    s.pos = -1;
    all.bits.erase(static_cast<std::size_t>(w));
    if (lists_ || split_) [[unlikely]]
      set_not_idle_rest(w);
  }
  bool idle(sched::WorkerId worker) const { return slots_[worker].pos >= 0; }

  // Every idle worker (kAll) or those of one hardware type, in no fixed order.
  std::span<const sched::WorkerId> members(sched::HardwareId g) const {
    const Group* group_ptr = group(g);
    if (!group_ptr) return {};
    return {group_ptr->dense.data(), static_cast<std::size_t>(group_ptr->count)};
  }
  // The lowest idle id >= from in the group, or -1.
  sched::WorkerId lowest_from(sched::HardwareId g, sched::WorkerId from) const {
    const Group* group_ptr = group(g);
    if (!group_ptr || from < 0) return -1;
    return static_cast<sched::WorkerId>(group_ptr->bits.find_next(static_cast<std::size_t>(from)));
  }
  // The group's worker idle the longest, or -1. The first call builds the lists (O(W log W)).
  sched::WorkerId longest_idle(sched::HardwareId group) const;
  // Increases each time a worker becomes idle: smaller = idle for longer.
  std::uint64_t idle_since(sched::WorkerId worker) const { return slots_[worker].since; }

 private:
  struct Group {
    HierarchicalBitset bits;
    // The idle workers in the first `count` places; sized for every worker, so becoming idle
    // is a store (no growth check on the hot path).
    std::vector<sched::WorkerId> dense;
    std::int32_t count = 0;
    // The list of idle workers, longest idle first; kept once longest_idle() has been asked.
    mutable sched::WorkerId head = -1, tail = -1;
  };
  const Group* group(sched::HardwareId g) const {
    if (g == kAll) return groups_.empty() ? nullptr : &groups_[0];  // first: policies without a preference
    if (!split_ && g == single_) return &groups_[0];                // one hardware type: its group is everyone
    return g >= kAll && g + 1 < static_cast<sched::HardwareId>(groups_.size()) ? &groups_[g + 1] : nullptr;
  }
  void add_to_hardware_group(sched::WorkerId w);
  // What set_idle / set_not_idle do beyond the all-group's dense list and bits.
  void set_idle_rest(sched::WorkerId w);
  void set_not_idle_rest(sched::WorkerId w);
  void split();
  void link(const Group& g, int slot, sched::WorkerId w) const;
  void unlink(const Group& g, int slot, sched::WorkerId w) const;
  // The idle workers of the all-group in the order they became idle (ascending `since`).
  std::vector<sched::WorkerId> idle_in_order() const;
  // Builds the longest-idle lists from the idle-since counters (the order they would have had),
  // and keeps them from then on.
  void start_lists() const;

  // A worker's entries, together: a status change touches one cache line, not six arrays.
  struct Slot {
    std::int32_t pos = -1, hw_pos = -1;          // place in the dense lists, -1 if not idle
    mutable sched::WorkerId prev[2] = {-1, -1};  // [0] the all-list, [1] its hardware's list
    mutable sched::WorkerId next[2] = {-1, -1};
    sched::HardwareId hardware = 0;
    std::uint64_t since = 0;
  };
  std::vector<Group> groups_;  // [0]: all workers, [h + 1]: hardware h
  std::vector<Slot> slots_;    // by worker
  std::uint64_t clock_ = 0;
  // While every worker has the same hardware (`single_`), the hardware groups are not kept: the
  // all-group answers for them, which halves the cost of a status change. A second type splits.
  bool split_ = false;
  sched::HardwareId single_ = -2;
  // Whether the longest-idle lists are kept. Most policies never ask for the longest idle worker:
  // until one does, a status change skips the list's links (two other workers' slots).
  mutable bool lists_ = false;
};

}  // namespace servelab::cluster
