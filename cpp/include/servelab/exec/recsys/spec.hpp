// servelab's own descriptions of the recommendation models that DeepRecSys, Ribbon and Kairos
// serve (DLRM RM1-RM3, Wide&Deep, MT-WnD, NCF, DIN, DIEN): embedding tables read through sparse
// features, a bottom MLP over the dense features, an interaction, a top MLP and output heads
// (task heads, or NCF's prediction layer over its GMF branch and its MLP tower).
// One structure describes them all, so every backend runs the same graph (see docs/recsys.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servelab::exec::recsys {

enum class Interaction { Cat, Dot };
// What the behaviour sequence (a feature with `sequence` set) becomes before the interaction.
enum class SequenceOp { None, Attention, GruAttention };

// One sparse input: `lookups` indices into table `table` per sample. A pooled feature sums the
// rows it looks up (an embedding bag); a sequence feature keeps them as `lookups` steps.
struct Feature {
  std::string name;
  int table = 0;
  int lookups = 1;
  bool sequence = false;
};

struct Table {
  std::string name;
  std::int64_t rows = 0;
};

struct Spec {
  std::string name;
  std::string doc;
  std::int64_t dense = 0;            // width of the dense features
  std::vector<std::int64_t> bottom;  // bottom MLP widths after `dense` (ReLU after every layer)
  std::int64_t dim = 0;              // embedding width, shared by every table
  std::vector<Table> tables;
  std::vector<Feature> features;  // column order of the sparse input
  Interaction interaction = Interaction::Cat;
  SequenceOp sequence_op = SequenceOp::None;
  int query_feature = -1;         // the pooled feature the behaviour sequence is attended with
  std::vector<std::int64_t> top;  // top MLP widths after the interaction
  // Task heads after the top MLP (MT-WnD): head i is the MLP top.back() -> tasks[i][0] -> ... ->
  // tasks[i].back(), ReLU between its layers and a sigmoid after its last (DeepRecSys's
  // multi_task_wnd.py); the heads' outputs side by side are the model's. Empty: the top MLP's
  // last layer is the output.
  std::vector<std::vector<std::int64_t>> tasks;
  // NCF's GMF branch: two pooled features (user, item) multiplied element-wise. Set, the model
  // takes no dense features into its graph (the batch's `dense` columns are read by no layer), the
  // top MLP (the "MLP tower", ReLU after its last layer too) reads only the other pooled features,
  // and the `predict` layers (Linear + ReLU each, as DeepRecSys's final layer) map
  // [GMF product, tower output] to the output. Empty: no GMF branch, and `predict` must be empty.
  std::vector<int> gmf;
  std::vector<std::int64_t> predict;

  // Sizes that follow from the above.
  std::int64_t bottom_out() const { return bottom.empty() ? dense : bottom.back(); }
  // Columns of the interaction's input taken by the dense part (the bottom output): bottom_out(),
  // or 0 for a model with a GMF branch (its graph reads no dense feature).
  std::int64_t dense_columns() const { return gmf.empty() ? bottom_out() : 0; }
  bool in_gmf(std::size_t feature) const;   // whether the feature feeds the GMF branch
  std::int64_t predict_in() const;          // input width of the prediction layers: dim + top.back()
  std::int64_t lookups_per_sample() const;  // columns of the sparse input
  int pooled_count() const;                 // features summed into one row each
  int interaction_pooled() const;           // pooled features in the interaction (not the GMF's)
  int sequence_feature() const;             // index of the sequence feature, -1 when none
  std::int64_t interaction_width() const;   // input width of the top MLP
  std::int64_t outputs() const;             // columns of the model's output
  std::int64_t table_parameters() const;    // floats in all tables
  // Multiply-adds of the MLPs (and the GRU) per sample, for FLOP/s figures.
  std::int64_t mlp_macs_per_sample() const;

  // ValueError naming the model and the field when the description is inconsistent.
  void validate() const;
};

// The built-in model names, in catalogue order.
std::vector<std::string> model_names();
// The description of a built-in model at full size. KeyError naming `name` and the choices.
Spec builtin(const std::string& name);
// Every table shrunk to ceil(rows * scale) rows (at least 1), for tables that fit memory.
// ValueError unless 0 < scale <= 1.
Spec scaled(Spec spec, double scale);
// DLRM's other interaction: pairwise dot products of the bottom output and the pooled features
// (the top MLP's input width changes). ValueError when the bottom output width is not `dim` or the
// model has a behaviour sequence.
Spec with_interaction(Spec spec, Interaction interaction);

const char* to_string(Interaction interaction);
const char* to_string(SequenceOp op);
Interaction parse_interaction(const std::string& text);  // "cat" or "dot"

}  // namespace servelab::exec::recsys
