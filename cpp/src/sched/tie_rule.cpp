#include "servelab/sched/tie_rule.hpp"

#include <boost/random/uniform_int_distribution.hpp>

#include "servelab/core/errors.hpp"

namespace servelab::sched {

TieRule parse_tie_rule(std::string_view name, std::string_view field) {
  if (name == "lowest_id") return TieRule::LowestId;
  if (name == "round_robin") return TieRule::RoundRobin;
  if (name == "lru") return TieRule::LeastRecentlyUsed;
  if (name == "random") return TieRule::Random;
  throw ValueError(str(field, "='", name, "' is not a tie rule (", kTieRuleNames, ")"));
}

std::string_view tie_rule_name(TieRule rule) {
  switch (rule) {
    case TieRule::LowestId:
      return "lowest_id";
    case TieRule::RoundRobin:
      return "round_robin";
    case TieRule::LeastRecentlyUsed:
      return "lru";
    case TieRule::Random:
      return "random";
  }
  return "unknown";
}

std::int64_t IdlePicker::draw(std::int64_t n) {
  return boost::random::uniform_int_distribution<std::int64_t>(0, n - 1)(rng_.engine());
}

std::uint64_t IdlePicker::key(const ClusterView& view, WorkerId w) const {
  switch (rule_) {
    case TieRule::RoundRobin: {  // distance after the cursor, cyclically
      const auto n = static_cast<std::uint64_t>(view.num_workers());
      const auto c = static_cast<std::uint64_t>(cursor_) % (n ? n : 1);
      const auto x = static_cast<std::uint64_t>(w);
      return x >= c ? x - c : x + n - c;
    }
    case TieRule::LeastRecentlyUsed:
      return view.idle_since(w);
    default:
      return static_cast<std::uint64_t>(w);
  }
}

WorkerId IdlePicker::pick_any(const ClusterView& view, std::span<const HardwareId> group) {
  WorkerId best = -1;
  std::uint64_t best_key = 0;
  if (rule_ == TieRule::Random) {
    std::int64_t total = 0;
    for (const HardwareId h : group) total += view.idle_count(h);
    if (total == 0) return -1;
    std::int64_t i = draw(total);
    for (const HardwareId h : group) {
      const std::int32_t n = view.idle_count(h);
      if (i < n) return view.nth_idle(h, static_cast<std::int32_t>(i));
      i -= n;
    }
    return -1;
  }
  for (const HardwareId h : group) {
    WorkerId w = -1;
    switch (rule_) {
      case TieRule::LowestId:
        w = view.lowest_idle(h, 0);
        break;
      case TieRule::RoundRobin:
        w = view.lowest_idle(h, cursor_);
        if (w < 0) w = view.lowest_idle(h, 0);
        break;
      case TieRule::LeastRecentlyUsed:
        w = view.longest_idle(h);
        break;
      case TieRule::Random:
        break;
    }
    if (w < 0) continue;
    const std::uint64_t k = key(view, w);
    if (best < 0 || k < best_key) best = w, best_key = k;
  }
  return best;
}

}  // namespace servelab::sched
