// Profile: names, prices, accuracies and per-(hardware, model) latency curves.
#include "servelab/profile/profile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "servelab/core/memory.hpp"

namespace servelab::profile {

namespace {

std::string known_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += str(out.empty() ? "" : ", ", "'", name, "'");
  return out.empty() ? "none" : out;
}

std::int32_t find(const std::vector<std::string>& names, std::string_view name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<std::int32_t>(it - names.begin());
}

std::int32_t intern(std::vector<std::string>& names, std::string_view name, const char* what) {
  if (name.empty()) throw ValueError(str(what, "='' must be a non-empty name"));
  const auto index = find(names, name);
  if (index >= 0) return index;
  names.emplace_back(name);
  return static_cast<std::int32_t>(names.size() - 1);
}

// The statistic (or draw) `value(d)` at `batch`, linear between the measured batch sizes around it
// and the smallest measured batch's value below it. One formula for latency() and decision_table()
// so both give bit-identical numbers.
// `hi` is the first measured batch >= batch.
using Curve = std::map<std::int64_t, LatencyDistribution>;
template <typename Value>
double interpolate(const Curve& curve, Curve::const_iterator hi, std::int64_t batch, Value&& value) {
  if (hi->first == batch || hi == curve.begin()) return value(hi->second);
  const auto lo = std::prev(hi);
  const double v0 = value(lo->second);
  const double v1 = value(hi->second);
  return v0 + (v1 - v0) * (static_cast<double>(batch - lo->first) / static_cast<double>(hi->first - lo->first));
}

}  // namespace

std::int32_t Profile::add_hardware(std::string_view name) {
  const auto index = intern(hardware_, name, "hardware");
  price_.resize(hardware_.size());
  return index;
}

std::int32_t Profile::add_model(std::string_view name) {
  const auto index = intern(models_, name, "model");
  accuracy_.resize(models_.size(), std::numeric_limits<double>::quiet_NaN());
  return index;
}

void Profile::set_price(std::string_view hardware, double dollars_per_hour) {
  if (!(std::isfinite(dollars_per_hour) && dollars_per_hour >= 0)) {
    throw ValueError(str("price_per_hour=", dollars_per_hour, " for hardware '", hardware, "' must be >= 0 $/h"));
  }
  const auto index = add_hardware(hardware);
  price_[index] = dollars_per_hour;
}

void Profile::set_accuracy(std::string_view model, double accuracy) {
  if (!(accuracy >= 0 && accuracy <= 1)) {
    throw ValueError(str("accuracy=", accuracy, " for model '", model, "' must be in [0, 1]"));
  }
  const auto index = add_model(model);
  accuracy_[index] = accuracy;
}

void Profile::set_latency(std::string_view hardware, std::string_view model, std::int64_t batch,
                          LatencyDistribution latency) {
  if (batch < 1) throw ValueError(str("batch=", batch, " must be >= 1"));
  const auto h = add_hardware(hardware);
  const auto m = add_model(model);
  pairs_[{h, m}].latency.insert_or_assign(batch, std::move(latency));
}

void Profile::set_memory_mb(std::string_view hardware, std::string_view model, double mb) {
  if (!(std::isfinite(mb) && mb >= 0)) {
    throw ValueError(str("memory_mb=", mb, " for hardware '", hardware, "' model '", model, "' must be >= 0"));
  }
  const auto h = add_hardware(hardware);
  pairs_[{h, add_model(model)}].memory_mb = mb;
}

void Profile::set_load_time(std::string_view hardware, std::string_view model, double seconds) {
  if (!(std::isfinite(seconds) && seconds >= 0)) {
    throw ValueError(
        str("load_time_s=", seconds, " for hardware '", hardware, "' model '", model, "' must be >= 0 seconds"));
  }
  const auto h = add_hardware(hardware);
  pairs_[{h, add_model(model)}].load_time = seconds;
}

std::int32_t Profile::hardware_index(std::string_view name) const {
  const auto index = find(hardware_, name);
  if (index < 0)
    throw KeyError(str("hardware '", name, "' is not in the profile (known: ", known_list(hardware_), ")"));
  return index;
}

std::int32_t Profile::model_index(std::string_view name) const {
  const auto index = find(models_, name);
  if (index < 0) throw KeyError(str("model '", name, "' is not in the profile (known: ", known_list(models_), ")"));
  return index;
}

const std::string& Profile::hardware_name(std::int32_t hardware) const {
  if (hardware < 0 || static_cast<std::size_t>(hardware) >= hardware_.size()) {
    throw KeyError(str("hardware index ", hardware, " is out of range (", hardware_.size(),
                       " hardware types: ", known_list(hardware_), ")"));
  }
  return hardware_[hardware];
}

const std::string& Profile::model_name(std::int32_t model) const {
  if (model < 0 || static_cast<std::size_t>(model) >= models_.size()) {
    throw KeyError(
        str("model index ", model, " is out of range (", models_.size(), " models: ", known_list(models_), ")"));
  }
  return models_[model];
}

double Profile::price(std::int32_t hardware) const {
  const auto& name = hardware_name(hardware);
  if (!price_[hardware]) throw KeyError(str("hardware '", name, "' has no price set"));
  return *price_[hardware];
}

bool Profile::has_price(std::int32_t hardware) const {
  hardware_name(hardware);
  return price_[hardware].has_value();
}

double Profile::accuracy(std::int32_t model) const {
  model_name(model);
  return accuracy_[model];
}

std::optional<double> Profile::memory_mb(std::int32_t hardware, std::int32_t model) const {
  hardware_name(hardware);
  model_name(model);
  const auto it = pairs_.find({hardware, model});
  return it == pairs_.end() ? std::nullopt : it->second.memory_mb;
}

std::optional<double> Profile::load_time(std::int32_t hardware, std::int32_t model) const {
  hardware_name(hardware);
  model_name(model);
  const auto it = pairs_.find({hardware, model});
  return it == pairs_.end() ? std::nullopt : it->second.load_time;
}

bool Profile::has_latency(std::int32_t hardware, std::int32_t model) const {
  hardware_name(hardware);
  model_name(model);
  const auto it = pairs_.find({hardware, model});
  return it != pairs_.end() && !it->second.latency.empty();
}

std::vector<std::int64_t> Profile::batches(std::int32_t hardware, std::int32_t model) const {
  std::vector<std::int64_t> out;
  if (!has_latency(hardware, model)) return out;
  for (const auto& [batch, _] : pairs_.at({hardware, model}).latency) out.push_back(batch);
  return out;
}

std::int64_t Profile::max_batch(std::int32_t hardware, std::int32_t model) const {
  if (!has_latency(hardware, model)) return 0;
  return pairs_.at({hardware, model}).latency.rbegin()->first;
}

const std::map<std::int64_t, LatencyDistribution>& Profile::curve(std::int32_t hardware, std::int32_t model,
                                                                  std::int64_t batch) const {
  const auto& h = hardware_name(hardware);
  const auto& m = model_name(model);
  const auto it = pairs_.find({hardware, model});
  if (it == pairs_.end() || it->second.latency.empty()) {
    throw ValueError(str("no latency profiled for hardware '", h, "' model '", m, "' (batch=", batch, ")"));
  }
  const auto& curve = it->second.latency;
  if (batch < 1) throw ValueError(str("batch=", batch, " must be >= 1 (hardware '", h, "' model '", m, "')"));
  const auto max = curve.rbegin()->first;
  if (batch > max) {
    throw ValueError(
        str("batch=", batch, " exceeds the largest profiled batch ", max, " for hardware '", h, "' model '", m, "'"));
  }
  return curve;
}

const LatencyDistribution& Profile::latency_at(std::int32_t hardware, std::int32_t model, std::int64_t batch) const {
  const auto& c = curve(hardware, model, batch);
  const auto it = c.find(batch);
  if (it == c.end()) {
    throw ValueError(str("batch=", batch, " was not measured for hardware '", hardware_[hardware], "' model '",
                         models_[model], "' (latency() interpolates between measured batches)"));
  }
  return it->second;
}

double Profile::latency(std::int32_t hardware, std::int32_t model, std::int64_t batch, Statistic statistic) const {
  const auto& c = curve(hardware, model, batch);
  return interpolate(c, c.lower_bound(batch), batch,
                     [statistic](const LatencyDistribution& d) { return d.statistic(statistic); });
}

namespace {

// interpolate()'s rule for draws, resolved once: `hi` is the first measured batch >= batch.
Profile::SamplingPoint sampling_point(const Curve& curve, Curve::const_iterator hi, std::int64_t batch) {
  if (hi->first == batch || hi == curve.begin()) return {nullptr, &hi->second, 0.0};
  const auto lo = std::prev(hi);
  return {&lo->second, &hi->second,
          static_cast<double>(batch - lo->first) / static_cast<double>(hi->first - lo->first)};
}

}  // namespace

Nanos Profile::sample_ns_at(const SamplingPoint& point, double u) {
  // interpolate()'s arithmetic, operation for operation: the same double for the same u.
  double seconds = point.upper->draw(u);
  if (point.lower) {
    const double v0 = point.lower->draw(u);
    seconds = v0 + (seconds - v0) * point.weight;
  }
  return seconds_to_nanos(seconds, "sampled latency");
}

Nanos Profile::sample_ns_at(std::int32_t hardware, std::int32_t model, std::int64_t batch, double u) const {
  const auto& c = curve(hardware, model, batch);
  return sample_ns_at(sampling_point(c, c.lower_bound(batch), batch), u);
}

std::vector<Profile::SamplingPoint> Profile::sampling_table(std::int32_t hardware, std::int32_t model) const {
  const auto& c = curve(hardware, model, 1);
  const auto max = c.rbegin()->first;
  std::vector<SamplingPoint> table(static_cast<std::size_t>(max) + 1);
  auto hi = c.begin();
  for (std::int64_t b = 1; b <= max; ++b) {
    if (hi->first < b) ++hi;
    table[b] = sampling_point(c, hi, b);
  }
  table[0] = table[1];
  return table;
}

std::vector<Nanos> sample_service_times(const Profile& profile, std::int32_t hardware, std::int32_t model,
                                        std::int64_t batch, std::uint64_t seed, std::int64_t count) {
  if (count < 0) throw ValueError(str("count=", count, " must be >= 0"));
  // int64 ns here, float64 seconds in the caller's array.
  core::check_fits_memory(static_cast<double>(count), 16, str("count=", count), "count", "the service times");
  Rng rng(seed, kSampleStream);
  std::vector<Nanos> out(static_cast<std::size_t>(count));
  for (auto& t : out) t = profile.sample_ns(hardware, model, batch, rng);
  return out;
}

std::vector<Nanos> Profile::decision_table(std::int32_t hardware, std::int32_t model, Statistic statistic) const {
  const auto& c = curve(hardware, model, 1);
  const auto max = c.rbegin()->first;
  std::vector<Nanos> table(static_cast<std::size_t>(max) + 1);
  const auto value = [statistic](const LatencyDistribution& d) { return d.statistic(statistic); };
  // Walk the measured batch sizes once: each entry is O(1), the whole table O(max_batch).
  auto hi = c.begin();
  for (std::int64_t b = 1; b <= max; ++b) {
    if (hi->first < b) ++hi;
    table[b] = seconds_to_nanos(interpolate(c, hi, b, value), "latency");
  }
  table[0] = table[1];
  return table;
}

std::vector<std::string> Profile::warnings(Statistic statistic) const {
  std::vector<std::string> out;
  for (const auto& [key, data] : pairs_) {
    const LatencyDistribution* previous = nullptr;
    std::int64_t previous_batch = 0;
    for (const auto& [batch, d] : data.latency) {
      if (previous && d.statistic(statistic) < previous->statistic(statistic)) {
        out.push_back(str("hardware '", hardware_[key.first], "' model '", models_[key.second],
                          "': ", statistic_name(statistic), " latency decreases from ", previous->statistic(statistic),
                          " s at batch ", previous_batch, " to ", d.statistic(statistic), " s at batch ", batch));
      }
      previous = &d;
      previous_batch = batch;
    }
  }
  return out;
}

std::vector<std::pair<std::int32_t, std::int32_t>> Profile::pairs() const {
  std::vector<std::pair<std::int32_t, std::int32_t>> out;
  for (const auto& [key, _] : pairs_) out.push_back(key);
  return out;
}

}  // namespace servelab::profile
