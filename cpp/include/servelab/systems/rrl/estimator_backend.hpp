// Where the latency estimator's arithmetic runs. LatencyEstimator (estimator.hpp) owns everything
// that decides *what* is learnt - the seeded initial weights, the replay memory, the minibatch
// draws, the log-latency targets - and hands each minibatch to an EstimatorBackend, which only does
// the maths: the forward pass and one FTRL-Proximal step. So two backends given the same seed start
// from the same weights and see the same minibatches; they differ only in float rounding.
//
// Backends by name: "eigen" is built in; "libtorch" joins when servelab._torch loads (it links
// LibTorch, which the core must not need). Other modules join through the same registry.
//
// Parameter layout (flat, float32): W1 (hidden1 x inputs, column-major), b1 (hidden1), W2
// (hidden2 x hidden1, column-major), b2 (hidden2), W3 (1 x hidden2), b3 (1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "servelab/systems/rrl/estimator.hpp"

namespace servelab::rrl {

struct EstimatorShape {
  std::size_t inputs = 0;
  std::size_t hidden1 = 0;
  std::size_t hidden2 = 0;
  std::size_t parameters() const { return hidden1 * inputs + hidden1 + hidden2 * hidden1 + hidden2 + hidden2 + 1; }
};

class EstimatorBackend {
 public:
  virtual ~EstimatorBackend() = default;
  // One FTRL-Proximal step (estimator.hpp) on the Huber loss of a minibatch: x holds y.size()
  // inputs one after another (a column-major inputs x batch matrix), y their targets.
  virtual void train_step(std::span<const float> x, std::span<const float> y) = 0;
  // The network's output for `count` inputs stored one after another in xs.
  virtual void predict_log(std::span<const float> xs, std::size_t count, std::span<float> out) const = 0;
  // The current weights in the layout above.
  virtual std::vector<float> weights() const = 0;
};

// Builds a backend starting at the weights w0 (shape.parameters() values). options are validated.
using EstimatorBackendFactory = std::function<std::unique_ptr<EstimatorBackend>(
    const EstimatorShape& shape, std::span<const float> w0, const EstimatorOptions& options)>;

// The seeded initial weights every backend starts from (stream "rrl/estimator/init" of seed).
std::vector<float> initial_estimator_weights(const EstimatorShape& shape, std::uint64_t seed);

// Adds a backend; `origin` names the module it came from. ValueError if the name is taken by
// another origin (a built-in name is never replaced).
void register_estimator_backend(const std::string& name, EstimatorBackendFactory factory, const std::string& origin);
bool has_estimator_backend(const std::string& name);
std::vector<std::string> estimator_backends();                  // registered names, sorted
std::string estimator_backend_origin(const std::string& name);  // "" for an unknown name
// ValueError naming `backend` and the registered ones for a name not registered.
std::unique_ptr<EstimatorBackend> make_estimator_backend(const std::string& name, const EstimatorShape& shape,
                                                         std::span<const float> w0, const EstimatorOptions& options);

}  // namespace servelab::rrl
