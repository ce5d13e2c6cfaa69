// The idle workers, grouped by hardware type and all together, kept so that a policy picks one
// by a tie rule without scanning them: the lowest idle id at or after a point (a hierarchical
// bitset, O(log64 W)), the worker idle the longest (an intrusive list, O(1)) or the i-th idle
// worker (a dense list, O(1)). ClusterState updates it on every status change.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "servelab/core/hierarchical_bitset.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::cluster {

using core::HierarchicalBitset;

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
  // Every idle worker as a bitset (null before the first worker). It moves when a worker of a new
  // hardware type is added: ask again after add_worker.
  const HierarchicalBitset* all_bits() const { return groups_.empty() ? nullptr : &groups_[0].bits; }
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
