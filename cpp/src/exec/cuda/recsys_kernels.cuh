// The recommendation models' stages other than the MLPs, as CUDA kernels queued on a stream:
// every embedding bag of a batch in one launch, DLRM's dot interaction, behaviour-sequence
// attention (DIN, DIEN), a GRU step's gates (DIEN), NCF's GMF product and a softmax over each row's
// classes. They
// compute what the shared host code in exec/recsys/model.cpp computes, in float.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace servelab::exec::cuda {

// One pooled feature, or one step of the behaviour sequence, of every sample of a batch: it sums
// `lookups` rows of `table` from sample b's indices at column `index_column`, into target
// `target` (0 or 1) at row b, columns [out_column, out_column + dim).
struct BagJobOnDevice {
  const float* table;
  long long index_column;
  long long out_column;
  int lookups;
  int target;
};

struct BagTargets {
  float* base[2];
  long long stride[2];  // floats between samples' rows
};

// Every job for samples [0, rows): one warp per (sample, job), lanes over the embedding width.
// Indices are int32 (stage_inputs narrows and checks them), index_stride of them per sample.
void launch_embedding_bags(const BagJobOnDevice* jobs, int job_count, const int* indices, long long index_stride,
                           long long rows, int dim, BagTargets targets, cudaStream_t stream);

// z[b, 0:dim] = v_0 and z[b, dim + k] = <v_i, v_j> for the k-th pair i > j (torch.tril_indices
// order), where vectors[b] holds v_0 .. v_{count-1}, dim floats each.
void launch_dot_interaction(const float* vectors, int count, int dim, long long rows, float* z, long long z_stride,
                            cudaStream_t stream);

// out[b] = sum_s softmax_s(<query[b], states[b, s]> / sqrt(dim)) states[b, s]; states are
// [rows, steps * dim].
void launch_attention(const float* query, long long query_stride, const float* states, int steps, int dim,
                      long long rows, float* out, long long out_stride, cudaStream_t stream);

// One torch.nn.GRU step for every sample (gates r, z, n): xi = W_ih x + b_ih at row stride
// xi_stride, hh = W_hh h + b_hh ([rows, 3 dim]); h ([rows, dim]) is updated in place and copied to
// states (row stride states_stride).
void launch_gru_step(const float* xi, long long xi_stride, const float* hh, float* h, float* states,
                     long long states_stride, long long rows, int dim, cudaStream_t stream);

// NCF's GMF branch: out[b, c] = pair[b, c] * pair[b, dim + c] for c < dim, pair [rows, 2 dim],
// out with row stride out_stride.
void launch_gmf_product(const float* pair, long long rows, int dim, float* out, long long out_stride,
                        cudaStream_t stream);

// Each row of x ([rows, cols]) replaced by its softmax.
void launch_softmax_rows(float* x, long long rows, int cols, cudaStream_t stream);

}  // namespace servelab::exec::cuda
