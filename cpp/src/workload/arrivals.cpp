#include "servelab/workload/arrivals.hpp"

#include <algorithm>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/gamma_distribution.hpp>
#include <boost/random/poisson_distribution.hpp>
#include <cmath>
#include <utility>

#include "format.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/memory.hpp"

namespace servelab::workload {

using detail::non_negative_finite;
using detail::num;
using detail::positive_finite;

std::size_t ArrivalCursor::next_times(Nanos* out, std::size_t n) {
  if (n == 0) return 0;
  const auto t = next();
  if (!t) return 0;
  out[0] = *t;
  return 1;
}

namespace {

constexpr Nanos kMaxNanos = std::numeric_limits<Nanos>::max();
constexpr double kNanosPerSecondD = static_cast<double>(kNanosPerSecond);

[[noreturn]] void throw_out_of_range(Nanos now) {
  throw RuntimeError(str("the next arrival time is beyond the representable range of about 292 years (last time ",
                         num(nanos_to_seconds(now)), " s)"));
}

// An engaged optional built by emplace: GCC then stores its flag as a whole word, where
// `return t;` stores one byte and reloads the word for the return registers, a failed store
// forwarding (about 15 cycles) on every arrival.
std::optional<Nanos> engaged(Nanos t) {
  std::optional<Nanos> out;
  out.emplace(t);
  return out;
}

// A point in continuous time: whole nanoseconds plus a fraction of a nanosecond in units of 2^-32.
// Arrival times are the whole part, so per-gap rounding never accumulates, however many gaps are
// summed; the running sum is pure integer arithmetic (deterministic and short to compute).
struct Instant {
  static constexpr std::uint64_t kFracOne = std::uint64_t{1} << 32;

  Nanos whole = 0;
  std::uint64_t frac = 0;  // in [0, kFracOne)

  // Advances by gap_ns >= 0 if the result stays before `limit`; returns false (unchanged) otherwise,
  // also for an infinite or NaN gap.
  bool advance_before(double gap_ns, Nanos limit) {
    Nanos step = 0;
    std::uint64_t part = 0;  // the gap's fraction of a nanosecond, in units of 2^-32
    if (gap_ns < 0x1p31) [[likely]] {
      // Below 2^31 ns (about 2 s), gap_ns * 2^32 is exact (a power-of-two scale) and below 2^63:
      // truncated, it holds both parts, the same bits as the general case in one conversion.
      const auto fixed = static_cast<std::uint64_t>(static_cast<std::int64_t>(gap_ns * 0x1p32));
      step = static_cast<Nanos>(fixed >> 32);
      part = fixed & (kFracOne - 1);
    } else if (gap_ns < 9.2e18) {
      step = static_cast<Nanos>(gap_ns);  // truncates; gap_ns - step is exact, in [0, 1)
      part = static_cast<std::uint64_t>(static_cast<std::int64_t>((gap_ns - static_cast<double>(step)) * 0x1p32));
    } else {
      return false;  // beyond the range, infinite or NaN
    }
    const std::uint64_t sum = frac + part;
    const auto carry = static_cast<Nanos>(sum >> 32);
    if (step >= limit - whole - carry) return false;
    whole += step + carry;
    frac = sum & (kFracOne - 1);
    return true;
  }

  // Advances by gap_ns >= 0, stopping at the largest Nanos ("never" in practice).
  void advance_saturating(double gap_ns) {
    if (!advance_before(gap_ns, kMaxNanos)) *this = Instant{kMaxNanos, 0};
  }

  // The time rounded to the nearest nanosecond.
  Nanos rounded() const { return whole + (frac >= kFracOne / 2 ? 1 : 0); }
};

// i.i.d. gaps drawn from `Distribution` (in units of ns_per_unit nanoseconds). The times are
// drawn ahead in blocks: one tight loop over the stream (inlined, no call per draw) instead of a
// call per query. The stream is the cursor's own, so drawing ahead changes no draw and no time;
// a time beyond the range is reported when the caller reaches it, as it would have been.
template <typename Distribution>
class RenewalCursor final : public ArrivalCursor {
 public:
  RenewalCursor(Rng rng, Distribution gap, double ns_per_unit)
      : rng_(std::move(rng)), gap_(gap), ns_per_unit_(ns_per_unit) {}

  std::optional<Nanos> next() override {
    if (pos_ == len_) [[unlikely]]
      refill();
    return engaged(times_[pos_++]);
  }
  // What is left of the drawn block (refilled first when empty): a time beyond the range is
  // still reported only when the caller reaches it.
  std::size_t next_times(Nanos* out, std::size_t n) override {
    if (pos_ == len_) refill();
    const std::size_t k = std::min(n, len_ - pos_);
    std::copy_n(times_ + pos_, k, out);
    pos_ += k;
    return k;
  }

 private:
  static constexpr std::size_t kBlock = 128;

  [[gnu::flatten]] void refill() {  // the distribution and the engine inlined into the loop
    if (out_of_range_) throw_out_of_range(now_.whole);
    auto& engine = rng_.engine();
    std::size_t n = 0;
    for (; n < kBlock; ++n) {
      if (!now_.advance_before(static_cast<double>(gap_(engine)) * ns_per_unit_, kMaxNanos)) [[unlikely]] {
        out_of_range_ = true;
        break;
      }
      times_[n] = now_.whole;
    }
    pos_ = 0;
    len_ = n;
    if (n == 0) throw_out_of_range(now_.whole);
  }

  Rng rng_;
  Distribution gap_;
  double ns_per_unit_;
  Instant now_;
  bool out_of_range_ = false;
  std::size_t pos_ = 0, len_ = 0;
  Nanos times_[kBlock];
};

// Boost's exponential_distribution(1.0) draws the unit exponential and divides it by 1.0, which
// leaves every value as it is (exact in IEEE arithmetic): the same draws, without a division.
struct Exponential {
  template <typename Engine>
  double operator()(Engine& engine) const {
    return boost::random::detail::unit_exponential_distribution<double>()(engine);
  }
};

class MmppCursor final : public ArrivalCursor {
 public:
  MmppCursor(Rng rng, const Mmpp& p) : rng_(std::move(rng)), states_(rng_.derive("states")) {
    mean_gap_ns_[kOn] = kNanosPerSecondD / p.rate_on();
    mean_gap_ns_[kOff] = p.rate_off() > 0 ? kNanosPerSecondD / p.rate_off() : 0;
    mean_sojourn_ns_[kOn] = p.mean_on_s() * kNanosPerSecondD;
    mean_sojourn_ns_[kOff] = p.mean_off_s() * kNanosPerSecondD;
    state_ = states_.uniform() < p.mean_on_s() / (p.mean_on_s() + p.mean_off_s()) ? kOn : kOff;
    state_end_.advance_saturating(unit_exp_(states_.engine()) * mean_sojourn_ns_[state_]);
  }

  std::optional<Nanos> next() override {
    for (;;) {
      const Nanos boundary = state_end_.whole;
      if (mean_gap_ns_[state_] > 0 && now_.advance_before(unit_exp_(rng_.engine()) * mean_gap_ns_[state_], boundary)) {
        return engaged(now_.whole);
      }
      // The gap crossed the end of this sojourn: restart from the switch (memoryless).
      if (boundary == kMaxNanos) throw_out_of_range(now_.whole);
      now_ = Instant{boundary, 0};
      state_ = 1 - state_;
      state_end_.advance_saturating(unit_exp_(states_.engine()) * mean_sojourn_ns_[state_]);
      core::check_interrupt();
    }
  }

 private:
  static constexpr int kOn = 0, kOff = 1;
  Rng rng_, states_;
  Exponential unit_exp_;
  double mean_gap_ns_[2], mean_sojourn_ns_[2];
  int state_;
  Instant now_, state_end_;
};

class PiecewiseCursor final : public ArrivalCursor {
 public:
  PiecewiseCursor(Rng rng, std::shared_ptr<const std::vector<double>> rates, Nanos interval_ns, bool repeat)
      : rng_(std::move(rng)), rates_(std::move(rates)), interval_ns_(interval_ns), repeat_(repeat) {}

  std::optional<Nanos> next() override {
    for (;;) {
      if (index_ == rates_->size()) {
        if (!repeat_) return std::nullopt;
        index_ = 0;
      }
      if (interval_start_ > kMaxNanos - interval_ns_) throw_out_of_range(now_.whole);
      const Nanos end = interval_start_ + interval_ns_;
      const double rate = (*rates_)[index_];
      if (rate > 0 && now_.advance_before(unit_exp_(rng_.engine()) * (kNanosPerSecondD / rate), end)) {
        return engaged(now_.whole);
      }
      // No (further) arrival in this interval: restart at its end (the exponential is memoryless).
      ++index_;
      interval_start_ = end;
      now_ = Instant{end, 0};
      core::check_interrupt();
    }
  }

 private:
  Rng rng_;
  std::shared_ptr<const std::vector<double>> rates_;
  Nanos interval_ns_;
  bool repeat_;
  Exponential unit_exp_;
  std::size_t index_ = 0;
  Nanos interval_start_ = 0;
  Instant now_;
};

class ReplayCursor final : public ArrivalCursor {
 public:
  ReplayCursor(std::shared_ptr<const std::vector<Nanos>> times, std::optional<Nanos> period)
      : times_(std::move(times)), period_(period) {}

  std::optional<Nanos> next() override {
    if (index_ == times_->size()) {
      if (!period_) return std::nullopt;
      if (offset_ > kMaxNanos - *period_ - times_->back()) throw_out_of_range(offset_ + times_->back());
      offset_ += *period_;
      index_ = 0;
    }
    return engaged(offset_ + (*times_)[index_++]);
  }

 private:
  std::shared_ptr<const std::vector<Nanos>> times_;
  std::optional<Nanos> period_;
  std::size_t index_ = 0;
  Nanos offset_ = 0;
};

void check_rate(double rate, const char* field) {
  if (!positive_finite(rate)) throw ValueError(str(field, "=", num(rate), " must be positive and finite"));
}

template <typename Time, typename Convert>
std::vector<Time> generate(const ArrivalProcess& process, std::uint64_t seed, std::int64_t max_count, Nanos horizon,
                           Convert convert) {
  if (max_count < 0) throw ValueError(str("max_count=", max_count, " must be >= 0"));
  if (horizon < 0) throw ValueError(str("horizon=", horizon, " ns must be >= 0"));
  if (max_count == kUnlimitedCount && horizon == kUnlimitedHorizon) {
    throw ValueError("max_count and horizon are both unlimited: give at least one of them");
  }
  // Reserve the expected count (capped at 512 MiB) up front: growing by doubling would copy the
  // array repeatedly. Untouched reserved pages cost nothing; a much shorter result is trimmed.
  double expected = static_cast<double>(max_count);
  const double rate = process.mean_rate();
  if (horizon != kUnlimitedHorizon && std::isfinite(rate)) {
    const double mean = rate * nanos_to_seconds(horizon);
    expected = std::min(expected, mean + 6 * std::sqrt(mean) + 16);
  }
  if (std::isfinite(expected)) {
    const bool by_count = expected == static_cast<double>(max_count);
    const std::string given = by_count ? str("count=", max_count)
                                       : str("horizon_s=", num(nanos_to_seconds(horizon)), " (about ", num(expected),
                                             " arrivals at ", num(rate), "/s)");
    core::check_fits_memory(expected, sizeof(Time), given, by_count ? "count" : "horizon_s", "the arrival times");
  }
  std::vector<Time> out;
  out.reserve(static_cast<std::size_t>(std::min(expected, double{1 << 26})));

  auto cursor = process.start(Rng(seed, kArrivalStream));
  for (std::int64_t n = 0; n < max_count; ++n) {
    if ((n & 4095) == 0) core::check_interrupt();
    const auto t = cursor->next();
    if (!t || *t >= horizon) break;
    out.push_back(convert(*t));
  }
  if (out.capacity() > 2 * out.size() + 4096) out.shrink_to_fit();
  return out;
}

}  // namespace

double ArrivalProcess::expected_arrivals(Nanos horizon) const {
  if (horizon == kUnlimitedHorizon) return std::numeric_limits<double>::infinity();
  return mean_rate() * nanos_to_seconds(horizon);
}

std::vector<Nanos> generate_arrivals(const ArrivalProcess& process, std::uint64_t seed, std::int64_t max_count,
                                     Nanos horizon) {
  return generate<Nanos>(process, seed, max_count, horizon, [](Nanos t) { return t; });
}

std::vector<double> generate_arrival_seconds(const ArrivalProcess& process, std::uint64_t seed, std::int64_t max_count,
                                             Nanos horizon) {
  return generate<double>(process, seed, max_count, horizon, [](Nanos t) { return nanos_to_seconds(t); });
}

// --- Poisson ---

Poisson::Poisson(double rate) : rate_(rate) { check_rate(rate, "rate"); }

std::unique_ptr<ArrivalCursor> Poisson::start(Rng rng) const {
  return std::make_unique<RenewalCursor<Exponential>>(std::move(rng), Exponential{}, kNanosPerSecondD / rate_);
}

std::string Poisson::describe() const { return str("poisson(rate=", num(rate_), ")"); }

// --- PoissonIntegerMs ---

PoissonIntegerMs::PoissonIntegerMs(double rate) : rate_(rate) {
  check_rate(rate, "rate");
  if (!(mean_gap_ms() <= 1e12)) {
    throw ValueError(str("rate=", num(rate), " gives a mean gap of ", num(mean_gap_ms()),
                         " ms, above the supported 1e12 ms (rate must be >= 1e-09)"));
  }
}

std::unique_ptr<ArrivalCursor> PoissonIntegerMs::start(Rng rng) const {
  using Gaps = boost::random::poisson_distribution<std::int64_t, double>;
  return std::make_unique<RenewalCursor<Gaps>>(std::move(rng), Gaps(mean_gap_ms()),
                                               static_cast<double>(kNanosPerMilli));
}

std::string PoissonIntegerMs::describe() const { return str("poisson_integer_ms(rate=", num(rate_), ")"); }

// --- Gamma ---

Gamma::Gamma(double rate, double cv) : rate_(rate), cv_(cv) {
  check_rate(rate, "rate");
  if (!positive_finite(cv)) throw ValueError(str("cv=", num(cv), " must be positive and finite"));
  // Beyond this range Boost's gamma sampler loses the precision its rejection test needs.
  if (cv < kMinCv || cv > kMaxCv) {
    throw ValueError(str("cv=", num(cv), " is outside the supported range [", num(kMinCv), ", ", num(kMaxCv), "]"));
  }
}

std::unique_ptr<ArrivalCursor> Gamma::start(Rng rng) const {
  using Gaps = boost::random::gamma_distribution<double>;
  // shape k = 1/cv^2 and scale = mean/k give mean 1/rate and standard deviation cv/rate.
  const double shape = 1.0 / (cv_ * cv_);
  const double scale_ns = kNanosPerSecondD / rate_ / shape;
  return std::make_unique<RenewalCursor<Gaps>>(std::move(rng), Gaps(shape, scale_ns), 1.0);
}

std::string Gamma::describe() const { return str("gamma(rate=", num(rate_), ", cv=", num(cv_), ")"); }

// --- Mmpp ---

Mmpp::Mmpp(double rate_on, double rate_off, double mean_on_s, double mean_off_s)
    : rate_on_(rate_on), rate_off_(rate_off), mean_on_s_(mean_on_s), mean_off_s_(mean_off_s) {
  check_rate(rate_on, "rate_on");
  if (!non_negative_finite(rate_off)) {
    throw ValueError(str("rate_off=", num(rate_off), " must be non-negative and finite"));
  }
  // Sojourns far below a microsecond would make every arrival cost millions of state switches.
  for (const auto& [field, value] : {std::pair{"mean_on_s", mean_on_s}, std::pair{"mean_off_s", mean_off_s}}) {
    if (!positive_finite(value)) throw ValueError(str(field, "=", num(value), " must be positive and finite"));
    if (value < kMinSojournS) {
      throw ValueError(str(field, "=", num(value), " is below the supported minimum of ", num(kMinSojournS), " s"));
    }
  }
}

std::unique_ptr<ArrivalCursor> Mmpp::start(Rng rng) const {
  return std::make_unique<MmppCursor>(std::move(rng), *this);
}

std::string Mmpp::describe() const {
  return str("mmpp(rate_on=", num(rate_on_), ", rate_off=", num(rate_off_), ", mean_on_s=", num(mean_on_s_),
             ", mean_off_s=", num(mean_off_s_), ")");
}

double Mmpp::mean_rate() const {
  return (rate_on_ * mean_on_s_ + rate_off_ * mean_off_s_) / (mean_on_s_ + mean_off_s_);
}

// --- PiecewiseRate ---

PiecewiseRate::PiecewiseRate(double interval_s, std::vector<double> rates, double time_scale, bool repeat)
    : interval_s_(interval_s), time_scale_(time_scale), repeat_(repeat) {
  if (!positive_finite(interval_s)) {
    throw ValueError(str("interval_s=", num(interval_s), " must be positive and finite"));
  }
  if (!positive_finite(time_scale)) {
    throw ValueError(str("time_scale=", num(time_scale), " must be positive and finite"));
  }
  if (rates.empty()) throw ValueError("rates is empty: give at least one interval's rate");
  bool any_positive = false;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    if (!non_negative_finite(rates[i])) {
      throw ValueError(str("rates[", i, "]=", num(rates[i]), " must be non-negative and finite"));
    }
    any_positive = any_positive || rates[i] > 0;
  }
  if (repeat && !any_positive) {
    throw ValueError("rates are all 0 and repeat=true: the process would never produce an arrival");
  }
  const double interval_ns = std::round(interval_s * time_scale * kNanosPerSecondD);
  const double total_ns = interval_ns * static_cast<double>(rates.size());
  if (interval_ns < 1 || !(total_ns < 9.2e18)) {
    throw ValueError(str("interval_s=", num(interval_s), " with time_scale=", num(time_scale), " and ", rates.size(),
                         " intervals does not fit between 1 ns per interval and about 292 years in all"));
  }
  interval_ns_ = static_cast<Nanos>(interval_ns);
  rates_ = std::make_shared<const std::vector<double>>(std::move(rates));
}

Nanos PiecewiseRate::duration_ns() const { return interval_ns_ * static_cast<Nanos>(rates_->size()); }

std::unique_ptr<ArrivalCursor> PiecewiseRate::start(Rng rng) const {
  return std::make_unique<PiecewiseCursor>(std::move(rng), rates_, interval_ns_, repeat_);
}

std::string PiecewiseRate::describe() const {
  const auto& r = *rates_;
  std::string list;
  if (r.size() <= 6) {
    for (std::size_t i = 0; i < r.size(); ++i) list += (i ? ", " : "") + num(r[i]);
  } else {
    list = str(num(r[0]), ", ", num(r[1]), ", ", num(r[2]), ", ..., ", num(r.back()));
  }
  return str("piecewise_rate(interval_s=", num(interval_s_), ", rates=[", list, "] (", r.size(),
             " intervals), time_scale=", num(time_scale_), ", repeat=", repeat_ ? "true" : "false", ")");
}

double PiecewiseRate::mean_rate() const {
  double sum = 0;
  for (const double r : *rates_) sum += r;
  return sum / static_cast<double>(rates_->size());
}

double PiecewiseRate::expected_arrivals(Nanos horizon) const {
  if (repeat_) return ArrivalProcess::expected_arrivals(horizon);
  return ArrivalProcess::expected_arrivals(std::min(horizon, duration_ns()));
}

// --- Replay ---

Replay::Replay(std::vector<Nanos> times, std::optional<Nanos> period_ns)
    : times_(std::make_shared<const std::vector<Nanos>>(std::move(times))), period_ns_(period_ns) {}

Replay::Replay(std::span<const double> timestamps_s, std::optional<double> period_s) {
  if (timestamps_s.empty()) throw ValueError("timestamps_s is empty: give at least one arrival time");
  std::vector<Nanos> times;
  times.reserve(timestamps_s.size());
  for (std::size_t i = 0; i < timestamps_s.size(); ++i) {
    const double t = timestamps_s[i];
    const std::string field = str("timestamps_s[", i, "]");
    if (!non_negative_finite(t)) throw ValueError(str(field, "=", num(t), " must be non-negative and finite"));
    if (i > 0 && t < timestamps_s[i - 1]) {
      throw ValueError(str(field, "=", num(t), " is before timestamps_s[", i - 1, "]=", num(timestamps_s[i - 1]),
                           ": times must be non-decreasing"));
    }
    times.push_back(seconds_to_nanos(t, field.c_str()));
  }
  std::optional<Nanos> period;
  if (period_s) {
    if (!positive_finite(*period_s)) {
      throw ValueError(str("period_s=", num(*period_s), " must be positive and finite"));
    }
    period = seconds_to_nanos(*period_s, "period_s");
    if (*period == 0) throw ValueError(str("period_s=", num(*period_s), " rounds to 0 ns"));
    if (*period < times.back()) {
      throw ValueError(str("period_s=", num(*period_s), " is shorter than the last time timestamps_s[",
                           timestamps_s.size() - 1, "]=", num(timestamps_s.back())));
    }
  }
  *this = Replay(std::move(times), period);
}

Replay Replay::from_gaps(std::span<const double> gaps_s, bool repeat) {
  if (gaps_s.empty()) throw ValueError("gaps_s is empty: give at least one gap");
  std::vector<Nanos> times;
  times.reserve(gaps_s.size());
  Instant now;
  for (std::size_t i = 0; i < gaps_s.size(); ++i) {
    const double g = gaps_s[i];
    if (!non_negative_finite(g)) {
      throw ValueError(str("gaps_s[", i, "]=", num(g), " must be non-negative and finite"));
    }
    if (!now.advance_before(g * kNanosPerSecondD, kMaxNanos - 1)) {
      throw ValueError(str("gaps_s[", i, "]=", num(g), " takes the sum of the gaps beyond about 292 years"));
    }
    times.push_back(now.rounded());  // the exact sum, rounded to nearest
  }
  std::optional<Nanos> period;
  if (repeat) {
    if (times.back() == 0) {
      throw ValueError("gaps_s sum to 0 s and repeat=true: the replay would never advance");
    }
    period = times.back();
  }
  return Replay(std::move(times), period);
}

std::unique_ptr<ArrivalCursor> Replay::start(Rng /*rng*/) const {
  return std::make_unique<ReplayCursor>(times_, period_ns_);
}

std::string Replay::describe() const {
  std::string out = str("replay(n=", times_->size(), ", first_s=", num(nanos_to_seconds(times_->front())),
                        ", last_s=", num(nanos_to_seconds(times_->back())));
  if (period_ns_) out += str(", period_s=", num(nanos_to_seconds(*period_ns_)));
  return out + ")";
}

double Replay::expected_arrivals(Nanos horizon) const {
  if (period_ns_) return ArrivalProcess::expected_arrivals(horizon);
  return static_cast<double>(times_->size());  // all of them at most
}

double Replay::mean_rate() const {
  const Nanos span = period_ns_ ? *period_ns_ : times_->back();
  if (span == 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(times_->size()) / nanos_to_seconds(span);
}

}  // namespace servelab::workload
