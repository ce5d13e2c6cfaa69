#include "servelab/workload/arrival_registry.hpp"

#include <memory>
#include <optional>

#include "servelab/workload/modulated_arrivals.hpp"

namespace servelab::workload {
namespace {

// The constructors validate again; the specs give Python and the CLI types, defaults and docs.
ParamSpec rate_spec() { return ParamSpec::positive("rate", std::nullopt, "mean arrival rate, queries per second"); }

Registry<ArrivalProcess> make_registry() {
  Registry<ArrivalProcess> r("arrival process");
  r.add({"poisson", "Poisson arrivals: exponential gaps.", {rate_spec()}, [](const Params& p) {
           return std::make_shared<Poisson>(p.get_float("rate"));
         }});
  r.add({"poisson_integer_ms",
         "Gaps of whole milliseconds drawn from a Poisson distribution with mean 1000/rate ms "
         "(the Kairos and Ribbon artifacts' workload).",
         {rate_spec()},
         [](const Params& p) { return std::make_shared<PoissonIntegerMs>(p.get_float("rate")); }});
  r.add({"gamma",
         "Gamma-distributed gaps with mean 1/rate and coefficient of variation cv (cv=1 is Poisson).",
         {rate_spec(), ParamSpec::positive("cv", 1.0, "coefficient of variation of the gaps")},
         [](const Params& p) { return std::make_shared<Gamma>(p.get_float("rate"), p.get_float("cv")); }});
  r.add({"mmpp",
         "Bursty on/off traffic: a two-state Markov-modulated Poisson process with exponential sojourns.",
         {ParamSpec::positive("rate_on", std::nullopt, "rate while on, queries per second"),
          ParamSpec::non_negative("rate_off", 0.0, "rate while off, queries per second"),
          ParamSpec::positive("mean_on_s", std::nullopt, "mean length of an on period, seconds"),
          ParamSpec::positive("mean_off_s", std::nullopt, "mean length of an off period, seconds")},
         [](const Params& p) {
           return std::make_shared<Mmpp>(p.get_float("rate_on"), p.get_float("rate_off"), p.get_float("mean_on_s"),
                                         p.get_float("mean_off_s"));
         }});
  ParamSpec rates{"rates", ParamType::FloatList, std::nullopt, "rate per interval, queries per second", 0.0, {}, false,
                  {}};
  ParamSpec repeat{"repeat", ParamType::Bool, false, "start over after the last interval", {}, {}, false, {}};
  r.add({"piecewise_rate",
         "Poisson arrivals at a rate that is constant within each interval of a trace.",
         {ParamSpec::positive("interval_s", std::nullopt, "length of each interval, seconds"), rates,
          ParamSpec::positive("time_scale", 1.0, "stretch (>1) or compress (<1) the trace's time axis"), repeat},
         [](const Params& p) {
           return std::make_shared<PiecewiseRate>(p.get_float("interval_s"), p.get_floats("rates"),
                                                  p.get_float("time_scale"), p.get_bool("repeat"));
         }});
  ParamSpec times{
      "timestamps_s", ParamType::FloatList, std::nullopt, "arrival times, seconds, non-decreasing", 0.0, {}, false, {}};
  r.add({"replay",
         "Replays explicit arrival times; with period_s > 0 the trace repeats every period_s seconds.",
         {times, ParamSpec::non_negative("period_s", 0.0, "repeat period in seconds; 0 plays the trace once")},
         [](const Params& p) {
           const double period = p.get_float("period_s");
           return std::make_shared<Replay>(p.get_floats("timestamps_s"),
                                           period > 0 ? std::optional<double>(period) : std::nullopt);
         }});
  // The RRL paper's synthetic traffic (workload/modulated_arrivals.hpp).
  r.add({"dynamic_poisson",
         "Poisson periods whose rate is redrawn each period, uniform in rate*(1 +- spread) (RRL's \"dynamic\").",
         {rate_spec(),
          ParamSpec::positive("period_s", 60.0, "length of each period, seconds"),
          {"spread", ParamType::Float, 0.5, "relative half-width of the rate's range, in [0, 1)", 0.0, 1.0, false, {}}},
         [](const Params& p) {
           return std::make_shared<DynamicPoisson>(p.get_float("rate"), p.get_float("period_s"), p.get_float("spread"));
         }});
  r.add(
      {"spiky",
       "Wikipedia-like traffic: a slow cycle, per-step jitter and random spikes; long-run mean `rate`.",
       {rate_spec(),
        ParamSpec::positive("step_s", 10.0, "seconds per rate step"),
        ParamSpec::positive("cycle_s", 3600.0, "period of the slow cycle, seconds"),
        {"amplitude", ParamType::Float, 0.3, "relative amplitude of the cycle, in [0, 1)", 0.0, 1.0, false, {}},
        {"jitter", ParamType::Float, 0.15, "relative std of the per-step noise, in [0, 1]", 0.0, 1.0, false, {}},
        {"spike_prob", ParamType::Float, 0.05, "probability that a step is a spike", 0.0, 1.0, false, {}},
        {"spike_max", ParamType::Float, 4.0, "a spike multiplies the rate by U(2, spike_max)", 2.0, 1000.0, false, {}}},
       [](const Params& p) {
         return std::make_shared<Spiky>(p.get_float("rate"), p.get_float("step_s"), p.get_float("cycle_s"),
                                        p.get_float("amplitude"), p.get_float("jitter"), p.get_float("spike_prob"),
                                        p.get_float("spike_max"));
       }});
  return r;
}

}  // namespace

const Registry<ArrivalProcess>& arrival_registry() {
  static const Registry<ArrivalProcess> registry = make_registry().freeze();  // thread-safe initialisation
  return registry;
}

}  // namespace servelab::workload
