#include "servelab/workload/modulated_arrivals.hpp"

#include <algorithm>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <functional>
#include <numbers>
#include <utility>

#include "format.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::workload {

using detail::num;
using detail::positive_finite;

namespace {

constexpr double kNanosPerSecondD = 1e9;
constexpr Nanos kMaxNanos = std::numeric_limits<Nanos>::max();

// Poisson arrivals at a rate that is constant within each period; the rate of period k is
// rate_of(k, rates_rng). Times are the period start (whole ns) plus the offset into the period,
// so rounding never accumulates across periods.
class PeriodCursor final : public ArrivalCursor {
 public:
  using RateOf = std::function<double(std::int64_t, Rng&)>;
  PeriodCursor(Rng rng, Nanos period_ns, RateOf rate_of)
      : gaps_(std::move(rng)), rates_(gaps_.derive("rates")), period_ns_(period_ns), rate_of_(std::move(rate_of)) {
    rate_ = rate_of_(0, rates_);
  }

  std::optional<Nanos> next() override {
    for (int empty = 0;; ++empty) {
      if (rate_ > 0) {
        offset_ns_ += exp_(gaps_.engine()) * (kNanosPerSecondD / rate_);
        if (offset_ns_ < static_cast<double>(period_ns_)) return start_ + static_cast<Nanos>(offset_ns_);
      }
      // Past the period's end: the next period starts afresh (the exponential is memoryless).
      if (start_ > kMaxNanos - 2 * period_ns_) {
        throw RuntimeError("the next arrival time is beyond the representable range of about 292 years");
      }
      start_ += period_ns_;
      offset_ns_ = 0;
      rate_ = rate_of_(++period_, rates_);
      if (empty % 1024 == 1023) core::check_interrupt();
    }
  }

 private:
  Rng gaps_, rates_;
  Nanos period_ns_;
  RateOf rate_of_;
  boost::random::exponential_distribution<double> exp_{1.0};
  std::int64_t period_ = 0;
  Nanos start_ = 0;
  double offset_ns_ = 0;
  double rate_ = 0;
};

Nanos period_nanos(double seconds, const char* field) {
  if (!positive_finite(seconds) || seconds * kNanosPerSecondD < 1 || seconds > 1e9) {
    throw ValueError(str(field, "=", num(seconds), " must be between 1 ns and 1e9 s"));
  }
  return static_cast<Nanos>(std::llround(seconds * kNanosPerSecondD));
}

void check_positive(double value, const char* field) {
  if (!positive_finite(value)) throw ValueError(str(field, "=", num(value), " must be positive and finite"));
}

void check_fraction(double value, const char* field, bool closed_top) {
  const bool ok = std::isfinite(value) && value >= 0 && (closed_top ? value <= 1 : value < 1);
  if (!ok) throw ValueError(str(field, "=", num(value), closed_top ? " must be in [0, 1]" : " must be in [0, 1)"));
}

}  // namespace

DynamicPoisson::DynamicPoisson(double rate, double period_s, double spread)
    : rate_(rate), period_s_(period_s), spread_(spread) {
  check_positive(rate, "rate");
  period_nanos(period_s, "period_s");
  check_fraction(spread, "spread", false);
}

std::unique_ptr<ArrivalCursor> DynamicPoisson::start(Rng rng) const {
  const double lo = rate_ * (1 - spread_), hi = rate_ * (1 + spread_);
  return std::make_unique<PeriodCursor>(std::move(rng), period_nanos(period_s_, "period_s"),
                                        [lo, hi](std::int64_t, Rng& r) {
                                          if (hi <= lo) return lo;
                                          return boost::random::uniform_real_distribution<double>(lo, hi)(r.engine());
                                        });
}

std::string DynamicPoisson::describe() const {
  return str("dynamic_poisson(rate=", num(rate_), ", period_s=", num(period_s_), ", spread=", num(spread_), ")");
}

Spiky::Spiky(double rate, double step_s, double cycle_s, double amplitude, double jitter, double spike_prob,
             double spike_max)
    : rate_(rate),
      step_s_(step_s),
      cycle_s_(cycle_s),
      amplitude_(amplitude),
      jitter_(jitter),
      spike_prob_(spike_prob),
      spike_max_(spike_max) {
  check_positive(rate, "rate");
  period_nanos(step_s, "step_s");
  check_positive(cycle_s, "cycle_s");
  check_fraction(amplitude, "amplitude", false);
  if (!(std::isfinite(jitter) && jitter >= 0 && jitter <= 1)) {
    throw ValueError(str("jitter=", num(jitter), " must be in [0, 1]"));
  }
  check_fraction(spike_prob, "spike_prob", true);
  if (!(std::isfinite(spike_max) && spike_max >= 2 && spike_max <= 1000)) {
    throw ValueError(str("spike_max=", num(spike_max), " must be in [2, 1000]"));
  }
}

std::unique_ptr<ArrivalCursor> Spiky::start(Rng rng) const {
  // base makes the long-run mean `rate`: sin averages out; a spike multiplies by (2 + max) / 2 on average.
  const double base = rate_ / (1 - spike_prob_ + spike_prob_ * (2 + spike_max_) / 2);
  const double step = step_s_, cycle = cycle_s_, amplitude = amplitude_, jitter = jitter_;
  const double prob = spike_prob_, spike_max = spike_max_;
  return std::make_unique<PeriodCursor>(std::move(rng), period_nanos(step_s_, "step_s"), [=](std::int64_t k, Rng& r) {
    const double t = static_cast<double>(k) * step;
    double value = base * (1 + amplitude * std::sin(2 * std::numbers::pi * t / cycle));
    const double noise = boost::random::normal_distribution<double>(0, 1)(r.engine());
    value *= std::max(0.1, 1 + jitter * noise);
    if (r.uniform() < prob) value *= boost::random::uniform_real_distribution<double>(2, spike_max)(r.engine());
    return value;
  });
}

std::string Spiky::describe() const {
  return str("spiky(rate=", num(rate_), ", step_s=", num(step_s_), ", cycle_s=", num(cycle_s_),
             ", amplitude=", num(amplitude_), ", jitter=", num(jitter_), ", spike_prob=", num(spike_prob_),
             ", spike_max=", num(spike_max_), ")");
}

}  // namespace servelab::workload
