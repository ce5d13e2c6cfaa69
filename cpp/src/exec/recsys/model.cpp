#include "servelab/exec/recsys/model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <utility>

#include "activations.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/memory.hpp"

namespace servelab::exec::recsys {
namespace {

constexpr double kCheckMemoryAbove = 64e6;  // bytes

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// The GRU gates and the attention are loops of float arithmetic, compiled for AVX-512, AVX2 and
// baseline x86-64 (the loader picks the best the CPU has): 16 lanes instead of the baseline's 4.
// No clone has FMA, so the elementwise gates are bit-identical on every clone (the attention's
// sums are reassociated by the lane count). Not under ThreadSanitizer, whose instrumented resolver
// would run before the sanitizer's runtime is up.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define SERVELAB_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SERVELAB_VECTOR_CLONES
#endif

// One torch.nn.GRU step for all samples: xi = W_ih x + b_ih and hh = W_hh h + b_hh ([rows, 3 dim],
// gates r, z, n); h is updated in place. The loops over the width vectorise (activations.hpp).
SERVELAB_VECTOR_CLONES void gru_step(const float* xi, std::int64_t xi_stride, const Matrix& hh, Matrix& h,
                                     std::int64_t dim) {
  for (std::int64_t b = 0; b < h.rows; ++b) {
    const float* __restrict x = xi + b * xi_stride;
    const float* __restrict g = &hh.data[static_cast<std::size_t>(b * 3 * dim)];
    float* __restrict state = &h.data[static_cast<std::size_t>(b * dim)];
#pragma omp simd
    for (std::int64_t c = 0; c < dim; ++c) {
      const float r = sigmoid_poly(x[c] + g[c]);
      const float z = sigmoid_poly(x[dim + c] + g[dim + c]);
      const float n = tanh_poly(x[2 * dim + c] + r * g[2 * dim + c]);
      state[c] = (1.0f - z) * n + z * state[c];
    }
  }
}

// Softmax attention of query q over the steps of `seq` ([rows, steps * dim]), scaled by
// 1/sqrt(dim), for samples [begin, end); the weighted sum goes to out (dim floats per sample,
// stride out_stride).
SERVELAB_VECTOR_CLONES void attend(const float* q, std::int64_t q_stride, const MatrixView& seq, std::int64_t steps,
                                   std::int64_t dim, float* out, std::int64_t out_stride, std::int64_t begin,
                                   std::int64_t end) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  std::vector<float> score(static_cast<std::size_t>(steps));
  for (std::int64_t b = begin; b < end; ++b) {
    const float* __restrict query = q + b * q_stride;
    const float* __restrict h = seq.data + b * steps * dim;
    float best = -INFINITY;
    for (std::int64_t s = 0; s < steps; ++s) {
      float dot = 0;
#pragma omp simd reduction(+ : dot)
      for (std::int64_t c = 0; c < dim; ++c) dot += query[c] * h[s * dim + c];
      score[s] = dot * scale;
      best = std::max(best, score[s]);
    }
    float total = 0;
#pragma omp simd reduction(+ : total)
    for (std::int64_t s = 0; s < steps; ++s) total += (score[s] = exp_poly(score[s] - best));
    float* __restrict o = out + b * out_stride;
    std::fill_n(o, dim, 0.0f);
    for (std::int64_t s = 0; s < steps; ++s) {
      const float weight = score[s] / total;
#pragma omp simd
      for (std::int64_t c = 0; c < dim; ++c) o[c] += weight * h[s * dim + c];
    }
  }
}

// DLRM's dot interaction: [d, <v_i, v_j> for i > j] with v_0 = d and v_1.. the pooled features,
// in the order of torch.tril_indices(n, n, -1).
void dot_interaction(const Matrix& vectors, std::int64_t count, std::int64_t dim, Matrix& z) {
  for (std::int64_t b = 0; b < z.rows; ++b) {
    const float* v = &vectors.data[static_cast<std::size_t>(b * count * dim)];
    float* out = &z.data[static_cast<std::size_t>(b * z.cols)];
    std::copy_n(v, dim, out);
    std::int64_t k = dim;
    for (std::int64_t i = 1; i < count; ++i) {
      for (std::int64_t j = 0; j < i; ++j) {
        double dot = 0;
        for (std::int64_t c = 0; c < dim; ++c) dot += static_cast<double>(v[i * dim + c]) * v[j * dim + c];
        out[k++] = static_cast<float>(dot);
      }
    }
  }
}

// Whether every index is in [0, limit[column]): one unsigned compare covers both ends (a negative
// index wraps to a huge value) and the loop has no branch, so it vectorises; a tenth of the gather's
// time for rm2 when it was a compare-and-branch per index.
SERVELAB_VECTOR_CLONES bool indices_in_range(const std::int64_t* __restrict sparse, std::int64_t rows,
                                             std::int64_t cols, const std::uint64_t* __restrict limit) {
  std::uint64_t bad = 0;
  for (std::int64_t b = 0; b < rows; ++b) {
    const std::int64_t* row = sparse + b * cols;
    for (std::int64_t c = 0; c < cols; ++c)
      bad |= static_cast<std::uint64_t>(static_cast<std::uint64_t>(row[c]) >= limit[c]);
  }
  return bad == 0;
}

void copy_columns(const Matrix& from, Matrix& to, std::int64_t column) {
  for (std::int64_t b = 0; b < from.rows; ++b) {
    std::copy_n(&from.data[static_cast<std::size_t>(b * from.cols)], from.cols,
                &to.data[static_cast<std::size_t>(b * to.cols + column)]);
  }
}

}  // namespace

RecsysModel::RecsysModel(Spec spec, Weights weights) : spec_(std::move(spec)), weights_(std::move(weights)) {
  spec_.validate();
  weights_.validate(spec_);
  for (const auto& f : spec_.features) {
    column_limit_.insert(column_limit_.end(), static_cast<std::size_t>(f.lookups),
                         static_cast<std::uint64_t>(spec_.tables[f.table].rows));
  }
}

void RecsysModel::check(const Batch& batch) const {
  check_shapes(batch);
  check_indices(batch);
}

void RecsysModel::check_before_forward(const Batch& batch) const {
  check_shapes(batch);
  if (!checks_indices_itself()) check_indices(batch);
}

void RecsysModel::check_shapes(const Batch& batch) const {
  const auto& s = spec_;
  if (batch.dense.rows < 1) throw ValueError(str("recsys model ", s.name, ": the batch is empty (dense has 0 rows)"));
  if (batch.dense.cols != s.dense) {
    throw ValueError(
        str("recsys model ", s.name, ": dense has ", batch.dense.cols, " columns, the model takes ", s.dense));
  }
  if (batch.sparse_cols != s.lookups_per_sample()) {
    throw ValueError(str("recsys model ", s.name, ": sparse has ", batch.sparse_cols, " columns, the model takes ",
                         s.lookups_per_sample(), " (the lookups of every feature)"));
  }
  if (batch.sparse_rows != batch.dense.rows) {
    throw ValueError(
        str("recsys model ", s.name, ": sparse has ", batch.sparse_rows, " rows but dense has ", batch.dense.rows));
  }
  // Activations per sample, roughly: the largest MLP layers, the interaction and the sequence.
  double floats = static_cast<double>(s.interaction_width() + 3 * s.dim);
  for (const auto& widths : Weights::mlp_widths(s)) {
    for (auto w : widths) floats += static_cast<double>(w);
  }
  if (const int seq = s.sequence_feature(); seq >= 0) floats += 5.0 * s.features[seq].lookups * s.dim;
  // Reading /proc/meminfo costs tens of microseconds, as much as a small batch's forward pass:
  // only batches whose activations come near a real share of memory are checked.
  if (const double bytes = 4.0 * floats * static_cast<double>(batch.dense.rows); bytes > kCheckMemoryAbove) {
    core::check_fits_memory(static_cast<double>(batch.dense.rows), 4.0 * floats, str("batch=", batch.dense.rows),
                            "batch", str("the activations of recsys model ", s.name));
  }
}

void RecsysModel::check_indices(const Batch& batch) const {
  if (indices_in_range(batch.sparse, batch.sparse_rows, batch.sparse_cols, column_limit_.data())) return;
  const auto& s = spec_;
  std::int64_t column = 0;
  for (const auto& f : s.features) {
    const auto rows = s.tables[f.table].rows;
    for (std::int64_t b = 0; b < batch.sparse_rows; ++b) {
      const std::int64_t* idx = batch.sparse + b * batch.sparse_cols + column;
      for (int l = 0; l < f.lookups; ++l) {
        if (idx[l] < 0 || idx[l] >= rows) {
          throw ValueError(str("recsys model ", s.name, ": sparse[", b, ", ", column + l, "]=", idx[l],
                               " is out of range for feature '", f.name, "' (table '", s.tables[f.table].name, "' has ",
                               rows, " rows)"));
        }
      }
    }
    column += f.lookups;
  }
}

// A thread team far beyond any machine's cores makes OpenMP abort the process; refuse it first.
void RecsysModel::check_threads(int threads) const {
  if (threads < 0 || threads > kMaxThreads) {
    throw ValueError(str(spec_.name, ": threads=", threads, " must be in [0, ", kMaxThreads, "]"));
  }
}

Matrix RecsysModel::run(const Batch& batch, int threads) const {
  check_threads(threads);
  check_before_forward(batch);
  return forward(batch, threads, nullptr, nullptr);
}

Matrix RecsysModel::run(const Batch& batch, int threads, InterOpPool* inter_op) const {
  check_threads(threads);
  check_before_forward(batch);
  return forward(batch, threads, nullptr, inter_op);
}

Matrix RecsysModel::run(const Batch& batch, int threads, StageTimes& times) const {
  check_threads(threads);
  check_before_forward(batch);
  const auto start = std::chrono::steady_clock::now();
  Matrix out = forward(batch, threads, &times, nullptr);
  times.total_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

bool RecsysModel::gather(const std::vector<BagJob>& jobs, std::int64_t rows, int threads) const {
  for (const auto& job : jobs) {
    core::check_interrupt();
    if (!embedding_bag_sum(job, spec_.dim, 0, rows)) return false;
  }
  return true;
}

std::vector<std::function<void()>> RecsysModel::branches(const std::function<void()>& bottom,
                                                         const std::vector<BagJob>& jobs, std::int64_t rows,
                                                         int threads, int team, std::atomic<bool>& in_range) const {
  // The bottom MLP first (usually the longest branch), then the bag jobs in `team` contiguous
  // groups of nearly equal size, so that each thread of the team has one group to take.
  std::vector<std::function<void()>> tasks{bottom};
  const auto n = static_cast<std::int64_t>(jobs.size()), groups = std::min<std::int64_t>(team, n);
  for (std::int64_t g = 0; g < groups; ++g) {
    const auto begin = jobs.begin() + n * g / groups, end = jobs.begin() + n * (g + 1) / groups;
    tasks.emplace_back([this, group = std::vector<BagJob>(begin, end), rows, threads, &in_range] {
      core::check_interrupt();
      if (!gather(group, rows, threads)) in_range = false;
    });
  }
  return tasks;
}

Matrix RecsysModel::forward(const Batch& batch, int threads, StageTimes* times, InterOpPool* inter_op) const {
  const auto& s = spec_;
  // Stage timing only when asked: the serving path pays nothing for it.
  auto timed = [times](double StageTimes::*field, auto&& work) {
    if (times == nullptr) return work();
    const auto start = std::chrono::steady_clock::now();
    auto result = work();
    (*times).*field += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  };
  auto mlp = [&](std::size_t slot, const MatrixView& in) {
    return timed(&StageTimes::mlp_s, [&] { return this->mlp(slot, in, threads); });
  };
  const std::int64_t rows = batch.dense.rows, dim = s.dim;

  // Where each feature's gather writes: pooled features into the interaction's input (cat) or the
  // vectors of the dot interaction; the behaviour sequence into its own [rows, steps * dim].
  const bool dot = s.interaction == Interaction::Dot;
  Matrix z(rows, s.interaction_width());
  Matrix vectors = dot ? Matrix(rows, (s.pooled_count() + 1) * dim) : Matrix();
  Matrix& pooled_into = dot ? vectors : z;
  const int seq = s.sequence_feature();
  const std::int64_t steps = seq >= 0 ? s.features[seq].lookups : 0;
  // Not zeroed first: the gather writes every element (DIN's is 8 MB at batch 256).
  const std::unique_ptr<float[]> sequence(seq >= 0 ? new float[static_cast<std::size_t>(rows * steps * dim)] : nullptr);
  // NCF's GMF features: each into its own dim columns of gmf_in, multiplied after the gather.
  Matrix gmf_in = s.gmf.empty() ? Matrix() : Matrix(rows, 2 * dim);
  std::vector<BagJob> jobs;
  std::vector<std::int64_t> pooled_column(s.features.size(), -1);
  std::int64_t index_column = 0, out_column = s.dense_columns();
  for (std::size_t i = 0; i < s.features.size(); ++i) {
    const auto& f = s.features[i];
    const float* table = weights_.tables[f.table].data.data();
    const std::int64_t table_rows = s.tables[f.table].rows;
    if (s.in_gmf(i)) {
      const std::int64_t at = s.gmf[0] == static_cast<int>(i) ? 0 : dim;
      jobs.push_back({table, batch.sparse + index_column, batch.sparse_cols, f.lookups, gmf_in.data.data() + at,
                      gmf_in.cols, table_rows});
    } else if (f.sequence) {
      for (std::int64_t step = 0; step < steps; ++step) {
        jobs.push_back({table, batch.sparse + index_column + step, batch.sparse_cols, 1, sequence.get() + step * dim,
                        steps * dim, table_rows});
      }
    } else {
      pooled_column[i] = out_column;
      jobs.push_back({table, batch.sparse + index_column, batch.sparse_cols, f.lookups,
                      pooled_into.data.data() + out_column, pooled_into.cols, table_rows});
      out_column += dim;
    }
    index_column += f.lookups;
  }
  // The bottom MLP and the gathers are independent: they read the batch and write apart.
  Matrix bottom;
  const auto run_bottom = [&] {
    if (!s.bottom.empty()) bottom = mlp(kBottom, batch.dense);
  };
  // The indices are checked by the gather as it reads them (one pass over them, not two); when
  // one is out of range, check_indices() finds it again to say which.
  std::atomic<bool> in_range = true;
  if (inter_op != nullptr && inter_op->threads() > 1 && times == nullptr) {
    inter_op->run(branches(run_bottom, jobs, rows, threads, inter_op->threads(), in_range));
  } else {
    run_bottom();
    core::check_interrupt();
    in_range = timed(&StageTimes::gather_s, [&] { return gather(jobs, rows, threads); });
  }
  if (!in_range) {
    check_indices(batch);
    throw RuntimeError(str("recsys model ", s.name, ": the gather found an index out of range that the check did not"));
  }
  const MatrixView d = s.bottom.empty() ? batch.dense : bottom.view();
  core::check_interrupt();

  if (dot) {
    Matrix dense_part(rows, d.cols);
    std::copy_n(d.data, rows * d.cols, dense_part.data.begin());
    copy_columns(dense_part, vectors, 0);
    dot_interaction(vectors, s.pooled_count() + 1, dim, z);
  } else if (s.dense_columns() > 0) {
    for (std::int64_t b = 0; b < rows; ++b)
      std::copy_n(d.data + b * d.cols, d.cols, &z.data[static_cast<std::size_t>(b * z.cols)]);
  }

  if (seq >= 0) {
    MatrixView states{sequence.get(), rows, steps * dim};
    Matrix gru_states;
    if (s.sequence_op == SequenceOp::GruAttention) {
      // Input projections of every step in one multiply, then the recurrence step by step.
      const Matrix xi = mlp(kGruInput, {sequence.get(), rows * steps, dim});
      Matrix h(rows, dim);
      gru_states = Matrix(rows, steps * dim);
      for (std::int64_t step = 0; step < steps; ++step) {
        core::check_interrupt();
        const Matrix hh = mlp(kGruHidden, h.view());
        gru_step(xi.data.data() + step * 3 * dim, steps * 3 * dim, hh, h, dim);
        for (std::int64_t b = 0; b < rows; ++b) {
          std::copy_n(&h.data[static_cast<std::size_t>(b * dim)], dim,
                      &gru_states.data[static_cast<std::size_t>((b * steps + step) * dim)]);
        }
      }
      states = gru_states.view();
    }
    // Each sample's attention is its own: split over the threads, the scores do not change.
    for_samples(rows, steps * dim, threads, [&](std::int64_t begin, std::int64_t end) {
      attend(z.data.data() + pooled_column[s.query_feature], z.cols, states, steps, dim, z.data.data() + z.cols - dim,
             z.cols, begin, end);
    });
  }
  core::check_interrupt();

  Matrix top = mlp(kTop, z.view());
  if (!s.predict.empty()) {
    // NCF: [GMF product, tower output] through the prediction layers, whose ReLU is the output.
    Matrix joined(rows, s.predict_in());
    for (std::int64_t b = 0; b < rows; ++b) {
      const float* g = &gmf_in.data[static_cast<std::size_t>(b * 2 * dim)];
      float* out = &joined.data[static_cast<std::size_t>(b * joined.cols)];
      for (std::int64_t c = 0; c < dim; ++c) out[c] = g[c] * g[dim + c];
      std::copy_n(&top.data[static_cast<std::size_t>(b * top.cols)], top.cols, out + dim);
    }
    return mlp(kPredict, joined.view());
  }
  if (!s.tasks.empty()) {
    // Each head's sigmoid outputs in its own columns of the output.
    Matrix out(rows, s.outputs());
    std::int64_t column = 0;
    for (std::size_t t = 0; t < s.tasks.size(); ++t) {
      const Matrix head = mlp(kFirstTask + t, top.view());
      for (std::int64_t b = 0; b < rows; ++b) {
        for (std::int64_t c = 0; c < head.cols; ++c) out.at(b, column + c) = sigmoid(head.at(b, c));
      }
      column += head.cols;
    }
    return out;
  }
  if (top.cols == 1) {
    for (auto& v : top.data) v = sigmoid(v);
    return top;
  }
  for (std::int64_t b = 0; b < rows; ++b) {  // softmax over the classes
    float* row = &top.data[static_cast<std::size_t>(b * top.cols)];
    const float best = *std::max_element(row, row + top.cols);
    float total = 0;
    for (std::int64_t c = 0; c < top.cols; ++c) total += (row[c] = std::exp(row[c] - best));
    for (std::int64_t c = 0; c < top.cols; ++c) row[c] /= total;
  }
  return top;
}

ReferenceRecsys::ReferenceRecsys(Spec spec, Weights weights) : RecsysModel(std::move(spec), std::move(weights)) {}

Matrix ReferenceRecsys::mlp(std::size_t slot, const MatrixView& input, int) const {
  const auto& layers = weights_.mlps.at(slot).layers;
  const bool relu_last = Weights::relu_after_last(spec_, slot);
  Matrix x(input.rows, input.cols);
  std::copy_n(input.data, input.rows * input.cols, x.data.begin());
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& w = layers[l].weight;
    Matrix y(x.rows, w.rows);
    for (std::int64_t b = 0; b < x.rows; ++b) {
      for (std::int64_t o = 0; o < w.rows; ++o) {
        double acc = layers[l].bias[static_cast<std::size_t>(o)];
        for (std::int64_t i = 0; i < w.cols; ++i) acc += static_cast<double>(x.at(b, i)) * w.at(o, i);
        const bool relu = l + 1 < layers.size() || relu_last;
        y.at(b, o) = static_cast<float>(relu ? std::max(acc, 0.0) : acc);
      }
    }
    x = std::move(y);
  }
  return x;
}

}  // namespace servelab::exec::recsys
