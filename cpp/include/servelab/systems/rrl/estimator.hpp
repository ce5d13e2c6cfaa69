// The latency estimation function f of RRL (Sec. 4.2.1 and 5.1): a multilayer perceptron with two
// hidden layers of 256 and 64 ReLU units and a linear output, trained online with
// Follow-the-Regularized-Leader.
//
// Input: the normalised configuration (ConfigSpace::coords) and the load (arrival rate divided by
// a rate scale), as the artifact's 4-input network (rate + 3 knobs). Output: ln(latency_ms) minus
// the first observation's, so that latency spanning orders of magnitude (queues blowing up) stays a
// well-scaled regression target; the loss is Huber (delta 1 on that log scale, as the artifact uses
// a Huber loss). Training: each call of observe() adds the sample to a replay memory (all previous
// observations, as the paper trains "with all previous seen samples") and takes train_steps FTRL
// steps on minibatches of the newest sample plus batch-1 samples drawn uniformly from memory (and,
// with plateau_patience > 0, more steps until the loss over the memory stops improving).
//
// FTRL-Proximal (McMahan et al., KDD'13), per coordinate: n += g^2, sigma = (sqrt(n) - sqrt(n_old)) /
// alpha, z += g - sigma * (w - w0), w = w0 - (z - sign(z) l1) / ((beta + sqrt(n)) / alpha + l2) where
// |z| > l1, else w0. It runs on the displacement from the seeded initial weights w0: TensorFlow's
// dense FTRL (which the paper used) starts from z = 0 and so resets every weight whose first
// gradient is zero to 0, which for a ReLU network silences units for good.
//
// Region estimates (Eq. 1): rhat(c) = r_t * exp(g(c) - g(c_t)) for the network's output g, so that
// f(c_t, r_t) = r_t exactly, as the paper requires, and the network supplies the relative change.
// Float arithmetic, in the backend EstimatorOptions::backend names (estimator_backend.hpp: "eigen"
// built in, "libtorch" from servelab._torch); all randomness from the seed, drawn here, so every
// backend starts from the same weights and trains on the same minibatches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace servelab::rrl {

struct EstimatorOptions {
  int hidden1 = 256;
  int hidden2 = 64;
  double alpha = 0.05;  // FTRL learning rate
  double beta = 1.0;
  double l1 = 0.0;
  double l2 = 0.0;
  int batch = 4;        // minibatch size (the newest sample + batch-1 replayed)
  int train_steps = 1;  // FTRL steps per observation
  // Retraining to a plateau, as the artifact does after every observation (it trains until its
  // loss over all samples has not improved in 10 checks 100 steps apart): > 0, after the
  // train_steps, keep training and every plateau_every steps compute the Huber loss over the
  // memory (at most 256 samples, evenly spaced, the newest included); stop once it has not
  // improved plateau_patience checks in a row, or after max_train_steps steps in all. 0: off.
  int plateau_patience = 0;
  int plateau_every = 10;
  int max_train_steps = 500;
  std::size_t memory = 100000;    // replay memory (oldest forgotten first)
  std::string backend = "eigen";  // where the arithmetic runs (estimator_backend.hpp)
  void validate() const;
};

class LatencyEstimator {
 public:
  // inputs: the number of input features (configuration dimensions + 1 for the load).
  LatencyEstimator(std::size_t inputs, EstimatorOptions options, std::uint64_t seed);
  ~LatencyEstimator();
  LatencyEstimator(LatencyEstimator&&) noexcept;
  LatencyEstimator& operator=(LatencyEstimator&&) noexcept;

  std::size_t inputs() const;
  std::size_t parameters() const;  // weights and biases
  std::size_t samples() const;     // observations in memory
  const std::string& backend() const;
  std::vector<float> weights() const;  // the current weights (layout: estimator_backend.hpp)

  // Adds (x, latency_ms) and trains. x: inputs() features; latency_ms positive and finite.
  void observe(std::span<const float> x, double latency_ms);
  // FTRL steps taken so far, over all observations.
  std::int64_t steps_trained() const;
  // The network's output g(x) (log latency relative to the first observation) for `count` inputs
  // stored row by row in xs; out gets `count` values.
  void predict_log(std::span<const float> xs, std::size_t count, std::span<float> out) const;
  // exp(g(x)) scaled back to ms: the predicted latency for one input.
  double predict_ms(std::span<const float> x) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace servelab::rrl
