#include "servelab/cluster/idle_index.hpp"

#include <algorithm>
#include <bit>

namespace servelab::cluster {

using sched::HardwareId;
using sched::WorkerId;

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
