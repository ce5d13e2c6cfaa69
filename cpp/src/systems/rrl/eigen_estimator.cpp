#include "eigen_estimator.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace servelab::rrl {
namespace {

using Matrix = Eigen::MatrixXf;
using Vector = Eigen::VectorXf;
using MatrixMap = Eigen::Map<Matrix>;
using VectorMap = Eigen::Map<Vector>;
using ConstMatrixMap = Eigen::Map<const Matrix>;

constexpr float kHuberDelta = 1.0f;
// FTRL coordinates per zero-gradient check: 4 SSE / 2 AVX packets.
constexpr Eigen::Index kChunk = 16;

class EigenEstimator final : public EstimatorBackend {
 public:
  EigenEstimator(const EstimatorShape& shape, std::span<const float> initial, const EstimatorOptions& o)
      : d(static_cast<Eigen::Index>(shape.inputs)),
        h1(static_cast<Eigen::Index>(shape.hidden1)),
        h2(static_cast<Eigen::Index>(shape.hidden2)),
        options(o) {
    const auto p = static_cast<Eigen::Index>(initial.size());
    w0 = Eigen::Map<const Vector>(initial.data(), p);
    w = w0;
    z = Vector::Zero(p);
    n = Vector::Zero(p);
    sqrt_n = Vector::Zero(p);
    g = Vector::Zero(p);
    new_sqrt = Vector::Zero(kChunk);
  }

  void train_step(std::span<const float> x, std::span<const float> y) override {
    const auto b = static_cast<Eigen::Index>(y.size());
    const ConstMatrixMap batch_x(x.data(), d, b);
    const Eigen::Map<const Eigen::RowVectorXf> batch_y(y.data(), b);
    forward(batch_x, a1, a2, out);
    // Huber loss, averaged over the batch.
    dout = (out - batch_y).cwiseMax(-kHuberDelta).cwiseMin(kHuberDelta) / static_cast<float>(b);
    auto gl = layers(g);
    auto wl = layers(w);
    gl.w3.noalias() = dout * a2.transpose();
    gl.b3[0] = dout.sum();
    d2.noalias() = wl.w3.transpose() * dout;
    d2 = d2.cwiseProduct((a2.array() > 0).cast<float>().matrix());
    outer_sum(gl.w2, d2, a1);
    gl.b2 = d2.rowwise().sum();
    transposed_product(d1, wl.w2, d2);
    d1 = d1.cwiseProduct((a1.array() > 0).cast<float>().matrix());
    outer_sum(gl.w1, d1, batch_x);
    gl.b1 = d1.rowwise().sum();
    ftrl();
  }

  void predict_log(std::span<const float> xs, std::size_t count, std::span<float> result) const override {
    forward(ConstMatrixMap(xs.data(), d, static_cast<Eigen::Index>(count)), pred_a1, pred_a2, pred_out);
    for (std::size_t i = 0; i < count; ++i) result[i] = pred_out[static_cast<Eigen::Index>(i)];
  }

  std::vector<float> weights() const override { return {w.data(), w.data() + w.size()}; }

 private:
  // Views of the layers inside a flat parameter vector.
  struct Layers {
    MatrixMap w1;
    VectorMap b1;
    MatrixMap w2;
    VectorMap b2;
    MatrixMap w3;
    VectorMap b3;
  };
  Layers layers(Vector& v) const {
    float* p = v.data();
    return {MatrixMap(p, h1, d),
            VectorMap(p + h1 * d, h1),
            MatrixMap(p + h1 * d + h1, h2, h1),
            VectorMap(p + h1 * d + h1 + h2 * h1, h2),
            MatrixMap(p + h1 * d + h1 + h2 * h1 + h2, 1, h2),
            VectorMap(p + h1 * d + h1 + h2 * h1 + h2 + h2, 1)};
  }

  void forward(const Eigen::Ref<const Matrix>& x, Matrix& l1, Matrix& l2, Eigen::RowVectorXf& o) const {
    auto l = layers(const_cast<Vector&>(w));
    l1.noalias() = l.w1 * x;
    l1.colwise() += l.b1;
    l1 = l1.cwiseMax(0.0f);
    l2.noalias() = l.w2 * l1;
    l2.colwise() += l.b2;
    l2 = l2.cwiseMax(0.0f);
    o.noalias() = l.w3 * l2;
    o.array() += l.b3[0];
  }

  // FTRL-Proximal on the displacement from w0 (estimator.hpp), in chunks of kChunk coordinates.
  // A chunk whose gradients are all zero (dead ReLU units, inputs of value 0) is left as it is: with
  // g = 0 the update maps (n, sqrt_n, z, w) to themselves exactly (n + 0 = n, sqrt(n) = sqrt_n, z + 0
  // = z, w recomputed from the same z and sqrt_n), so skipping it changes no bit; it does hold only
  // once the denominator at n = 0 is positive (else 0 / 0 turns untouched weights into NaN there).
  void ftrl() {
    const auto alpha = static_cast<float>(options.alpha), beta = static_cast<float>(options.beta);
    const auto l1 = static_cast<float>(options.l1), l2 = static_cast<float>(options.l2);
    const bool may_skip = (beta + 0.0f) / alpha + l2 > 0;
    const Eigen::Index p = w.size();
    const float* gp = g.data();
    for (Eigen::Index at = 0; at < p; at += kChunk) {
      const Eigen::Index len = std::min<Eigen::Index>(kChunk, p - at);
      if (may_skip && len == kChunk && all_zero(gp + at)) continue;
      ftrl_chunk(at, len, alpha, beta, l1, l2);
    }
  }

  // out = left * right^T for a shallow depth (the batch). Eigen's GEMM there zeroes `out`, packs both
  // operands and accumulates each coefficient as 0 + l_0 r_0 + l_1 r_1 + ..., in k order, one
  // multiply and one add each (no FMA on x86-64 without -mfma; no split accumulators below its
  // peeling depth of 8), then adds that (never -0, as it starts at +0) to the zeroed `out`. This loop
  // does the same operations per coefficient without the memset and the packing, and writes a
  // column whose right-hand row is all zero (a dead ReLU unit) as the +0 Eigen's sum of zero products
  // gives for it (`left`, a gradient, is finite). Elsewhere (other depths or shapes, which Eigen
  // computes by other kernels, or FMA builds) Eigen itself.
  template <typename Out, typename Right>
  static void outer_sum(Out&& out, const Matrix& left, const Right& right) {
    const Eigen::Index rows = left.rows(), cols = right.rows(), depth = left.cols();
#if defined(__x86_64__) && !defined(__FMA__)
    const bool same_kernel = depth >= 1 && depth < 8 && rows > 1 && cols > 1 && depth + rows + cols >= 20;
#else
    const bool same_kernel = false;
#endif
    if (!same_kernel) {
      out.noalias() = left * right.transpose();
      return;
    }
    constexpr Eigen::Index kBlock = 8;  // rows summed in registers at a time
    float r[8];                         // depth < 8
    for (Eigen::Index j = 0; j < cols; ++j) {
      float* o = &out.coeffRef(0, j);
      bool dead = true;
      for (Eigen::Index k = 0; k < depth; ++k) {
        r[k] = right(j, k);
        dead &= r[k] == 0.0f;
      }
      if (dead) {
        std::fill(o, o + rows, 0.0f);
        continue;
      }
      Eigen::Index i = 0;
      for (; i + kBlock <= rows; i += kBlock) {
        float acc[kBlock] = {};
        for (Eigen::Index k = 0; k < depth; ++k) {
          const float* l = &left.coeffRef(i, k);
          for (Eigen::Index ii = 0; ii < kBlock; ++ii) acc[ii] += l[ii] * r[k];
        }
        std::copy_n(acc, kBlock, o + i);
      }
      for (; i < rows; ++i) {
        float acc = 0.0f;
        for (Eigen::Index k = 0; k < depth; ++k) acc += left(i, k) * r[k];
        o[i] = acc;
      }
    }
  }

  // out = left^T * right (the backward pass through W2). Eigen's GEMM packs the transposed W2 each
  // step; its kernels for rows in multiples of 8 (two SSE packets) accumulate each coefficient as
  // 0 + l_0 r_0 + l_1 r_1 + ... in k order into one register (the peeled steps too), with the depth
  // unblocked up to hundreds. This does the same per coefficient, 8 rows by up to 4 columns (the
  // batch, padded with zero lanes) at a time, straight from W2. Other shapes or FMA builds: Eigen.
  template <typename Left>
  void transposed_product(Matrix& out, const Left& left, const Matrix& right) {
    const Eigen::Index rows = left.cols(), depth = left.rows(), cols = right.cols();
#if defined(__x86_64__) && !defined(__FMA__)
    const bool same_kernel =
        rows % 8 == 0 && cols >= 2 && cols <= 4 && depth >= 1 && depth <= 256 && depth + rows + cols >= 20;
#else
    const bool same_kernel = false;
#endif
    if (!same_kernel) {
      out.noalias() = left.transpose() * right;
      return;
    }
    out.resize(rows, cols);
    right_rows.resize(4, depth);  // right's rows, 4 lanes each
    for (Eigen::Index k = 0; k < depth; ++k) {
      for (Eigen::Index j = 0; j < 4; ++j) right_rows(j, k) = j < cols ? right(k, j) : 0.0f;
    }
#if defined(__x86_64__) && !defined(__FMA__)
    for (Eigen::Index i = 0; i < rows; i += 8) {
      __m128 acc[8];
      for (auto& a : acc) a = _mm_setzero_ps();
      const float* l = &left.coeffRef(0, i);  // column i of W2; column i + ii is depth further
      for (Eigen::Index k = 0; k < depth; ++k) {
        const __m128 r = _mm_loadu_ps(&right_rows.coeffRef(0, k));
        for (Eigen::Index ii = 0; ii < 8; ++ii) {
          acc[ii] = _mm_add_ps(acc[ii], _mm_mul_ps(_mm_set1_ps(l[ii * depth + k]), r));
        }
      }
      for (Eigen::Index ii = 0; ii < 8; ++ii) {
        float lanes[4];
        _mm_storeu_ps(lanes, acc[ii]);
        for (Eigen::Index j = 0; j < cols; ++j) out(i + ii, j) = lanes[j];
      }
    }
#endif
  }

  // Whether kChunk gradients are all +-0: the magnitude bits OR-ed, a fixed-length loop that
  // compiles to a few vector instructions (a float compare per element with an early exit does not).
  static bool all_zero(const float* x) {
    std::uint32_t bits = 0;
    for (Eigen::Index i = 0; i < kChunk; ++i) {
      std::uint32_t b;
      std::memcpy(&b, x + i, sizeof b);
      bits |= b;
    }
    return (bits & 0x7fffffffu) == 0;
  }

  // The elementwise update of coordinates [at, at + len): the same operations, in the same order,
  // as one pass over the whole vectors. Full chunks as fixed-size arrays: unrolled packet code, no
  // alignment peeling (which a short dynamic segment spends scalar sqrt and divisions on).
  void ftrl_chunk(Eigen::Index at, Eigen::Index len, float alpha, float beta, float l1, float l2) {
    if (len == kChunk) {
      using Chunk = Eigen::Map<Eigen::Array<float, kChunk, 1>>;
      Eigen::Array<float, kChunk, 1> nsq;
      ftrl_update(Chunk(g.data() + at), Chunk(n.data() + at), Chunk(z.data() + at), Chunk(w.data() + at),
                  Chunk(w0.data() + at), Chunk(sqrt_n.data() + at), nsq, alpha, beta, l1, l2);
    } else {
      ftrl_update(g.segment(at, len).array(), n.segment(at, len).array(), z.segment(at, len).array(),
                  w.segment(at, len).array(), w0.segment(at, len).array(), sqrt_n.segment(at, len).array(),
                  new_sqrt.head(len).array(), alpha, beta, l1, l2);
    }
  }

  template <typename G, typename A, typename S>
  static void ftrl_update(const G& gs, A&& ns, A&& zs, A&& ws, A&& w0s, A&& sq, S&& nsq, float alpha, float beta,
                          float l1, float l2) {
    ns += gs.square();
    nsq = ns.sqrt();
    zs += gs - (nsq - sq) / alpha * (ws - w0s);
    sq = nsq;
    if (l1 == 0) {
      ws = w0s - zs / ((beta + sq) / alpha + l2);
    } else {
      ws = (zs.abs() > l1).select(w0s - (zs - zs.sign() * l1) / ((beta + sq) / alpha + l2), w0s);
    }
  }

  Eigen::Index d, h1, h2;
  EstimatorOptions options;
  Vector w, w0, z, n, sqrt_n, g, new_sqrt;
  Matrix a1, a2, d1, d2;
  Eigen::Matrix<float, 4, Eigen::Dynamic> right_rows;  // transposed_product's scratch
  Eigen::RowVectorXf out, dout;
  // Prediction scratch: predict_log is const but reuses these (one estimator, one thread).
  mutable Matrix pred_a1, pred_a2;
  mutable Eigen::RowVectorXf pred_out;
};

}  // namespace

std::unique_ptr<EstimatorBackend> make_eigen_estimator(const EstimatorShape& shape, std::span<const float> w0,
                                                       const EstimatorOptions& options) {
  return std::make_unique<EigenEstimator>(shape, w0, options);
}

}  // namespace servelab::rrl
