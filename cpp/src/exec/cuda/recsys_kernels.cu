#include <algorithm>
#include <cmath>

#include "device_runtime.cuh"
#include "recsys_kernels.cuh"

namespace servelab::exec::cuda {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kBagWarpsPerBlock = 8;

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

__device__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

__device__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// Bag (sample b, job j) with b = bag / job_count, so a block's warps read one sample's row of
// indices together. The warp loads 32 of the bag's indices at once (one per lane) and hands them
// round with shuffles; each lane adds kCols columns of every row (lane, lane + 32, ...), so a row
// is read in coalesced 128-byte lines, and the unrolled loop keeps several rows in flight.
template <int kCols>
__global__ void embedding_bags_kernel(const BagJobOnDevice* __restrict__ jobs, int job_count,
                                      const int* __restrict__ indices, long long index_stride, long long bags, int dim,
                                      BagTargets targets) {
  const long long bag = static_cast<long long>(blockIdx.x) * kBagWarpsPerBlock + threadIdx.x / 32;
  if (bag >= bags) return;  // whole warps leave together, so the shuffles below see full warps
  const int lane = threadIdx.x % 32;
  const long long b = bag / job_count;
  const BagJobOnDevice job = jobs[bag - b * job_count];
  const int* idx = indices + b * index_stride + job.index_column;
  float* out = targets.base[job.target] + b * targets.stride[job.target] + job.out_column;
  for (int c0 = 0; c0 < dim; c0 += 32 * kCols) {
    float acc[kCols] = {};
    for (int l0 = 0; l0 < job.lookups; l0 += 32) {
      const int n = min(32, job.lookups - l0);
      const int mine = lane < n ? __ldg(idx + l0 + lane) : 0;
#pragma unroll 8
      for (int k = 0; k < n; ++k) {
        const float* row = job.table + static_cast<long long>(__shfl_sync(kFullMask, mine, k)) * dim + c0 + lane;
#pragma unroll
        for (int i = 0; i < kCols; ++i) {
          if (c0 + lane + 32 * i < dim) acc[i] += __ldg(row + 32 * i);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kCols; ++i) {
      if (c0 + lane + 32 * i < dim) out[c0 + lane + 32 * i] = acc[i];
    }
  }
}

// One block per sample; the sample's vectors go to shared memory with a padded row (dim + 1
// floats) so that threads reading the same column of different vectors hit different banks.
__global__ void dot_interaction_kernel(const float* __restrict__ vectors, int count, int dim, float* z,
                                       long long z_stride) {
  extern __shared__ float v[];
  const int padded = dim + 1;
  const long long b = blockIdx.x;
  const float* src = vectors + b * count * dim;
  for (int i = threadIdx.x; i < count * dim; i += blockDim.x) v[(i / dim) * padded + i % dim] = src[i];
  __syncthreads();
  float* out = z + b * z_stride;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) out[c] = v[c];
  const int pairs = count * (count - 1) / 2;
  for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
    // p = i (i - 1) / 2 + j with 0 <= j < i: invert the triangular number, then correct rounding.
    int i = static_cast<int>((1.0f + sqrtf(1.0f + 8.0f * static_cast<float>(p))) / 2.0f);
    while (i * (i - 1) / 2 > p) --i;
    while ((i + 1) * i / 2 <= p) ++i;
    const int j = p - i * (i - 1) / 2;
    float dot = 0.0f;
    for (int c = 0; c < dim; ++c) dot += v[i * padded + c] * v[j * padded + c];
    out[dim + p] = dot;
  }
}

// One block per sample: a warp per step for the scores, warp 0 for the softmax, then the threads
// over the width for the weighted sum. Shared memory holds the steps' scores.
__global__ void attention_kernel(const float* __restrict__ query, long long query_stride,
                                 const float* __restrict__ states, int steps, int dim, float* out, long long out_stride,
                                 float scale) {
  extern __shared__ float score[];
  __shared__ float total;
  const long long b = blockIdx.x;
  const float* q = query + b * query_stride;
  const float* h = states + b * steps * static_cast<long long>(dim);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int s = warp; s < steps; s += warps) {
    float part = 0.0f;
    for (int c = lane; c < dim; c += 32) part += q[c] * h[s * dim + c];
    part = warp_sum(part);
    if (lane == 0) score[s] = part * scale;
  }
  __syncthreads();
  if (warp == 0) {
    float best = -INFINITY;
    for (int s = lane; s < steps; s += 32) best = fmaxf(best, score[s]);
    best = warp_max(best);
    float sum = 0.0f;
    for (int s = lane; s < steps; s += 32) sum += (score[s] = expf(score[s] - best));
    sum = warp_sum(sum);
    if (lane == 0) total = sum;
  }
  __syncthreads();
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    float acc = 0.0f;
    for (int s = 0; s < steps; ++s) acc += score[s] / total * h[s * dim + c];
    out[b * out_stride + c] = acc;
  }
}

__global__ void gru_step_kernel(const float* __restrict__ xi, long long xi_stride, const float* __restrict__ hh,
                                float* h, float* states, long long states_stride, long long rows, int dim) {
  const long long n = rows * dim;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long b = i / dim;
    const int c = static_cast<int>(i - b * dim);
    const float* x = xi + b * xi_stride;
    const float* g = hh + b * 3 * dim;
    const float r = sigmoid(x[c] + g[c]);
    const float u = sigmoid(x[dim + c] + g[dim + c]);
    const float candidate = tanhf(x[2 * dim + c] + r * g[2 * dim + c]);
    const float next = (1.0f - u) * candidate + u * h[i];
    h[i] = next;
    states[b * states_stride + c] = next;
  }
}

// NCF's GMF branch: out[b * out_stride + c] = pair[b, c] * pair[b, dim + c] (pair is [rows, 2 dim]).
__global__ void gmf_product_kernel(const float* __restrict__ pair, long long rows, int dim, float* __restrict__ out,
                                   long long out_stride) {
  const long long n = rows * dim;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long b = i / dim;
    const int c = static_cast<int>(i - b * dim);
    const float* p = pair + b * 2 * dim;
    out[b * out_stride + c] = p[c] * p[dim + c];
  }
}

// One thread per row: the models' class counts are a handful.
__global__ void softmax_rows_kernel(float* x, long long rows, int cols) {
  const long long r = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  float* row = x + r * cols;
  float best = row[0];
  for (int c = 1; c < cols; ++c) best = fmaxf(best, row[c]);
  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) sum += (row[c] = expf(row[c] - best));
  for (int c = 0; c < cols; ++c) row[c] /= sum;
}

unsigned blocks_for(long long n, int threads) {
  return static_cast<unsigned>(std::min<long long>((n + threads - 1) / threads, 4096));
}

}  // namespace

void launch_embedding_bags(const BagJobOnDevice* jobs, int job_count, const int* indices, long long index_stride,
                           long long rows, int dim, BagTargets targets, cudaStream_t stream) {
  const long long bags = rows * job_count;
  if (bags == 0) return;
  const auto blocks = static_cast<unsigned>((bags + kBagWarpsPerBlock - 1) / kBagWarpsPerBlock);
  constexpr int threads = 32 * kBagWarpsPerBlock;
  // Columns per lane: the whole row in one pass over the indices for widths up to 128.
  if (dim <= 32) {
    embedding_bags_kernel<1>
        <<<blocks, threads, 0, stream>>>(jobs, job_count, indices, index_stride, bags, dim, targets);
  } else if (dim <= 64) {
    embedding_bags_kernel<2>
        <<<blocks, threads, 0, stream>>>(jobs, job_count, indices, index_stride, bags, dim, targets);
  } else {
    embedding_bags_kernel<4>
        <<<blocks, threads, 0, stream>>>(jobs, job_count, indices, index_stride, bags, dim, targets);
  }
  check(cudaGetLastError(), "embedding_bags_kernel launch");
}

void launch_dot_interaction(const float* vectors, int count, int dim, long long rows, float* z, long long z_stride,
                            cudaStream_t stream) {
  if (rows == 0) return;
  const std::size_t shared = static_cast<std::size_t>(count) * (dim + 1) * sizeof(float);
  dot_interaction_kernel<<<static_cast<unsigned>(rows), 128, shared, stream>>>(vectors, count, dim, z, z_stride);
  check(cudaGetLastError(), "dot_interaction_kernel launch");
}

void launch_attention(const float* query, long long query_stride, const float* states, int steps, int dim,
                      long long rows, float* out, long long out_stride, cudaStream_t stream) {
  if (rows == 0) return;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  const std::size_t shared = static_cast<std::size_t>(steps) * sizeof(float);
  attention_kernel<<<static_cast<unsigned>(rows), 128, shared, stream>>>(query, query_stride, states, steps, dim, out,
                                                                         out_stride, scale);
  check(cudaGetLastError(), "attention_kernel launch");
}

void launch_gru_step(const float* xi, long long xi_stride, const float* hh, float* h, float* states,
                     long long states_stride, long long rows, int dim, cudaStream_t stream) {
  const long long n = rows * dim;
  if (n == 0) return;
  gru_step_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(xi, xi_stride, hh, h, states, states_stride, rows, dim);
  check(cudaGetLastError(), "gru_step_kernel launch");
}

void launch_gmf_product(const float* pair, long long rows, int dim, float* out, long long out_stride,
                        cudaStream_t stream) {
  const long long n = rows * dim;
  if (n == 0) return;
  gmf_product_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(pair, rows, dim, out, out_stride);
  check(cudaGetLastError(), "gmf_product_kernel launch");
}

void launch_softmax_rows(float* x, long long rows, int cols, cudaStream_t stream) {
  if (rows == 0) return;
  softmax_rows_kernel<<<static_cast<unsigned>((rows + 127) / 128), 128, 0, stream>>>(x, rows, cols);
  check(cudaGetLastError(), "softmax_rows_kernel launch");
}

}  // namespace servelab::exec::cuda
