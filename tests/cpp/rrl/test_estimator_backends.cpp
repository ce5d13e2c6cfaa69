// The estimator's backend seam (estimator_backend.hpp): the registry, and that the built-in Eigen
// backend behind it computes what the estimator computed before the seam existed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/systems/rrl/estimator.hpp"
#include "servelab/systems/rrl/estimator_backend.hpp"

namespace servelab::rrl {
namespace {

// A deterministic synthetic latency surface over 4 inputs (3 knobs and the load), no RNG; the
// latency is computed from the double inputs, as the Python script that recorded the values did.
std::vector<double> point(int i) {
  return {(i * 7 % 11) / 10.0, (i * 5 % 13) / 12.0, (i * 3 % 7) / 6.0, (i % 5) / 4.0};
}
std::vector<float> input(int i) {
  const auto p = point(i);
  return {p.begin(), p.end()};
}
double latency_ms(int i) {
  const auto v = point(i);
  return 5.0 + 40.0 * v[0] * v[0] + 20.0 * std::abs(v[1] - 0.5) + 30.0 * v[2] * v[3];
}

LatencyEstimator trained(const std::string& backend) {
  EstimatorOptions o;
  o.backend = backend;
  LatencyEstimator f(4, o, 7);
  for (int i = 0; i < 200; ++i) f.observe(input(i), latency_ms(i));
  return f;
}

TEST(RrlEstimatorBackends, EigenPredictionsAreThoseRecordedBeforeTheBackendSeam) {
  // predict_ms of seed 7 after 200 observations, recorded from the estimator before it delegated
  // its arithmetic to a backend. predict_ms = exp(y0 + g) with g a float, so a changed bit of g
  // moves these by far more than DOUBLE_EQ's 4 ulps.
  const std::vector<double> recorded{17.72282439422554, 23.067573645782826, 15.450932859370033, 48.87886620729318,
                                     46.22340486795945};
  const auto f = trained("eigen");
  EXPECT_EQ(f.backend(), "eigen");
  for (std::size_t k = 0; k < recorded.size(); ++k) {
    EXPECT_DOUBLE_EQ(f.predict_ms(input(1000 + static_cast<int>(k) * 17)), recorded[k]) << "point " << k;
  }
}

TEST(RrlEstimatorBackends, UnknownBackendIsAValueErrorNamingItAndTheRegisteredOnes) {
  EstimatorOptions o;
  o.backend = "tpu";
  try {
    LatencyEstimator f(4, o, 7);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("backend='tpu'"), std::string::npos) << what;
    EXPECT_NE(what.find("eigen"), std::string::npos) << what;
    EXPECT_NE(what.find("servelab.backends.require('torch')"), std::string::npos) << what;
  }
}

// Delegates to Eigen and counts calls: what the core hands a backend.
struct Seen {
  std::vector<float> w0;
  int steps = 0;
  std::vector<std::size_t> batch_sizes;
};

class CountingBackend final : public EstimatorBackend {
 public:
  CountingBackend(std::unique_ptr<EstimatorBackend> inner, Seen* seen) : inner_(std::move(inner)), seen_(seen) {}
  void train_step(std::span<const float> x, std::span<const float> y) override {
    ++seen_->steps;
    seen_->batch_sizes.push_back(y.size());
    inner_->train_step(x, y);
  }
  void predict_log(std::span<const float> xs, std::size_t count, std::span<float> out) const override {
    inner_->predict_log(xs, count, out);
  }
  std::vector<float> weights() const override { return inner_->weights(); }

 private:
  std::unique_ptr<EstimatorBackend> inner_;
  Seen* seen_;
};

TEST(RrlEstimatorBackends, ARegisteredBackendGetsTheSeededWeightsAndTheSameMinibatches) {
  static Seen seen;
  register_estimator_backend(
      "test-counting",
      [](const EstimatorShape& shape, std::span<const float> w0, const EstimatorOptions& o) {
        seen.w0.assign(w0.begin(), w0.end());
        return std::make_unique<CountingBackend>(make_estimator_backend("eigen", shape, w0, o), &seen);
      },
      "tests");
  EXPECT_TRUE(has_estimator_backend("test-counting"));
  EXPECT_EQ(estimator_backend_origin("test-counting"), "tests");
  EXPECT_EQ(estimator_backend_origin("eigen"), "servelab._core");
  const auto names = estimator_backends();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));

  const auto counting = trained("test-counting");
  const auto eigen = trained("eigen");
  EXPECT_EQ(seen.w0, initial_estimator_weights({4, 256, 64}, 7));
  EXPECT_EQ(counting.parameters(), seen.w0.size());
  EXPECT_EQ(seen.steps, 200);
  EXPECT_EQ(seen.batch_sizes.front(), 1u);  // only the newest sample is in memory at first
  EXPECT_EQ(seen.batch_sizes.back(), 4u);
  // The same draws and the same arithmetic: the same weights bit for bit.
  EXPECT_EQ(counting.weights(), eigen.weights());
}

TEST(RrlEstimatorBackends, ANameIsNotTakenOverByAnotherModule) {
  const EstimatorBackendFactory eigen = [](const EstimatorShape& s, std::span<const float> w0,
                                           const EstimatorOptions& o) {
    return make_estimator_backend("eigen", s, w0, o);
  };
  EXPECT_THROW(register_estimator_backend("eigen", eigen, "servelab._other"), ValueError);
  register_estimator_backend("test-twice", eigen, "tests");
  EXPECT_NO_THROW(register_estimator_backend("test-twice", eigen, "tests"));  // the same module again
  EXPECT_THROW(register_estimator_backend("test-twice", eigen, "servelab._other"), ValueError);
  EXPECT_THROW(register_estimator_backend("", eigen, "tests"), ValueError);
}

}  // namespace
}  // namespace servelab::rrl
