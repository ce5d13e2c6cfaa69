#include "servelab/systems/rrl/deep_rl.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <deque>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/rng.hpp"

namespace servelab::rrl {

void DeepRlOptions::validate() const {
  const auto require = [](bool ok, const char* field, double value, const char* rule) {
    if (!ok) throw ValueError(str("deep-RL ", field, "=", value, " ", rule));
  };
  require(hidden >= 0 && hidden <= 4096, "hidden", hidden, "must be in 0..4096 (0: the method's default)");
  require(std::isfinite(learning_rate) && learning_rate > 0 && learning_rate <= 1, "learning_rate", learning_rate,
          "must be in (0, 1]");
  require(std::isfinite(gamma) && gamma >= 0 && gamma < 1, "gamma", gamma, "must be in [0, 1)");
  require(epsilon_steps >= 1, "epsilon_steps", epsilon_steps, "must be >= 1");
  require(batch >= 1 && batch <= 4096, "batch", batch, "must be in 1..4096");
  require(target_every >= 1, "target_every", target_every, "must be >= 1");
  require(trajectory >= 1 && trajectory <= 100000, "trajectory", trajectory, "must be in 1..100000");
  require(memory >= 1, "memory", static_cast<double>(memory), "must be >= 1");
}

namespace {

using Matrix = Eigen::MatrixXf;
using Vector = Eigen::VectorXf;

// A fully connected ReLU network with a linear output layer, trained by RMSProp (decay 0.9).
class DenseNet {
 public:
  DenseNet(const std::vector<int>& sizes, Rng& rng) {
    for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
      const double limit = std::sqrt(6.0 / sizes[l]);
      Matrix w(sizes[l + 1], sizes[l]);
      for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = static_cast<float>((2 * rng.uniform() - 1) * limit);
      w_.push_back(w);
      b_.push_back(Vector::Zero(sizes[l + 1]));
      sw_.push_back(Matrix::Zero(w.rows(), w.cols()));
      sb_.push_back(Vector::Zero(sizes[l + 1]));
    }
    gw_ = sw_;
    gb_ = sb_;
  }

  // Outputs for the inputs in the columns of x; keeps the activations for backward().
  const Matrix& forward(const Matrix& x) {
    acts_.resize(w_.size() + 1);
    acts_[0] = x;
    for (std::size_t l = 0; l < w_.size(); ++l) {
      acts_[l + 1].noalias() = w_[l] * acts_[l];
      acts_[l + 1].colwise() += b_[l];
      if (l + 1 < w_.size()) acts_[l + 1] = acts_[l + 1].cwiseMax(0.0f);
    }
    return acts_.back();
  }
  Matrix predict(const Matrix& x) const {
    Matrix a = x;
    for (std::size_t l = 0; l < w_.size(); ++l) {
      Matrix z = w_[l] * a;
      z.colwise() += b_[l];
      a = l + 1 < w_.size() ? Matrix(z.cwiseMax(0.0f)) : z;
    }
    return a;
  }
  // Gradients of the loss whose derivative with respect to the outputs is d_out (after forward()).
  void backward(Matrix d) {
    for (std::size_t l = w_.size(); l-- > 0;) {
      gw_[l].noalias() = d * acts_[l].transpose();
      gb_[l] = d.rowwise().sum();
      if (l > 0) d = (w_[l].transpose() * d).cwiseProduct((acts_[l].array() > 0).cast<float>().matrix());
    }
  }
  void rmsprop(float lr) {
    constexpr float kDecay = 0.9f, kEps = 1e-6f;
    for (std::size_t l = 0; l < w_.size(); ++l) {
      sw_[l] = kDecay * sw_[l] + (1 - kDecay) * gw_[l].cwiseAbs2();
      sb_[l] = kDecay * sb_[l] + (1 - kDecay) * gb_[l].cwiseAbs2();
      w_[l].array() -= lr * gw_[l].array() / (sw_[l].array().sqrt() + kEps);
      b_[l].array() -= lr * gb_[l].array() / (sb_[l].array().sqrt() + kEps);
    }
  }
  void copy_weights(const DenseNet& other) {
    w_ = other.w_;
    b_ = other.b_;
  }

 private:
  std::vector<Matrix> w_, gw_, sw_, acts_;
  std::vector<Vector> b_, gb_, sb_;
};

Eigen::Index argmax(const Eigen::Ref<const Vector>& v) {
  Eigen::Index best = 0;
  v.maxCoeff(&best);
  return best;
}

// What both tuners share: the observation, the moves and the reward.
class KnobMover : public Tuner {
 public:
  KnobMover(const ConfigSpace& space, std::vector<Setting> settings, double rate_scale, Objective objective,
            DeepRlOptions options, std::uint64_t seed, const char* stream)
      : space_(space),
        settings_(std::move(settings)),
        rate_scale_(rate_scale),
        objective_(objective),
        options_(options),
        rng_(seed, stream) {
    options_.validate();
    objective_.validate();
    if (!(std::isfinite(rate_scale) && rate_scale > 0)) {
      throw ValueError(str("rate_scale=", rate_scale, " must be positive and finite"));
    }
    std::vector<std::int64_t> centre;
    for (const auto& k : space.knobs()) centre.push_back(k.values[(k.values.size() - 1) / 2]);
    current_ = space.index_of(centre);
  }

 protected:
  Eigen::Index actions() const { return static_cast<Eigen::Index>(2 * space_.dims() + 1); }
  Eigen::Index features() const { return static_cast<Eigen::Index>(space_.dims() + 2); }

  Vector observe(std::size_t config, double rate_qps, double cost) const {
    Vector x(features());
    const auto c = space_.coords(config);
    for (std::size_t k = 0; k < c.size(); ++k) x[static_cast<Eigen::Index>(k)] = c[k];
    x[features() - 2] = static_cast<float>(rate_qps / rate_scale_);
    x[features() - 1] = static_cast<float>(cost / 10);
    return x;
  }

  // Action a < 2 dims moves knob a / 2 one step up (even a) or down (odd a); the last keeps it.
  std::size_t apply(std::size_t config, Eigen::Index action) const {
    if (action >= actions() - 1) return config;
    const auto k = static_cast<std::size_t>(action / 2);
    const auto level = static_cast<std::int64_t>(space_.level(config, k)) + (action % 2 == 0 ? 1 : -1);
    const auto& values = space_.knobs()[k].values;
    if (level < 0 || level >= static_cast<std::int64_t>(values.size())) return config;
    auto v = space_.values(config);
    v[k] = values[static_cast<std::size_t>(level)];
    return space_.index_of(v);
  }

  double cost_of(std::size_t config, double metric_ms) const {
    return objective_.cost(metric_ms, settings_[config].resource_share);
  }

  const ConfigSpace& space_;
  std::vector<Setting> settings_;
  double rate_scale_;
  Objective objective_;
  DeepRlOptions options_;
  Rng rng_;
  std::size_t current_ = 0;
  double last_rate_ = 0, last_cost_ = 0;
};

class CapesLike final : public KnobMover {
 public:
  CapesLike(const ConfigSpace& space, std::vector<Setting> settings, double rate_scale, Objective objective,
            DeepRlOptions options, std::uint64_t seed)
      : KnobMover(space, std::move(settings), rate_scale, objective, options, seed, "rrl/capes"),
        init_(seed, "rrl/capes/init"),
        net_(sizes(), init_),
        target_(sizes(), init_) {
    target_.copy_weights(net_);
  }

  std::size_t decide(std::size_t, double rate_qps) override {
    last_rate_ = rate_qps;
    x_ = observe(current_, rate_qps, last_cost_);
    const double progress = static_cast<double>(steps_) / options_.epsilon_steps;
    const double epsilon = std::max(0.05, 1 - 0.95 * progress);
    action_ = rng_.uniform() < epsilon ? static_cast<Eigen::Index>(rng_.uniform() * static_cast<double>(actions()))
                                       : argmax(net_.predict(x_).col(0));
    current_ = apply(current_, std::min(action_, actions() - 1));
    return current_;
  }

  void learn(std::size_t, std::size_t config, double rate_qps, double metric_ms, std::size_t) override {
    last_cost_ = cost_of(config, metric_ms);
    memory_.push_back({x_, observe(config, rate_qps, last_cost_), action_, static_cast<float>(-last_cost_)});
    if (memory_.size() > options_.memory) memory_.pop_front();
    train();
    if (++steps_ % options_.target_every == 0) target_.copy_weights(net_);
  }

  std::size_t best(std::size_t) const override {
    return apply(current_, argmax(net_.predict(observe(current_, last_rate_, last_cost_)).col(0)));
  }

 private:
  struct Transition {
    Vector x, next;
    Eigen::Index action;
    float reward;
  };

  std::vector<int> sizes() const {
    const int h = options_.hidden > 0 ? options_.hidden : 200;
    return {static_cast<int>(features()), h, h, static_cast<int>(actions())};
  }

  void train() {
    const auto b =
        static_cast<Eigen::Index>(std::min<std::size_t>(static_cast<std::size_t>(options_.batch), memory_.size()));
    Matrix x(features(), b), next(features(), b);
    std::vector<const Transition*> picked(static_cast<std::size_t>(b));
    for (Eigen::Index j = 0; j < b; ++j) {
      const auto i = static_cast<std::size_t>(rng_.uniform() * static_cast<double>(memory_.size()));
      picked[static_cast<std::size_t>(j)] = &memory_[i];
      x.col(j) = memory_[i].x;
      next.col(j) = memory_[i].next;
    }
    const Matrix future = target_.predict(next);
    const Matrix& q = net_.forward(x);
    Matrix d = Matrix::Zero(q.rows(), q.cols());
    for (Eigen::Index j = 0; j < b; ++j) {
      const Transition& t = *picked[static_cast<std::size_t>(j)];
      const float y = t.reward + static_cast<float>(options_.gamma) * future.col(j).maxCoeff();
      d(t.action, j) = std::clamp(q(t.action, j) - y, -1.0f, 1.0f) / static_cast<float>(b);  // Huber
    }
    net_.backward(std::move(d));
    net_.rmsprop(static_cast<float>(options_.learning_rate));
  }

  Rng init_;
  DenseNet net_, target_;
  std::deque<Transition> memory_;
  Vector x_;
  Eigen::Index action_ = 0;
  std::int64_t steps_ = 0;
};

class DeepRmLike final : public KnobMover {
 public:
  DeepRmLike(const ConfigSpace& space, std::vector<Setting> settings, double rate_scale, Objective objective,
             DeepRlOptions options, std::uint64_t seed)
      : KnobMover(space, std::move(settings), rate_scale, objective, options, seed, "rrl/deeprm"),
        init_(seed, "rrl/deeprm/init"),
        net_({static_cast<int>(features()), options.hidden > 0 ? options.hidden : 20, static_cast<int>(actions())},
             init_) {}

  std::size_t decide(std::size_t, double rate_qps) override {
    last_rate_ = rate_qps;
    const Vector x = observe(current_, rate_qps, last_cost_);
    const Vector p = softmax(net_.predict(x).col(0));
    double u = rng_.uniform();
    Eigen::Index a = actions() - 1;
    for (Eigen::Index i = 0; i < p.size(); ++i) {
      u -= p[i];
      if (u < 0) {
        a = i;
        break;
      }
    }
    xs_.push_back(x);
    taken_.push_back(a);
    current_ = apply(current_, a);
    return current_;
  }

  void learn(std::size_t, std::size_t config, double, double metric_ms, std::size_t) override {
    last_cost_ = cost_of(config, metric_ms);
    rewards_.push_back(-last_cost_);
    if (static_cast<int>(rewards_.size()) >= options_.trajectory) update();
  }

  std::size_t best(std::size_t) const override {
    return apply(current_, argmax(net_.predict(observe(current_, last_rate_, last_cost_)).col(0)));
  }

 private:
  static Vector softmax(const Vector& logits) {
    const Vector e = (logits.array() - logits.maxCoeff()).exp().matrix();
    return e / e.sum();
  }

  // REINFORCE on the trajectory: returns minus a per-position running-mean baseline.
  void update() {
    const auto n = static_cast<Eigen::Index>(rewards_.size());
    std::vector<double> returns(rewards_.size());
    double g = 0;
    for (std::size_t t = rewards_.size(); t-- > 0;) returns[t] = g = rewards_[t] + options_.gamma * g;
    baseline_.resize(rewards_.size(), returns.front());
    Matrix x(features(), n);
    for (Eigen::Index t = 0; t < n; ++t) x.col(t) = xs_[static_cast<std::size_t>(t)];
    const Matrix& logits = net_.forward(x);
    Matrix d(logits.rows(), n);
    for (Eigen::Index t = 0; t < n; ++t) {
      const auto i = static_cast<std::size_t>(t);
      const double advantage = returns[i] - baseline_[i];
      baseline_[i] = 0.9 * baseline_[i] + 0.1 * returns[i];
      Vector grad = softmax(logits.col(t));  // d(-log pi(a)) / d logits = pi - onehot(a)
      grad[taken_[i]] -= 1;
      d.col(t) = grad * static_cast<float>(advantage / static_cast<double>(n));
    }
    net_.backward(std::move(d));
    net_.rmsprop(static_cast<float>(options_.learning_rate));
    xs_.clear();
    taken_.clear();
    rewards_.clear();
  }

  Rng init_;
  DenseNet net_;
  std::vector<Vector> xs_;
  std::vector<Eigen::Index> taken_;
  std::vector<double> rewards_, baseline_;
};

}  // namespace

std::unique_ptr<Tuner> make_deep_rl(const std::string& method, const ConfigSpace& space, std::vector<Setting> settings,
                                    double rate_scale, Objective objective, DeepRlOptions options, std::uint64_t seed) {
  if (method == "capes") {
    return std::make_unique<CapesLike>(space, std::move(settings), rate_scale, objective, options, seed);
  }
  if (method == "deeprm") {
    return std::make_unique<DeepRmLike>(space, std::move(settings), rate_scale, objective, options, seed);
  }
  throw ValueError(str("deep-RL method='", method, "' is not one of 'capes', 'deeprm'"));
}

}  // namespace servelab::rrl
