#include "servelab/systems/hera/node.hpp"

#include <cmath>

#include "servelab/core/errors.hpp"

namespace servelab::hera {

namespace {
void positive(double value, const char* field, const std::string& node) {
  if (!(value > 0) || !std::isfinite(value))
    throw ValueError(str("node '", node, "': ", field, "=", value, " must be a positive finite number"));
}
}  // namespace

void NodeSpec::validate() const {
  if (cores < 1 || cores > 1024) throw ValueError(str("node '", name, "': cores=", cores, " must be in 1..1024"));
  if (llc_ways < 1 || llc_ways > 64)
    throw ValueError(str("node '", name, "': llc_ways=", llc_ways, " must be in 1..64"));
  positive(llc_mb, "llc_mb", name);
  positive(mem_bandwidth_gbs, "mem_bandwidth_gbs", name);
  positive(mem_capacity_gb, "mem_capacity_gb", name);
  positive(core_bandwidth_gbs, "core_bandwidth_gbs", name);
  positive(bandwidth_knee, "bandwidth_knee", name);
  // One core alone cannot draw more than the whole socket.
  if (core_bandwidth_gbs > mem_bandwidth_gbs)
    throw ValueError(str("node '", name, "': core_bandwidth_gbs=", core_bandwidth_gbs,
                         " exceeds mem_bandwidth_gbs=", mem_bandwidth_gbs));
}

NodeSpec baseline_node() { return NodeSpec{}; }

}  // namespace servelab::hera
