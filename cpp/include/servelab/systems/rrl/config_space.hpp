// Parallelism configuration spaces (RRL, SC'19, Sec. 4.1 and Fig. 1-2): a grid of integer knobs.
//
// CPU: request parallelism (concurrent serving workers), inter-op threads and intra-op threads.
// GPU: batch size, batch timeout (ms) and parallel batch threads. Each knob lists its allowed values
// (ascending, distinct); a configuration is one value per knob, numbered in row-major order (the
// last knob varies fastest). Distances are Euclidean over configurations normalised to grid steps:
// each knob's value is replaced by its position in the knob's list of values, so one step along any
// knob is distance 1 and the region radius delta counts steps. The paper measures Euclidean distance
// over raw values (Fig. 9) on knobs of unit steps (threads); normalising keeps delta meaningful when
// knobs have other units (a timeout in 5 ms steps beside threads) and makes delta = 1 "the nearest
// neighbours" on every space. The artifact's region is delta = 3 on 11 levels per knob. The
// estimator instead sees each knob scaled onto [0, 1] (coords()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace servelab::rrl {

struct Knob {
  std::string name;
  std::vector<std::int64_t> values;  // ascending, distinct, non-empty
};

class ConfigSpace {
 public:
  static constexpr std::size_t kMaxConfigs = 1 << 20;

  // ValueError (naming the knob) for no knobs, a knob without values, unsorted or repeated values,
  // repeated knob names, or more than kMaxConfigs configurations.
  ConfigSpace(std::string kind, std::vector<Knob> knobs);

  const std::string& kind() const { return kind_; }  // "cpu", "gpu" or the caller's name
  const std::vector<Knob>& knobs() const { return knobs_; }
  std::size_t dims() const { return knobs_.size(); }
  std::size_t size() const { return size_; }

  std::int64_t value(std::size_t config, std::size_t knob) const;
  std::vector<std::int64_t> values(std::size_t config) const;
  // The configuration with these knob values; ValueError naming the knob whose value is off the grid.
  std::size_t index_of(std::span<const std::int64_t> values) const;
  // The knob's position, or nullopt.
  std::optional<std::size_t> knob(std::string_view name) const;
  // The value of the named knob in `config` (KeyError if the space has no such knob).
  std::int64_t value(std::size_t config, std::string_view knob) const;

  // Coordinates of `config` scaled onto [0, 1] per knob (a knob with one value sits at 0): the
  // estimator's input.
  std::span<const float> coords(std::size_t config) const { return {&coords_[config * dims()], dims()}; }
  // Position of the value of each knob in its list (grid steps).
  std::size_t level(std::size_t config, std::size_t knob) const {
    return (config / strides_[knob]) % knobs_[knob].values.size();
  }
  // Euclidean distance in grid steps.
  double distance(std::size_t a, std::size_t b) const;
  // For each configuration, the configurations within `radius` (itself included, ascending).
  // radius >= 0; ValueError otherwise.
  std::vector<std::vector<std::uint32_t>> regions(double radius) const;
  // "workers=2, inter_op=1, intra_op=4"
  std::string describe(std::size_t config) const;

 private:
  std::string kind_;
  std::vector<Knob> knobs_;
  std::vector<std::size_t> strides_;
  std::size_t size_ = 1;
  std::vector<float> coords_;
};

// The CPU space of a machine with `cores` cores: workers, inter_op and intra_op each in 1..max_*
// (0: `cores`). ValueError for cores < 1 or a maximum < 0.
ConfigSpace cpu_space(int cores, int max_workers = 0, int max_inter_op = 0, int max_intra_op = 0);
// The GPU space: batch_size in {1, step, 2 step, ..., max_batch}, batch_timeout_ms in {0, timeout_step, ...,
// max_timeout_ms}, batch_threads in 1..max_threads. Defaults: batch 1..64 by 8, timeout 0..50 ms by 5,
// threads 1..8 (9 x 11 x 8 = 792 configurations, of the artifact's order of 11^3).
ConfigSpace gpu_space(int max_batch = 64, int batch_step = 8, int max_timeout_ms = 50, int timeout_step_ms = 5,
                      int max_threads = 8);

}  // namespace servelab::rrl
