#include "servelab/systems/infaas/profile_variants.hpp"

#include <algorithm>
#include <cmath>

namespace servelab::infaas {

std::vector<Variant> variants_from_profile(const profile::Profile& profile, profile::Statistic statistic,
                                           const std::vector<std::string>& hardware) {
  std::vector<Variant> out;
  for (const auto& [hw, model] : profile.pairs()) {
    const std::string& hw_name = profile.hardware()[hw];
    if (!hardware.empty() && std::find(hardware.begin(), hardware.end(), hw_name) == hardware.end()) continue;
    Variant v;
    v.architecture = profile.models()[model];
    v.name = v.architecture + "@" + hw_name;
    v.task = kProfileTask;
    v.framework = "profile";
    v.hardware = hw_name;
    const double acc = profile.accuracy(model);
    v.accuracy = std::isnan(acc) ? 0.0 : acc;
    const auto table = profile.decision_table(hw, model, statistic);  // indexed by batch; [0] unused
    for (std::size_t b = 1; b < table.size(); ++b) v.latency_ms.push_back(static_cast<double>(table[b]) / 1e6);
    v.batch_opt = static_cast<std::int32_t>(v.latency_ms.size());
    v.load_s = profile.load_time(hw, model).value_or(0.0);
    v.memory_mb = profile.memory_mb(hw, model).value_or(0.0);
    v.cost_per_s = profile.has_price(hw) ? profile.price(hw) / 3600.0 : 0.0;
    if (v.batch_opt > 0) out.push_back(std::move(v));
  }
  return out;
}

}  // namespace servelab::infaas
