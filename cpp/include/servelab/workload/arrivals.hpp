// Arrival processes: when queries arrive.
//
// An ArrivalProcess is an immutable, validated description ("poisson(rate=100)"); start(rng) opens
// an ArrivalCursor, the stateful stream of absolute arrival times (int64 nanoseconds from t=0,
// non-decreasing) that the simulator pulls from lazily. generate_arrivals() draws them in bulk.
// Processes are cheap to share: cursors never refer back to the process that started them.
// Random processes sum their gaps exactly (whole ns plus a 2^-32 ns fraction) and report each time
// truncated to whole ns, so rounding never drifts; the first arrival comes one gap after t=0.
//
// All randomness comes from the Rng handed to start(); generate_arrivals() uses the stream
// kArrivalStream of its seed, so the same seed gives the same times bit for bit on every platform.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "servelab/core/rng.hpp"
#include "servelab/core/time.hpp"

namespace servelab::workload {

// The stateful stream of one run of an ArrivalProcess.
class ArrivalCursor {
 public:
  virtual ~ArrivalCursor() = default;
  // The next absolute arrival time (non-decreasing, >= 0), or nullopt once a finite trace has
  // ended (and on every later call). Throws RuntimeError if the next time would not fit in Nanos
  // (about 292 years).
  virtual std::optional<Nanos> next() = 0;
  // The next times into out (n >= 1), as calls of next() would give them: at least one unless
  // next() would return nullopt (then 0), fewer than n where the cursor prefers (callers loop).
  // Throws where next() would, before any time. One virtual call per block of times; this
  // default gives one time per call.
  virtual std::size_t next_times(Nanos* out, std::size_t n);
};

// An immutable arrival process: its parameters were validated by its constructor.
class ArrivalProcess {
 public:
  virtual ~ArrivalProcess() = default;
  // A fresh cursor drawing from `rng`; cursors of the same process are independent.
  virtual std::unique_ptr<ArrivalCursor> start(Rng rng) const = 0;
  // The process and its parameters, e.g. "poisson(rate=100)".
  virtual std::string describe() const = 0;
  // Long-run mean arrival rate in queries per second (the average over one pass for a finite
  // trace), or NaN when it is not known.
  virtual double mean_rate() const = 0;
  // The expected number of arrivals before `horizon` (kUnlimitedHorizon: ever), to size memory up
  // front: mean_rate() x horizon; a trace that ends caps it at its own length. Infinity when
  // unbounded, NaN when the rate is not known.
  virtual double expected_arrivals(std::int64_t horizon) const;
};

// The stream name generate_arrivals() draws from: Rng(seed, kArrivalStream).
inline constexpr std::string_view kArrivalStream = "arrivals";
// "No limit" for generate_arrivals(); at least one of the two limits must be finite.
inline constexpr std::int64_t kUnlimitedCount = std::numeric_limits<std::int64_t>::max();
inline constexpr Nanos kUnlimitedHorizon = std::numeric_limits<Nanos>::max();

// Arrival times of `process` under `seed`, stopping after `max_count` arrivals, at the first arrival
// at or after `horizon` (which is not included), or at the end of a finite trace, whichever comes
// first. Throws ValueError for a negative limit or when both limits are unlimited. Calls
// core::check_interrupt() as it goes, so it can be stopped from Python.
std::vector<Nanos> generate_arrivals(const ArrivalProcess& process, std::uint64_t seed,
                                     std::int64_t max_count = kUnlimitedCount, Nanos horizon = kUnlimitedHorizon);
// The same arrivals, converted to seconds as they are drawn (no intermediate nanosecond array).
std::vector<double> generate_arrival_seconds(const ArrivalProcess& process, std::uint64_t seed,
                                             std::int64_t max_count = kUnlimitedCount,
                                             Nanos horizon = kUnlimitedHorizon);

// Poisson process: exponential gaps with mean 1/rate.
class Poisson final : public ArrivalProcess {
 public:
  explicit Poisson(double rate);  // queries/s, positive and finite
  std::unique_ptr<ArrivalCursor> start(Rng rng) const override;
  std::string describe() const override;
  double mean_rate() const override { return rate_; }
  double rate() const { return rate_; }

 private:
  double rate_;
};

// Gaps are whole milliseconds drawn from a Poisson distribution with mean 1000/rate ms, as the
// Kairos and Ribbon artifacts do (numpy.random.poisson(mean_gap_ms)); gaps of 0 ms (ties) occur.
class PoissonIntegerMs final : public ArrivalProcess {
 public:
  explicit PoissonIntegerMs(double rate);  // queries/s; the mean gap must be at most 1e12 ms
  std::unique_ptr<ArrivalCursor> start(Rng rng) const override;
  std::string describe() const override;
  double mean_rate() const override { return rate_; }
  double rate() const { return rate_; }
  double mean_gap_ms() const { return 1e3 / rate_; }

 private:
  double rate_;
};

// Renewal process with gamma-distributed gaps: mean 1/rate, coefficient of variation cv
// (shape 1/cv^2). cv = 1 is the Poisson process, cv < 1 is smoother, cv > 1 burstier.
class Gamma final : public ArrivalProcess {
 public:
  static constexpr double kMinCv = 1e-4, kMaxCv = 1e4;  // the supported range of cv
  Gamma(double rate, double cv);
  std::unique_ptr<ArrivalCursor> start(Rng rng) const override;
  std::string describe() const override;
  double mean_rate() const override { return rate_; }
  double rate() const { return rate_; }
  double cv() const { return cv_; }

 private:
  double rate_, cv_;
};

// Two-state Markov-modulated Poisson process (on/off): Poisson at rate_on during "on" periods and
// at rate_off (may be 0) during "off" periods; period lengths are exponential with means
// mean_on_s and mean_off_s. The initial state is drawn from the stationary distribution (on with
// probability mean_on/(mean_on+mean_off)), so the mean rate holds from t=0. The on/off schedule
// comes from the child stream "states" of the cursor's rng, the gaps from the rng itself.
class Mmpp final : public ArrivalProcess {
 public:
  static constexpr double kMinSojournS = 1e-6;  // the smallest supported mean_on_s / mean_off_s
  Mmpp(double rate_on, double rate_off, double mean_on_s, double mean_off_s);
  std::unique_ptr<ArrivalCursor> start(Rng rng) const override;
  std::string describe() const override;
  // (rate_on * mean_on + rate_off * mean_off) / (mean_on + mean_off)
  double mean_rate() const override;
  double rate_on() const { return rate_on_; }
  double rate_off() const { return rate_off_; }
  double mean_on_s() const { return mean_on_s_; }
  double mean_off_s() const { return mean_off_s_; }

 private:
  double rate_on_, rate_off_, mean_on_s_, mean_off_s_;
};

// Poisson arrivals whose rate is constant within each interval: rates[i] queries/s during
// [i, i+1) * interval_s * time_scale. time_scale stretches (> 1) or compresses (< 1) time while
// keeping the rates, e.g. 300.0/270 plays a 27 x 10 s trace over 5 minutes. The process ends after
// the last interval unless `repeat`. Exact without thinning: within an interval, gaps are
// exponential at its rate, and a gap that crosses the boundary is discarded and redrawn from the
// boundary (the exponential is memoryless). Zero rates are allowed (no arrivals there).
// Interval boundaries are multiples of round(interval_s * time_scale) nanoseconds.
class PiecewiseRate final : public ArrivalProcess {
 public:
  PiecewiseRate(double interval_s, std::vector<double> rates, double time_scale = 1.0, bool repeat = false);
  std::unique_ptr<ArrivalCursor> start(Rng rng) const override;
  std::string describe() const override;
  double mean_rate() const override;  // the time average of `rates`
  double expected_arrivals(std::int64_t horizon) const override;
  double interval_s() const { return interval_s_; }
  const std::vector<double>& rates() const { return *rates_; }
  double time_scale() const { return time_scale_; }
  bool repeat() const { return repeat_; }
  Nanos interval_ns() const { return interval_ns_; }  // interval_s * time_scale
  Nanos duration_ns() const;                          // one pass over all intervals

 private:
  double interval_s_;
  std::shared_ptr<const std::vector<double>> rates_;
  double time_scale_;
  bool repeat_;
  Nanos interval_ns_;
};

// Replays explicit arrival times. With a period, the trace repeats: pass k adds k * period.
class Replay final : public ArrivalProcess {
 public:
  // Times in seconds from t=0: non-empty, finite, non-negative, non-decreasing. A period, when
  // given, must be positive and at least the last time.
  explicit Replay(std::span<const double> timestamps_s, std::optional<double> period_s = std::nullopt);
  // Times from gaps in seconds (the first arrival is at gaps_s[0]); with `repeat`, the gaps are
  // replayed cyclically (period = their sum, which must then be positive).
  static Replay from_gaps(std::span<const double> gaps_s, bool repeat = false);

  std::unique_ptr<ArrivalCursor> start(Rng rng) const override;  // draws nothing from rng
  std::string describe() const override;
  // Arrivals per second of period, or over [0, last time] without one (NaN if that is 0).
  double mean_rate() const override;
  double expected_arrivals(std::int64_t horizon) const override;
  const std::vector<Nanos>& times() const { return *times_; }
  std::optional<Nanos> period_ns() const { return period_ns_; }

 private:
  Replay(std::vector<Nanos> times, std::optional<Nanos> period_ns);
  std::shared_ptr<const std::vector<Nanos>> times_;
  std::optional<Nanos> period_ns_;
};

}  // namespace servelab::workload
