// Manual gradients under c10::InferenceMode rather than autograd: the network is fixed and small,
// so the backward pass is a dozen lines mirroring the Eigen backend's, and autograd would add a
// graph build and its bookkeeping to every step of a learner with a 50 us step budget (inference
// mode also skips the view and version tracking NoGradGuard keeps). Every
// tensor below is allocated once; the steps write into views of the flat parameter vectors, whose
// layout is the Eigen backend's (a column-major h x d matrix is a row-major d x h one, so each
// weight view is W^T).
#include "servelab/systems/rrl/torch_estimator.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <cstring>
#include <utility>

namespace servelab::rrl {
namespace {

constexpr double kHuberDelta = 1.0;

// W1^T, b1, W2^T, b2, W3^T, b3 as views of a flat parameter tensor.
struct Layers {
  torch::Tensor w1t, b1, w2t, b2, w3t, b3;
};

Layers layers(const torch::Tensor& flat, std::int64_t d, std::int64_t h1, std::int64_t h2) {
  std::int64_t at = 0;
  const auto take = [&](std::int64_t count) {
    auto v = flat.narrow(0, at, count);
    at += count;
    return v;
  };
  Layers l;
  l.w1t = take(h1 * d).view({d, h1});
  l.b1 = take(h1);
  l.w2t = take(h2 * h1).view({h1, h2});
  l.b2 = take(h2);
  l.w3t = take(h2).view({h2, 1});
  l.b3 = take(1);
  return l;
}

torch::Tensor borrow(std::span<const float> values, std::int64_t rows, std::int64_t cols) {
  // Read only: from_blob wants a mutable pointer, but nothing below writes into inputs.
  return torch::from_blob(const_cast<float*>(values.data()), {rows, cols}, torch::kFloat32);
}

class TorchEstimator final : public EstimatorBackend {
 public:
  TorchEstimator(const EstimatorShape& shape, std::span<const float> initial, const EstimatorOptions& o)
      : d(static_cast<std::int64_t>(shape.inputs)),
        h1(static_cast<std::int64_t>(shape.hidden1)),
        h2(static_cast<std::int64_t>(shape.hidden2)),
        alpha(o.alpha),
        beta(o.beta),
        l1(o.l1),
        l2(o.l2) {
    const c10::InferenceMode inference;
    const auto p = static_cast<std::int64_t>(initial.size());
    w0 = borrow(initial, 1, p).view({p}).clone();
    w = w0.clone();
    z = torch::zeros({p});
    n = torch::zeros({p});
    sqrt_n = torch::zeros({p});
    new_sqrt = torch::zeros({p});
    g = torch::zeros({p});
    tmp = torch::empty({p});
    tmp2 = torch::empty({p});
    wl = layers(w, d, h1, h2);
    gl = layers(g, d, h1, h2);
  }

  void train_step(std::span<const float> x, std::span<const float> y) override {
    const c10::InferenceMode inference;
    const auto b = static_cast<std::int64_t>(y.size());
    const auto batch_x = borrow(x, b, d);
    const auto batch_y = borrow(y, b, 1);
    torch::Tensor a1, a2;
    const auto out = forward(batch_x, a1, a2);
    // Huber loss, averaged over the batch.
    const auto dout = (out - batch_y).clamp_(-kHuberDelta, kHuberDelta).div_(static_cast<double>(b));
    torch::mm_out(gl.w3t, a2.t(), dout);
    torch::sum_out(gl.b3, dout, {0});
    const auto d2 = torch::mm(dout, wl.w3t.t()).mul_(a2.gt(0));
    torch::mm_out(gl.w2t, a1.t(), d2);
    torch::sum_out(gl.b2, d2, {0});
    const auto d1 = torch::mm(d2, wl.w2t.t()).mul_(a1.gt(0));
    torch::mm_out(gl.w1t, batch_x.t(), d1);
    torch::sum_out(gl.b1, d1, {0});
    ftrl();
  }

  void predict_log(std::span<const float> xs, std::size_t count, std::span<float> result) const override {
    const c10::InferenceMode inference;
    torch::Tensor a1, a2;
    const auto out = forward(borrow(xs, static_cast<std::int64_t>(count), d), a1, a2).contiguous();
    std::memcpy(result.data(), out.data_ptr<float>(), count * sizeof(float));
  }

  std::vector<float> weights() const override {
    const float* p = w.data_ptr<float>();
    return {p, p + w.numel()};
  }

 private:
  torch::Tensor forward(const torch::Tensor& x, torch::Tensor& a1, torch::Tensor& a2) const {
    a1 = torch::addmm(wl.b1, x, wl.w1t).relu_();
    a2 = torch::addmm(wl.b2, a1, wl.w2t).relu_();
    return torch::addmm(wl.b3, a2, wl.w3t);
  }

  // FTRL-Proximal on the displacement from w0 (estimator.hpp), in the Eigen backend's order of
  // operations; results land in w's storage, which the layer views share.
  void ftrl() {
    n.addcmul_(g, g);
    torch::sqrt_out(new_sqrt, n);
    torch::sub_out(tmp, new_sqrt, sqrt_n).div_(alpha);
    torch::sub_out(tmp2, w, w0);
    tmp.mul_(tmp2);
    torch::sub_out(tmp, g, tmp);
    z.add_(tmp);
    std::swap(sqrt_n, new_sqrt);
    tmp.copy_(sqrt_n).add_(beta).div_(alpha).add_(l2);  // the per-coordinate denominator
    if (l1 == 0) {
      torch::div_out(tmp, z, tmp);
      torch::sub_out(w, w0, tmp);
    } else {
      torch::sub_out(tmp2, z, z.sign().mul_(l1)).div_(tmp);
      w.copy_(torch::where(z.abs() > l1, w0 - tmp2, w0));
    }
  }

  std::int64_t d, h1, h2;
  double alpha, beta, l1, l2;
  torch::Tensor w, w0, z, n, sqrt_n, new_sqrt, g, tmp, tmp2;
  Layers wl, gl;
};

}  // namespace

std::unique_ptr<EstimatorBackend> make_torch_estimator(const EstimatorShape& shape, std::span<const float> w0,
                                                       const EstimatorOptions& options) {
  return std::make_unique<TorchEstimator>(shape, w0, options);
}

}  // namespace servelab::rrl
