// Which idle worker gets a query when several would do equally well.
//   lowest_id:    the lowest worker id (deterministic, the historical default; it loads low ids most)
//   round_robin:  the first idle id after the one chosen last, cyclically (spreads work evenly)
//   lru:          the worker idle the longest (least recently used; spreads work and idle time)
//   random:       uniformly among them, from the run seed's stream "scheduler/<policy>"
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "servelab/core/rng.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::sched {

enum class TieRule : std::uint8_t { LowestId, RoundRobin, LeastRecentlyUsed, Random };

inline constexpr std::string_view kTieRuleNames = "lowest_id, round_robin, lru, random";
// ValueError naming `field` and the value for an unknown name.
TieRule parse_tie_rule(std::string_view name, std::string_view field);
std::string_view tie_rule_name(TieRule rule);

// Picks idle workers by a tie rule among groups of hardware types that rank equally, through the
// view's idle index (no scan of the idle workers).
class IdlePicker {
 public:
  IdlePicker(TieRule rule, Rng rng) : rule_(rule), rng_(std::move(rng)) {}
  TieRule rule() const { return rule_; }
  // The idle worker of the hardware types in `group` (ClusterView::kAnyHardware: any) chosen by
  // the rule, or -1 when none is idle.
  WorkerId pick(const ClusterView& view, std::span<const HardwareId> group) {
    // The common case (fcfs's default, one class) inline: what pick_any computes, in one call.
    if (rule_ == TieRule::LowestId && group.size() == 1) return view.lowest_idle(group.front(), 0);
    return pick_any(view, group);
  }
  // The rule's order among idle workers: smaller goes first (not used for random).
  std::uint64_t key(const ClusterView& view, WorkerId w) const;
  // Uniform in [0, n) from the policy's stream.
  std::int64_t draw(std::int64_t n);
  // Tells the rule which worker got the work (round robin moves on from it).
  void chosen(WorkerId w) { cursor_ = w + 1; }

 private:
  WorkerId pick_any(const ClusterView& view, std::span<const HardwareId> group);

  TieRule rule_;
  Rng rng_;
  WorkerId cursor_ = 0;
};

}  // namespace servelab::sched
