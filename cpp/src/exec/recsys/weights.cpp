#include "servelab/exec/recsys/weights.hpp"

#include <cmath>
#include <cstdint>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/memory.hpp"
#include "servelab/core/rng.hpp"

namespace servelab::exec::recsys {
namespace {

// Uniform in [-bound, bound), element i of the stream `key`: independent of how it is iterated.
void fill_uniform(float* data, std::size_t count, std::uint64_t key, float bound) {
  for (std::size_t i = 0; i < count; ++i) {
    if ((i & 0xFFFFF) == 0) core::check_interrupt();
    const std::uint64_t bits = mix64(key + 0x9E3779B97F4A7C15ULL * (i + 1));
    const float u = static_cast<float>(bits >> 40) * 0x1.0p-24f;  // [0, 1)
    data[i] = (2.0f * u - 1.0f) * bound;
  }
}

std::string slot_name(std::size_t slot) {
  switch (slot) {
    case kBottom:
      return "bottom";
    case kTop:
      return "top";
    case kGruInput:
      return "gru_input";
    case kGruHidden:
      return "gru_hidden";
    case kPredict:
      return "predict";
    default:
      return str("task", slot - kFirstTask);
  }
}

}  // namespace

std::vector<std::vector<std::int64_t>> Weights::mlp_widths(const Spec& spec) {
  std::vector<std::vector<std::int64_t>> widths(kFirstTask + spec.tasks.size());
  if (!spec.bottom.empty()) {
    widths[kBottom] = {spec.dense};
    widths[kBottom].insert(widths[kBottom].end(), spec.bottom.begin(), spec.bottom.end());
  }
  widths[kTop] = {spec.interaction_width()};
  widths[kTop].insert(widths[kTop].end(), spec.top.begin(), spec.top.end());
  if (spec.sequence_op == SequenceOp::GruAttention) {
    widths[kGruInput] = {spec.dim, 3 * spec.dim};
    widths[kGruHidden] = {spec.dim, 3 * spec.dim};
  }
  if (!spec.predict.empty()) {
    widths[kPredict] = {spec.predict_in()};
    widths[kPredict].insert(widths[kPredict].end(), spec.predict.begin(), spec.predict.end());
  }
  for (std::size_t t = 0; t < spec.tasks.size(); ++t) {
    widths[kFirstTask + t] = {spec.top.back()};
    widths[kFirstTask + t].insert(widths[kFirstTask + t].end(), spec.tasks[t].begin(), spec.tasks[t].end());
  }
  return widths;
}

bool Weights::relu_after_last(const Spec& spec, std::size_t slot) {
  return slot == kBottom || slot == kPredict || (slot == kTop && (!spec.tasks.empty() || !spec.predict.empty()));
}

Weights Weights::zeros(const Spec& spec) {
  core::check_fits_memory(static_cast<double>(spec.table_parameters()), 4.0,
                          str("model=", spec.name, " (", spec.table_parameters(), " table floats)"), "scale",
                          str("the embedding tables of recsys model ", spec.name));
  Weights w;
  for (const auto& t : spec.tables) {
    // The gather reads random rows: Table's memory is aligned to cache lines and in 2 MB pages.
    w.tables.emplace_back(t.rows, spec.dim);
  }
  for (const auto& widths : mlp_widths(spec)) {
    MlpWeights mlp;
    for (std::size_t l = 1; l < widths.size(); ++l) {
      mlp.layers.push_back({Matrix(widths[l], widths[l - 1]), std::vector<float>(static_cast<std::size_t>(widths[l]))});
    }
    w.mlps.push_back(std::move(mlp));
  }
  return w;
}

Weights Weights::random(const Spec& spec, std::uint64_t seed) {
  spec.validate();
  Weights w = zeros(spec);
  const Rng root(seed, "recsys/weights");
  for (auto& t : w.named()) {
    const std::uint64_t key = root.derive(t.name).identity();
    // Linear weights and biases [out, in] / [out] draw in +-1/sqrt(in); tables [rows, dim] in +-1/sqrt(dim).
    const bool table = t.name.starts_with("tables.");
    std::int64_t fan_in = table ? spec.dim : t.shape.back();
    if (t.shape.size() == 1) {  // a bias: fan_in is its layer's input width, found from its weight
      for (auto& other : w.named()) {
        if (other.name == t.name.substr(0, t.name.size() - 4) + "weight") fan_in = other.shape[1];
      }
      if (t.name.starts_with("gru.")) fan_in = spec.dim;
    }
    fill_uniform(t.data, t.size, key, 1.0f / std::sqrt(static_cast<float>(fan_in)));
  }
  return w;
}

void Weights::validate(const Spec& spec) const {
  const Weights expected = zeros(spec);
  auto fail = [&](const std::string& what) { throw ValueError(str("recsys model ", spec.name, ": ", what)); };
  if (tables.size() != expected.tables.size()) fail(str(tables.size(), " tables, expected ", expected.tables.size()));
  if (mlps.size() != expected.mlps.size()) fail(str(mlps.size(), " MLPs, expected ", expected.mlps.size()));
  auto self = const_cast<Weights*>(this)->named();
  auto want = const_cast<Weights&>(expected).named();
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (i >= self.size() || self[i].name != want[i].name || self[i].shape != want[i].shape) {
      std::string shape;
      for (auto d : want[i].shape) shape += str(shape.empty() ? "" : ", ", d);
      fail(str("weight '", want[i].name, "' must have shape (", shape, ")"));
    }
  }
  if (self.size() != want.size()) fail(str(self.size(), " weight tensors, expected ", want.size()));
}

std::vector<Weights::Named> Weights::named() {
  std::vector<Named> out;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    auto& m = tables[t];
    out.push_back({str("tables.", t), {m.rows, m.cols}, m.data.data(), m.data.size()});
  }
  for (std::size_t slot = 0; slot < mlps.size(); ++slot) {
    auto& layers = mlps[slot].layers;
    if (slot == kGruInput || slot == kGruHidden) {
      if (layers.empty()) continue;
      const char* which = slot == kGruInput ? "ih" : "hh";
      auto& l = layers.front();
      out.push_back(
          {str("gru.weight_", which), {l.weight.rows, l.weight.cols}, l.weight.data.data(), l.weight.data.size()});
      out.push_back(
          {str("gru.bias_", which), {static_cast<std::int64_t>(l.bias.size())}, l.bias.data(), l.bias.size()});
      continue;
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
      auto& l = layers[i];
      const std::string prefix = str(slot_name(slot), ".", i, ".");
      out.push_back({prefix + "weight", {l.weight.rows, l.weight.cols}, l.weight.data.data(), l.weight.data.size()});
      out.push_back({prefix + "bias", {static_cast<std::int64_t>(l.bias.size())}, l.bias.data(), l.bias.size()});
    }
  }
  return out;
}

}  // namespace servelab::exec::recsys
