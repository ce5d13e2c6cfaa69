#include "servelab/exec/recsys/spec.hpp"

#include <cmath>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::exec::recsys {

std::int64_t Spec::lookups_per_sample() const {
  std::int64_t n = 0;
  for (const auto& f : features) n += f.lookups;
  return n;
}

int Spec::pooled_count() const {
  int n = 0;
  for (const auto& f : features) n += f.sequence ? 0 : 1;
  return n;
}

int Spec::interaction_pooled() const {
  int n = 0;
  for (std::size_t i = 0; i < features.size(); ++i) n += features[i].sequence || in_gmf(i) ? 0 : 1;
  return n;
}

bool Spec::in_gmf(std::size_t feature) const {
  for (const int f : gmf) {
    if (f == static_cast<int>(feature)) return true;
  }
  return false;
}

std::int64_t Spec::predict_in() const { return dim + (top.empty() ? 0 : top.back()); }

int Spec::sequence_feature() const {
  for (std::size_t i = 0; i < features.size(); ++i) {
    if (features[i].sequence) return static_cast<int>(i);
  }
  return -1;
}

std::int64_t Spec::interaction_width() const {
  const std::int64_t pooled = pooled_count();
  if (interaction == Interaction::Dot) {
    const std::int64_t vectors = pooled + 1;  // the bottom output and each pooled feature
    return bottom_out() + vectors * (vectors - 1) / 2;
  }
  const std::int64_t interest = sequence_op == SequenceOp::None ? 0 : dim;
  return dense_columns() + interaction_pooled() * dim + interest;
}

std::int64_t Spec::outputs() const {
  if (!tasks.empty()) {
    std::int64_t n = 0;
    for (const auto& head : tasks) n += head.empty() ? 0 : head.back();
    return n;
  }
  if (!predict.empty()) return predict.back();
  return top.empty() ? interaction_width() : top.back();
}

std::int64_t Spec::table_parameters() const {
  std::int64_t n = 0;
  for (const auto& t : tables) n += t.rows * dim;
  return n;
}

namespace {
std::int64_t chain_macs(std::int64_t in, const std::vector<std::int64_t>& widths) {
  std::int64_t macs = 0;
  for (const auto w : widths) {
    macs += in * w;
    in = w;
  }
  return macs;
}
}  // namespace

std::int64_t Spec::mlp_macs_per_sample() const {
  std::int64_t macs = chain_macs(dense, bottom) + chain_macs(interaction_width(), top);
  for (const auto& head : tasks) macs += chain_macs(top.back(), head);
  if (!predict.empty()) macs += dim + chain_macs(predict_in(), predict);  // the GMF product, then the layers
  const int seq = sequence_feature();
  if (sequence_op == SequenceOp::GruAttention && seq >= 0) macs += 2 * 3 * dim * dim * features[seq].lookups;
  return macs;
}

void Spec::validate() const {
  auto fail = [&](const std::string& what) { throw ValueError(str("recsys model ", name, ": ", what)); };
  if (dense < 1) fail(str("dense=", dense, " must be at least 1"));
  if (dim < 1) fail(str("dim=", dim, " must be at least 1"));
  for (std::size_t i = 0; i < bottom.size(); ++i) {
    if (bottom[i] < 1) fail(str("bottom[", i, "]=", bottom[i], " must be at least 1"));
  }
  for (std::size_t i = 0; i < top.size(); ++i) {
    if (top[i] < 1) fail(str("top[", i, "]=", top[i], " must be at least 1"));
  }
  if (top.empty()) fail("top is empty: the model needs at least one top layer");
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].empty()) fail(str("tasks[", i, "] is empty: a task head needs at least one layer"));
    for (std::size_t l = 0; l < tasks[i].size(); ++l) {
      if (tasks[i][l] < 1) fail(str("tasks[", i, "][", l, "]=", tasks[i][l], " must be at least 1"));
    }
  }
  if (tables.empty()) fail("tables is empty");
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (tables[i].rows < 1) fail(str("tables[", i, "].rows=", tables[i].rows, " must be at least 1"));
  }
  int sequences = 0;
  for (std::size_t i = 0; i < features.size(); ++i) {
    const auto& f = features[i];
    if (f.table < 0 || f.table >= static_cast<int>(tables.size())) {
      fail(str("features[", i, "].table=", f.table, " is not a table index (", tables.size(), " tables)"));
    }
    if (f.lookups < 1) fail(str("features[", i, "].lookups=", f.lookups, " must be at least 1"));
    sequences += f.sequence ? 1 : 0;
  }
  if (features.empty()) fail("features is empty");
  if (sequences > 1) fail(str(sequences, " sequence features; at most one is supported"));
  if ((sequences == 1) != (sequence_op != SequenceOp::None)) {
    fail(str("sequence_op=", to_string(sequence_op), " needs exactly one sequence feature, got ", sequences));
  }
  if (sequence_op != SequenceOp::None) {
    if (query_feature < 0 || query_feature >= static_cast<int>(features.size()) || features[query_feature].sequence) {
      fail(str("query_feature=", query_feature, " must name a pooled feature"));
    }
    if (interaction == Interaction::Dot) fail("interaction=dot does not take a behaviour sequence");
  }
  for (std::size_t i = 0; i < predict.size(); ++i) {
    if (predict[i] < 1) fail(str("predict[", i, "]=", predict[i], " must be at least 1"));
  }
  if (!gmf.empty()) {
    if (gmf.size() != 2 || gmf[0] == gmf[1])
      fail(str("gmf has ", gmf.size(), " features; it takes two different ones"));
    for (std::size_t i = 0; i < gmf.size(); ++i) {
      if (gmf[i] < 0 || gmf[i] >= static_cast<int>(features.size()) || features[gmf[i]].sequence) {
        fail(str("gmf[", i, "]=", gmf[i], " must name a pooled feature"));
      }
    }
    if (predict.empty()) fail("gmf is set but predict is empty: the GMF branch joins the tower in the predict layers");
    if (!tasks.empty()) fail("gmf and tasks cannot both be set");
    if (sequence_op != SequenceOp::None) fail("gmf does not take a behaviour sequence");
    if (interaction == Interaction::Dot) fail("interaction=dot does not take a GMF branch");
    if (interaction_pooled() < 1) fail("gmf takes every pooled feature: the MLP tower has no input");
  } else if (!predict.empty()) {
    fail("predict is set without gmf: the prediction layers join the GMF branch and the tower");
  }
  if (interaction == Interaction::Dot && bottom_out() != dim) {
    fail(str("interaction=dot needs the bottom output width (", bottom_out(), ") to equal dim (", dim, ")"));
  }
}

Spec scaled(Spec spec, double scale) {
  if (!(scale > 0.0 && scale <= 1.0)) {
    throw ValueError(str("recsys model ", spec.name, ": scale=", scale, " must be in (0, 1]"));
  }
  for (auto& t : spec.tables) {
    t.rows = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(static_cast<double>(t.rows) * scale)));
  }
  return spec;
}

Spec with_interaction(Spec spec, Interaction interaction) {
  spec.interaction = interaction;
  spec.validate();
  return spec;
}

const char* to_string(Interaction interaction) { return interaction == Interaction::Dot ? "dot" : "cat"; }

const char* to_string(SequenceOp op) {
  switch (op) {
    case SequenceOp::Attention:
      return "attention";
    case SequenceOp::GruAttention:
      return "gru_attention";
    default:
      return "none";
  }
}

Interaction parse_interaction(const std::string& text) {
  if (text == "cat") return Interaction::Cat;
  if (text == "dot") return Interaction::Dot;
  throw ValueError(str("interaction='", text, "' is unknown; choose 'cat' or 'dot'"));
}

}  // namespace servelab::exec::recsys
