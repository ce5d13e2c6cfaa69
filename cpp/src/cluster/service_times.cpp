#include "servelab/cluster/service_times.hpp"

#include <string>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::cluster {

ServiceTimes::ServiceTimes(std::shared_ptr<const profile::Profile> profile, std::optional<profile::Statistic> fixed)
    : profile_(std::move(profile)), fixed_(fixed) {
  if (!profile_) throw ValueError("ServiceTimes: profile is null");
  n_models_ = profile_->models().size();
  tables_.resize(profile_->hardware().size() * n_models_);
  sampling_.resize(tables_.size());
}

Nanos ServiceTimes::draw(std::int32_t hardware, std::int32_t model, std::int64_t items, Rng& rng) {
  if (!fixed_) return profile_->sample_ns(hardware, model, items, rng);
  return fixed_time(hardware, model, items);
}

Nanos ServiceTimes::fixed_time_slow(std::int32_t hardware, std::int32_t model, std::int64_t items) {
  const auto& profile = *profile_;
  auto& table = tables_[static_cast<std::size_t>(hardware) * profile.models().size() + model];
  if (table.empty()) table = profile.decision_table(hardware, model, *fixed_);  // entry b = batch b
  const auto max_batch = static_cast<std::int64_t>(table.size()) - 1;
  if (items < 1 || items > max_batch) {
    throw ValueError(str("service time: batch=", items, " is outside the profile of model '", profile.models()[model],
                         "' on '", profile.hardware()[hardware], "' (1..", max_batch, ")"));
  }
  return table[items];
}

Nanos ServiceTimes::sampled_at_slow(std::int32_t hardware, std::int32_t model, std::int64_t items, double u) {
  // Out of range, or the pair's first draw: the profile's own call checks and names what is wrong.
  const Nanos t = profile_->sample_ns_at(hardware, model, items, u);
  auto& table = sampling_[static_cast<std::size_t>(hardware) * n_models_ + static_cast<std::size_t>(model)];
  if (table.empty()) table = profile_->sampling_table(hardware, model);
  return t;
}

Rng service_parent_stream(std::uint64_t seed) { return Rng(seed, "service"); }

Rng service_stream(const Rng& parent, std::int32_t worker) { return parent.derive("worker" + std::to_string(worker)); }

std::vector<Rng> service_streams(const Rng& parent, std::int32_t first, std::int32_t count) {
  // The names without str()'s string stream: at 10,000 workers it took a tenth of the seeding.
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(count));
  for (std::int32_t w = first; w < first + count; ++w) names.push_back("worker" + std::to_string(w));
  return parent.derive_all(names);
}

Rng service_stream(std::uint64_t seed, std::int32_t worker) {
  return service_stream(service_parent_stream(seed), worker);
}

}  // namespace servelab::cluster
