// Poisson arrivals whose rate changes from one period to the next, drawn at random per run: the
// two synthetic traffic shapes of the RRL paper (SC'19, Sec. 6.1).
//
//   DynamicPoisson: "periods of Poisson process with randomly changing average". Each period of
//     period_s seconds has its own rate, uniform in [rate*(1-spread), rate*(1+spread)], so the mean
//     rate is `rate`. The paper gives no numbers; spread 0.5 and 60 s periods are our defaults.
//   Spiky: a Wikipedia-like trace "with unpredictable load spikes" (the paper replays the
//     Wikipedia access trace of Urdaneta et al., which we do not ship). Each step_s seconds the
//     rate is base * (1 + amplitude * sin(2 pi t / cycle_s)) * (1 + jitter * N(0,1), clipped at
//     0.1), and with probability spike_prob the step is a spike multiplied by a factor uniform in
//     [2, spike_max]. base is chosen so that the long-run mean rate is `rate`.
//
// Both draw the per-period rates from the child stream "rates" of the cursor's Rng and the gaps
// from the Rng itself (exponential, restarted at period boundaries: the exponential is
// memoryless), so the same seed gives the same times bit for bit.
#pragma once

#include <memory>
#include <string>

#include "servelab/workload/arrivals.hpp"

namespace servelab::workload {

class DynamicPoisson final : public ArrivalProcess {
 public:
  DynamicPoisson(double rate, double period_s, double spread);  // spread in [0, 1)
  std::unique_ptr<ArrivalCursor> start(Rng rng) const override;
  std::string describe() const override;
  double mean_rate() const override { return rate_; }

 private:
  double rate_, period_s_, spread_;
};

class Spiky final : public ArrivalProcess {
 public:
  Spiky(double rate, double step_s, double cycle_s, double amplitude, double jitter, double spike_prob,
        double spike_max);
  std::unique_ptr<ArrivalCursor> start(Rng rng) const override;
  std::string describe() const override;
  double mean_rate() const override { return rate_; }

 private:
  double rate_, step_s_, cycle_s_, amplitude_, jitter_, spike_prob_, spike_max_;
};

}  // namespace servelab::workload
