// LatencyTable: validation, Pareto pruning, OLS extension, synthetic interpolation, importers.
#include "servelab/systems/ramsis/latency_table.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::ramsis {

namespace {

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::int32_t LatencyTable::model_index(const std::string& name) const {
  const auto it = std::find(models.begin(), models.end(), name);
  if (it == models.end()) throw KeyError(str("model '", name, "' is not in the table (", join(models), ")"));
  return static_cast<std::int32_t>(it - models.begin());
}

void LatencyTable::validate() const {
  if (models.empty()) throw ValueError("models is empty: RAMSIS needs at least one model");
  if (accuracy.size() != models.size() || latency.size() != models.size()) {
    throw ValueError(str("the table has ", models.size(), " models, ", accuracy.size(), " accuracies and ",
                         latency.size(), " latency rows"));
  }
  const std::size_t batches = latency.front().size();
  if (batches == 0) throw ValueError(str("model '", models[0], "' has no latency (max_batch=0)"));
  for (std::size_t m = 0; m < models.size(); ++m) {
    if (!std::isfinite(accuracy[m]) || accuracy[m] < 0) {
      throw ValueError(str("accuracy of '", models[m], "'=", accuracy[m], " must be finite and >= 0"));
    }
    if (latency[m].size() != batches) {
      throw ValueError(str("model '", models[m], "' has ", latency[m].size(), " batch sizes, '", models[0], "' has ",
                           batches, ": every model needs the same batches 1..B"));
    }
    for (std::size_t b = 0; b < batches; ++b) {
      if (latency[m][b] <= 0) {
        throw ValueError(str("latency of '", models[m], "' at batch ", b + 1, "=", latency[m][b], " ns must be > 0"));
      }
    }
  }
  for (std::size_t a = 0; a < models.size(); ++a) {
    for (std::size_t b = a + 1; b < models.size(); ++b) {
      if (models[a] == models[b]) throw ValueError(str("model '", models[a], "' appears twice"));
    }
  }
}

LatencyTable LatencyTable::select(const std::vector<std::string>& names) const {
  if (names.empty()) throw ValueError("models is empty: RAMSIS needs at least one model");
  LatencyTable out;
  for (const auto& name : names) {
    const std::int32_t m = model_index(name);
    out.models.push_back(models[m]);
    out.accuracy.push_back(accuracy[m]);
    out.latency.push_back(latency[m]);
  }
  out.validate();
  return out;
}

LatencyTable LatencyTable::pareto_front(std::int32_t batch) const {
  validate();
  if (batch < 1 || batch > max_batch()) throw ValueError(str("batch=", batch, " is not in 1..", max_batch()));
  std::vector<std::int32_t> keep;
  for (std::int32_t m = 0; m < num_models(); ++m) {
    bool dominated = false;
    for (std::int32_t o = 0; o < num_models() && !dominated; ++o) {
      const bool no_worse = accuracy[o] >= accuracy[m] && at(o, batch) <= at(m, batch);
      const bool better = accuracy[o] > accuracy[m] || at(o, batch) < at(m, batch);
      dominated = o != m && no_worse && better;
    }
    if (!dominated) keep.push_back(m);
  }
  // Exact duplicates (same accuracy and latency) survive together; keep the first of each.
  std::stable_sort(keep.begin(), keep.end(), [&](std::int32_t a, std::int32_t b) {
    return accuracy[a] < accuracy[b] || (accuracy[a] == accuracy[b] && at(a, batch) < at(b, batch));
  });
  LatencyTable out;
  for (const std::int32_t m : keep) {
    if (!out.models.empty() && out.accuracy.back() == accuracy[m] && out.latency.back()[batch - 1] == at(m, batch)) {
      continue;
    }
    out.models.push_back(models[m]);
    out.accuracy.push_back(accuracy[m]);
    out.latency.push_back(latency[m]);
  }
  return out;
}

LatencyTable LatencyTable::extended_to(std::int32_t batch) const {
  validate();
  LatencyTable out = *this;
  const std::int32_t have = max_batch();
  if (batch <= have) return out;
  for (auto& row : out.latency) {
    // OLS of latency on batch over the measured batches 1..have.
    const double n = have;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::int32_t b = 1; b <= have; ++b) {
      const double y = static_cast<double>(row[b - 1]);
      sx += b;
      sy += y;
      sxx += static_cast<double>(b) * b;
      sxy += b * y;
    }
    const double denom = n * sxx - sx * sx;
    const double slope = denom > 0 ? (n * sxy - sx * sy) / denom : 0.0;
    const double intercept = (sy - slope * sx) / n;
    for (std::int32_t b = have + 1; b <= batch; ++b) {
      // Never below the last measured value: a longer batch is not faster.
      const double y = std::max(intercept + slope * b, static_cast<double>(row.back()));
      row.push_back(static_cast<Nanos>(std::llround(y)));
    }
  }
  return out;
}

LatencyTable LatencyTable::interpolated(double step) const {
  validate();
  if (!(step > 0) || !std::isfinite(step)) throw ValueError(str("step=", step, " must be > 0"));
  for (std::int32_t m = 1; m < num_models(); ++m) {
    if (!(accuracy[m] > accuracy[m - 1])) {
      throw ValueError(str("interpolated() needs models sorted by strictly ascending accuracy ('", models[m - 1],
                           "'=", accuracy[m - 1], ", '", models[m], "'=", accuracy[m], "): use pareto_front() first"));
    }
  }
  // Within each segment of the front, steps of `step` from its lower model (so the front's own
  // models stay, and 0.5% steps on the 9-model image front give the paper's 60 models).
  std::vector<double> targets(accuracy.begin(), accuracy.end());
  for (std::int32_t m = 0; m + 1 < num_models(); ++m) {
    for (std::int64_t k = 1;; ++k) {
      const double a = accuracy[m] + step * static_cast<double>(k);
      if (a >= accuracy[m + 1] - step * 1e-6) break;
      targets.push_back(a);
    }
  }
  std::sort(targets.begin(), targets.end());
  LatencyTable out;
  for (const double a : targets) {
    const auto exact = std::find(accuracy.begin(), accuracy.end(), a);
    if (exact != accuracy.end()) {
      const auto m = exact - accuracy.begin();
      out.models.push_back(models[m]);
      out.accuracy.push_back(a);
      out.latency.push_back(latency[m]);
      continue;
    }
    const auto upper = std::upper_bound(accuracy.begin(), accuracy.end(), a) - accuracy.begin();
    const auto lower = upper - 1;
    const double f = (a - accuracy[lower]) / (accuracy[upper] - accuracy[lower]);
    std::vector<Nanos> row(latency[lower].size());
    for (std::size_t b = 0; b < row.size(); ++b) {
      row[b] = static_cast<Nanos>(
          std::llround((1 - f) * static_cast<double>(latency[lower][b]) + f * static_cast<double>(latency[upper][b])));
    }
    out.models.push_back(str("synthetic_", std::llround(a * 1000)));
    out.accuracy.push_back(a);
    out.latency.push_back(std::move(row));
  }
  return out;
}

LatencyTable LatencyTable::from_seconds(std::vector<std::string> models, std::vector<double> accuracy,
                                        std::span<const double> latency_s, std::size_t rows, std::size_t batches) {
  if (rows != models.size()) throw ValueError(str("latency_s has ", rows, " rows for ", models.size(), " models"));
  LatencyTable t;
  t.models = std::move(models);
  t.accuracy = std::move(accuracy);
  for (std::size_t i = 0; i < rows; ++i) {
    std::vector<Nanos> row;
    for (std::size_t b = 0; b < batches; ++b) {
      const double s = latency_s[i * batches + b];
      if (!std::isfinite(s) || s <= 0) {
        throw ValueError(
            str("latency_s[", i, ", ", b, "]=", s, ": latencies must be finite and > 0 (a gap in the profile?)"));
      }
      row.push_back(seconds_to_nanos(s, "latency_s"));
    }
    t.latency.push_back(std::move(row));
  }
  t.validate();
  return t;
}

LatencyTable LatencyTable::from_rows(const std::vector<std::string>& models, const std::vector<double>& accuracy,
                                     const std::vector<std::string>& row_model,
                                     const std::vector<std::int64_t>& row_batch,
                                     const std::vector<double>& row_seconds) {
  if (models.empty()) throw ValueError("models is empty: RAMSIS needs at least one model");
  if (accuracy.size() != models.size()) {
    throw ValueError(str("accuracy has ", accuracy.size(), " entries for ", models.size(), " models"));
  }
  if (row_batch.size() != row_model.size() || row_seconds.size() != row_model.size()) {
    throw ValueError(
        str("rows: ", row_model.size(), " models, ", row_batch.size(), " batches, ", row_seconds.size(), " latencies"));
  }
  std::map<std::string, std::map<std::int64_t, double>> by_model;
  for (std::size_t r = 0; r < row_model.size(); ++r) {
    if (row_batch[r] < 1) throw ValueError(str("row ", r, ": batch=", row_batch[r], " must be >= 1"));
    if (!std::isfinite(row_seconds[r]) || row_seconds[r] <= 0) {
      throw ValueError(str("row ", r, " (", row_model[r], ", batch ", row_batch[r], "): latency=", row_seconds[r],
                           " s must be finite and > 0"));
    }
    by_model[row_model[r]][row_batch[r]] = row_seconds[r];
  }
  LatencyTable out;
  out.models = models;
  out.accuracy = accuracy;
  std::int64_t common = -1;
  for (const auto& name : models) {
    const auto it = by_model.find(name);
    if (it == by_model.end() || it->second.empty()) throw ValueError(str("model '", name, "' has no latency rows"));
    const std::int64_t top = it->second.rbegin()->first;
    for (std::int64_t b = 1; b <= top; ++b) {
      if (!it->second.count(b)) {
        throw ValueError(str("model '", name, "' has a gap: batch ", b, " is missing (batches must be 1..", top, ")"));
      }
    }
    common = common < 0 ? top : std::min(common, top);
  }
  for (const auto& name : models) {
    std::vector<Nanos> row;
    for (std::int64_t b = 1; b <= common; ++b) row.push_back(seconds_to_nanos(by_model[name][b], "latency"));
    out.latency.push_back(std::move(row));
  }
  out.validate();
  return out;
}

LatencyTable::Fill LatencyTable::parse_fill(const std::string& name) {
  if (name == "none") return Fill::None;
  if (name == "linear") return Fill::Linear;
  if (name == "ols") return Fill::Ols;
  throw ValueError(str("fill='", name, "' is not one of 'none', 'linear', 'ols'"));
}

LatencyTable LatencyTable::from_profile(const profile::Profile& profile, const std::string& hardware,
                                        const std::vector<std::string>& models, profile::Statistic statistic,
                                        std::int32_t max_batch, Fill fill) {
  if (models.empty()) throw ValueError("models is empty: RAMSIS needs at least one model");
  if (max_batch < 0) throw ValueError(str("max_batch=", max_batch, " must be >= 0"));
  const std::int32_t hw = profile.hardware_index(hardware);
  std::vector<std::int32_t> ids;
  std::vector<std::vector<std::int64_t>> measured;
  std::int64_t smallest_top = -1, largest_top = 0;
  for (const auto& name : models) {
    const std::int32_t m = profile.model_index(name);
    if (!profile.has_latency(hw, m)) throw ValueError(str("model '", name, "' has no latency on '", hardware, "'"));
    ids.push_back(m);
    measured.push_back(profile.batches(hw, m));
    const std::int64_t top = measured.back().back();
    smallest_top = smallest_top < 0 ? top : std::min(smallest_top, top);
    largest_top = std::max(largest_top, top);
  }
  const std::int64_t batches = max_batch > 0 ? max_batch : (fill == Fill::Ols ? largest_top : smallest_top);
  LatencyTable out;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const double acc = profile.accuracy(ids[i]);
    if (std::isnan(acc)) throw ValueError(str("model '", models[i], "' has no accuracy in the profile"));
    const auto& have = measured[i];
    std::vector<double> seconds(static_cast<std::size_t>(batches), 0.0);
    if (fill == Fill::Ols) {
      // An OLS line over the measured batches (up to `batches`) for every batch not measured.
      double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
      std::vector<bool> known(static_cast<std::size_t>(batches), false);
      for (const std::int64_t b : have) {
        if (b > batches) break;
        const double y = profile.latency(hw, ids[i], b, statistic);
        seconds[b - 1] = y;
        known[b - 1] = true;
        sx += b, sy += y, sxx += static_cast<double>(b) * b, sxy += b * y, n += 1;
      }
      const double denom = n * sxx - sx * sx;
      const double slope = denom > 0 ? (n * sxy - sx * sy) / denom : 0.0;
      const double intercept = (sy - slope * sx) / n;
      for (std::int64_t b = 1; b <= batches; ++b) {
        if (!known[b - 1]) seconds[b - 1] = intercept + slope * b;
      }
      for (std::int64_t b = batches - 1; b >= 1; --b) seconds[b - 1] = std::min(seconds[b - 1], seconds[b]);
      for (std::int64_t b = 1; b <= batches; ++b) {
        if (!(seconds[b - 1] > 0)) {
          throw ValueError(str("model '", models[i], "': the OLS fill gives ", seconds[b - 1], " s at batch ", b,
                               " (too few measured batches?)"));
        }
      }
    } else {
      if (have.front() != 1) {
        throw ValueError(str("model '", models[i], "' on '", hardware,
                             "' has a gap: batch 1 is not profiled (smallest ", have.front(),
                             "); fill='ols' fills gaps as the artifact does"));
      }
      if (have.back() < batches) {
        throw ValueError(str("model '", models[i], "' on '", hardware, "' is profiled up to batch ", have.back(),
                             " < max_batch=", batches, "; fill='ols' extends it as the artifact does"));
      }
      if (fill == Fill::None) {
        for (std::int64_t b = 1; b <= batches; ++b) {
          if (!std::binary_search(have.begin(), have.end(), b)) {
            throw ValueError(str("model '", models[i], "' on '", hardware, "' has a gap: batch ", b,
                                 " is not profiled; fill='linear' or 'ols' fills gaps"));
          }
        }
      }
      for (std::int64_t b = 1; b <= batches; ++b) seconds[b - 1] = profile.latency(hw, ids[i], b, statistic);
    }
    std::vector<Nanos> row;
    for (const double s : seconds) row.push_back(seconds_to_nanos(s, "latency"));
    out.models.push_back(models[i]);
    out.accuracy.push_back(acc);
    out.latency.push_back(std::move(row));
  }
  out.validate();
  return out;
}

}  // namespace servelab::ramsis
