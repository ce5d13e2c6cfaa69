#include "servelab/systems/rrl/config_space.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::rrl {

ConfigSpace::ConfigSpace(std::string kind, std::vector<Knob> knobs) : kind_(std::move(kind)), knobs_(std::move(knobs)) {
  if (knobs_.empty()) throw ValueError(str("the ", kind_, " configuration space has no knobs"));
  std::set<std::string> names;
  for (const auto& k : knobs_) {
    if (!names.insert(k.name).second) throw ValueError(str("knob ", k.name, " appears twice"));
    if (k.values.empty()) throw ValueError(str("knob ", k.name, " has no values: the space is empty"));
    for (std::size_t i = 1; i < k.values.size(); ++i) {
      if (k.values[i] <= k.values[i - 1]) {
        throw ValueError(str("knob ", k.name, ": values[", i, "]=", k.values[i], " is not above values[", i - 1,
                             "]=", k.values[i - 1], " (give distinct values in ascending order)"));
      }
    }
    if (size_ > kMaxConfigs / k.values.size()) {
      throw ValueError(str("the ", kind_, " space has more than ", kMaxConfigs, " configurations"));
    }
    size_ *= k.values.size();
  }
  strides_.assign(knobs_.size(), 1);
  for (std::size_t i = knobs_.size() - 1; i > 0; --i) strides_[i - 1] = strides_[i] * knobs_[i].values.size();
  coords_.resize(size_ * dims());
  for (std::size_t c = 0; c < size_; ++c) {
    for (std::size_t k = 0; k < dims(); ++k) {
      const auto& v = knobs_[k].values;
      const double span = static_cast<double>(v.back() - v.front());
      coords_[c * dims() + k] = span > 0 ? static_cast<float>((value(c, k) - v.front()) / span) : 0.0f;
    }
  }
}

std::int64_t ConfigSpace::value(std::size_t config, std::size_t knob) const {
  return knobs_[knob].values[(config / strides_[knob]) % knobs_[knob].values.size()];
}

std::vector<std::int64_t> ConfigSpace::values(std::size_t config) const {
  if (config >= size_) throw ValueError(str("config=", config, " is not below the space's size ", size_));
  std::vector<std::int64_t> out(dims());
  for (std::size_t k = 0; k < dims(); ++k) out[k] = value(config, k);
  return out;
}

std::size_t ConfigSpace::index_of(std::span<const std::int64_t> values) const {
  if (values.size() != dims()) throw ValueError(str("got ", values.size(), " knob values for ", dims(), " knobs"));
  std::size_t index = 0;
  for (std::size_t k = 0; k < dims(); ++k) {
    const auto& v = knobs_[k].values;
    const auto it = std::lower_bound(v.begin(), v.end(), values[k]);
    if (it == v.end() || *it != values[k]) {
      throw ValueError(
          str(knobs_[k].name, "=", values[k], " is not one of the knob's values (", v.front(), "..", v.back(), ")"));
    }
    index += static_cast<std::size_t>(it - v.begin()) * strides_[k];
  }
  return index;
}

std::optional<std::size_t> ConfigSpace::knob(std::string_view name) const {
  for (std::size_t k = 0; k < dims(); ++k) {
    if (knobs_[k].name == name) return k;
  }
  return std::nullopt;
}

std::int64_t ConfigSpace::value(std::size_t config, std::string_view name) const {
  const auto k = knob(name);
  if (!k) throw KeyError(str("the ", kind_, " space has no knob ", name));
  return value(config, *k);
}

double ConfigSpace::distance(std::size_t a, std::size_t b) const {
  double sum = 0;
  for (std::size_t k = 0; k < dims(); ++k) {
    const double d = static_cast<double>(level(a, k)) - static_cast<double>(level(b, k));
    sum += d * d;
  }
  return std::sqrt(sum);
}

std::vector<std::vector<std::uint32_t>> ConfigSpace::regions(double radius) const {
  if (!(std::isfinite(radius) && radius >= 0)) throw ValueError(str("radius=", radius, " must be >= 0 and finite"));
  std::vector<std::vector<std::uint32_t>> out(size_);
  // Squared grid distances are integers: compare exactly, with a hair of slack for the radius.
  const double limit = radius * radius + 1e-9;
  std::vector<std::int64_t> levels(size_ * dims());
  for (std::size_t c = 0; c < size_; ++c) {
    for (std::size_t k = 0; k < dims(); ++k) levels[c * dims() + k] = static_cast<std::int64_t>(level(c, k));
  }
  for (std::size_t a = 0; a < size_; ++a) {
    if (a % 256 == 0) core::check_interrupt();
    for (std::size_t b = 0; b < size_; ++b) {
      std::int64_t sum = 0;
      for (std::size_t k = 0; k < dims(); ++k) {
        const std::int64_t d = levels[a * dims() + k] - levels[b * dims() + k];
        sum += d * d;
      }
      if (static_cast<double>(sum) <= limit) out[a].push_back(static_cast<std::uint32_t>(b));
    }
  }
  return out;
}

std::string ConfigSpace::describe(std::size_t config) const {
  std::string out;
  for (std::size_t k = 0; k < dims(); ++k) out += str(k ? ", " : "", knobs_[k].name, "=", value(config, k));
  return out;
}

namespace {

std::vector<std::int64_t> range(std::int64_t lo, std::int64_t hi, std::int64_t step) {
  std::vector<std::int64_t> v;
  for (std::int64_t x = lo; x <= hi; x += step) v.push_back(x);
  return v;
}

int maximum(int given, int fallback, const char* field) {
  if (given < 0) throw ValueError(str(field, "=", given, " must be >= 0 (0: the number of cores)"));
  return given == 0 ? fallback : given;
}

}  // namespace

ConfigSpace cpu_space(int cores, int max_workers, int max_inter_op, int max_intra_op) {
  if (cores < 1 || cores > 1024) throw ValueError(str("cores=", cores, " must be in 1..1024"));
  return ConfigSpace("cpu", {{"workers", range(1, maximum(max_workers, cores, "max_workers"), 1)},
                             {"inter_op", range(1, maximum(max_inter_op, cores, "max_inter_op"), 1)},
                             {"intra_op", range(1, maximum(max_intra_op, cores, "max_intra_op"), 1)}});
}

ConfigSpace gpu_space(int max_batch, int batch_step, int max_timeout_ms, int timeout_step_ms, int max_threads) {
  if (max_batch < 1) throw ValueError(str("max_batch=", max_batch, " must be >= 1"));
  if (batch_step < 1) throw ValueError(str("batch_step=", batch_step, " must be >= 1"));
  if (max_timeout_ms < 0) throw ValueError(str("max_timeout_ms=", max_timeout_ms, " must be >= 0"));
  if (timeout_step_ms < 1) throw ValueError(str("timeout_step_ms=", timeout_step_ms, " must be >= 1"));
  if (max_threads < 1) throw ValueError(str("max_threads=", max_threads, " must be >= 1"));
  std::vector<std::int64_t> batches{1};
  for (std::int64_t b = batch_step; b <= max_batch; b += batch_step) {
    if (b > 1) batches.push_back(b);
  }
  return ConfigSpace("gpu", {{"batch_size", batches},
                             {"batch_timeout_ms", range(0, max_timeout_ms, timeout_step_ms)},
                             {"batch_threads", range(1, max_threads, 1)}});
}

}  // namespace servelab::rrl
