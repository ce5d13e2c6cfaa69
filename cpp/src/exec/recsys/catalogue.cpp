// The built-in models. Sizes follow the architecture tables DeepRecSys published for them (MLP
// widths, table rows, embedding width, lookups per table); the structure around them (what the
// interaction concatenates, the heads, the behaviour sequences of DIN and DIEN) is servelab's
// reading, documented in docs/recsys.md.
#include <algorithm>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/exec/recsys/spec.hpp"

namespace servelab::exec::recsys {
namespace {

// `count` tables of `rows` rows named <prefix><i>, each read by one pooled feature.
void add_tables(Spec& s, const std::string& prefix, int count, std::int64_t rows, int lookups) {
  for (int i = 0; i < count; ++i) {
    const int index = static_cast<int>(s.tables.size());
    s.tables.push_back({str(prefix, i), rows});
    s.features.push_back({str(prefix, i), index, lookups, false});
  }
}

Spec dlrm(std::string name, std::string doc, std::int64_t dense, std::vector<std::int64_t> bottom, std::int64_t dim,
          int tables, std::int64_t rows, int lookups, std::vector<std::int64_t> top) {
  Spec s;
  s.name = std::move(name);
  s.doc = std::move(doc);
  s.dense = dense;
  s.bottom = std::move(bottom);
  s.dim = dim;
  add_tables(s, "table", tables, rows, lookups);
  s.top = std::move(top);
  return s;
}

Spec wide_and_deep() {
  Spec s;
  s.name = "wnd";
  s.doc = "Wide&Deep: 512 dense features concatenated with 27 one-hot embeddings, MLP 1024-512-256-1";
  s.dense = 512;
  s.dim = 32;
  add_tables(s, "table", 27, 1'000'000, 1);
  s.top = {1024, 512, 256, 1};
  return s;
}

Spec multi_task_wide_and_deep() {
  // DeepRecSys's models/multi_task_wnd.py: the shared MLP, then num_multi_tasks task MLPs of
  // mtwnd.json's arch_mlp_tasks 512-256-128 (512 is the shared output): Linear(512, 256), ReLU,
  // Linear(256, 128), sigmoid. Its scripts leave num_multi_tasks at its default, 1.
  Spec s;
  s.name = "mtwnd";
  s.doc =
      "Multi-task Wide&Deep: shared MLP 1024-512 over 43 embeddings and 512 dense features, "
      "then the task MLP 256-128 with sigmoid outputs (one task, DeepRecSys's default)";
  s.dense = 512;
  s.dim = 32;
  add_tables(s, "table", 41, 500'000, 1);
  add_tables(s, "item", 2, 5'000'000, 1);
  s.top = {1024, 512};
  s.tasks = {{256, 128}};
  return s;
}

Spec ncf() {
  // DeepRecSys's models/ncf.py: tables 0-1 feed the GMF (matrix factorisation) branch, tables 2-3
  // the MLP tower over their concatenation (2 x 64 -> 256-256-128-64, ReLU after every layer), and
  // the final layer maps [GMF, tower] (64 + 64) to ncf.json's last width, 64, with ReLU. The table
  // lists 512 dense features (arch_mlp_bot) that the model never reads: here the batch carries
  // one dense column, read by no layer.
  Spec s;
  s.name = "ncf";
  s.doc =
      "Neural collaborative filtering (NeuMF): a GMF branch (user x item embeddings, element-wise) "
      "and an MLP tower 256-256-128-64 over two more user/item embeddings, joined by a final "
      "layer of 64 ReLU units; no dense features";
  s.dense = 1;
  s.dim = 64;
  s.tables = {{"user_mf", 140'000}, {"item_mf", 140'000}, {"user_mlp", 28'000}, {"item_mlp", 28'000}};
  for (int i = 0; i < 4; ++i) s.features.push_back({s.tables[i].name, i, 1, false});
  s.gmf = {0, 1};
  s.top = {256, 256, 128, 64};
  s.predict = {64};
  return s;
}

Spec din() {
  Spec s;
  s.name = "din";
  s.doc =
      "Deep Interest Network: a 250-item behaviour sequence attended with the candidate item, "
      "user/context/candidate embeddings (3 lookups each), MLP 200-80-2 with softmax";
  s.dense = 1;
  s.dim = 32;
  s.tables = {{"user", 1'000'000}, {"context", 100'000}, {"item", 10'000'000}, {"category", 10'000'000}};
  s.features = {{"user", 0, 3, false},
                {"context", 1, 3, false},
                {"candidate_item", 2, 3, false},
                {"candidate_category", 3, 3, false},
                {"history", 2, 250, true}};
  s.sequence_op = SequenceOp::Attention;
  s.query_feature = 2;
  s.top = {200, 80, 2};
  return s;
}

Spec dien() {
  Spec s;
  s.name = "dien";
  s.doc =
      "Deep Interest Evolution Network: a GRU over a 50-item behaviour sequence, its states "
      "attended with the candidate item, 43 one-hot embeddings and 512 dense features, MLP "
      "200-80-2 with softmax";
  s.dense = 512;
  s.dim = 32;
  add_tables(s, "table", 41, 500'000, 1);
  add_tables(s, "item", 2, 5'000'000, 1);
  s.features.push_back({"history", 41, 50, true});
  s.sequence_op = SequenceOp::GruAttention;
  s.query_feature = 41;
  s.top = {200, 80, 2};
  return s;
}

std::vector<Spec> catalogue() {
  std::vector<Spec> all;
  all.push_back(dlrm("rm1", "DLRM RM1: 8 tables x 4M rows, 80 lookups each, bottom 128-64-32, top 256-64-1", 128,
                     {64, 32}, 32, 8, 4'000'000, 80, {256, 64, 1}));
  all.push_back(dlrm("rm2", "DLRM RM2: 32 tables x 500k rows, 120 lookups each, bottom 256-128-64, top 128-64-1", 256,
                     {128, 64}, 64, 32, 500'000, 120, {128, 64, 1}));
  all.push_back(dlrm("rm3", "DLRM RM3: 10 tables x 2M rows, 20 lookups each, bottom 2560-1024-256-32, top 512-256-1",
                     2560, {1024, 256, 32}, 32, 10, 2'000'000, 20, {512, 256, 1}));
  all.push_back(wide_and_deep());
  all.push_back(multi_task_wide_and_deep());
  all.push_back(ncf());
  all.push_back(din());
  all.push_back(dien());
  return all;
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& s : catalogue()) names.push_back(s.name);
  return names;
}

Spec builtin(const std::string& name) {
  for (auto& s : catalogue()) {
    if (s.name == name) {
      s.validate();
      return s;
    }
  }
  std::string choices;
  for (const auto& n : model_names()) choices += (choices.empty() ? "" : ", ") + n;
  throw KeyError(str("recsys model '", name, "' is unknown; choose one of: ", choices));
}

}  // namespace servelab::exec::recsys
