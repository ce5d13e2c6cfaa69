#include "servelab/cluster/loop_model.hpp"

#include <cmath>
#include <memory>
#include <sstream>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/param_builders.hpp"

namespace servelab::cluster {
namespace {

// A loop delay beyond a minute is a unit mistake (seconds given as microseconds), not a loop.
constexpr double kMaxDelayUs = 60e6;

std::string format_list(const std::vector<double>& values) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  out << ']';
  return out.str();
}

class QuantileLoopModel final : public LoopModel {
 public:
  QuantileLoopModel(std::string name, const std::vector<double>& wake_us, const std::vector<double>& notice_us,
                    const std::vector<double>& arrival_us)
      : name_(std::move(name)),
        wake_(name_ + ": wake_us", wake_us),
        notice_(name_ + ": notice_us", notice_us),
        arrival_(name_ + ": arrival_us", arrival_us),
        description_(name_ + "(wake_us=" + format_list(wake_us) + ", notice_us=" + format_list(notice_us) +
                     ", arrival_us=" + format_list(arrival_us) + ")") {}
  Nanos wake(Rng& rng) const override { return wake_.draw(rng); }
  Nanos notice(Rng& rng) const override { return notice_.draw(rng); }
  Nanos arrival(Rng& rng) const override { return arrival_.draw(rng); }
  std::string describe() const override { return description_; }

 private:
  std::string name_;
  QuantileDelay wake_, notice_, arrival_;
  std::string description_;
};

ParamSpec float_list_param(std::string name, std::string doc) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::FloatList;
  s.default_value = std::vector<double>{0.0};
  s.doc = std::move(doc);
  s.min = 0;
  s.max = kMaxDelayUs;
  return s;
}

}  // namespace

QuantileDelay::QuantileDelay(std::string_view field, const std::vector<double>& quantiles_us) {
  if (quantiles_us.empty()) throw ValueError(str(field, "=[] needs at least one value (us)"));
  for (std::size_t i = 0; i < quantiles_us.size(); ++i) {
    const double q = quantiles_us[i];
    if (!std::isfinite(q) || q < 0 || q > kMaxDelayUs) {
      throw ValueError(str(field, "[", i, "]=", q, " must be a number of microseconds in 0..", kMaxDelayUs));
    }
    if (i > 0 && q < quantiles_us[i - 1]) {
      throw ValueError(str(field, "[", i, "]=", q, " is below the value before it (", quantiles_us[i - 1],
                           "): quantiles must not decrease"));
    }
  }
  if (quantiles_us.back() == 0) return;  // all zero: no delay, no draws
  quantiles_.reserve(quantiles_us.size());
  for (const double q : quantiles_us) quantiles_.push_back(q * static_cast<double>(kNanosPerMicro));
}

Nanos QuantileDelay::draw(Rng& rng) const {
  if (quantiles_.empty()) return 0;
  if (quantiles_.size() == 1) return static_cast<Nanos>(std::llround(quantiles_.front()));
  const double u = rng.uniform() * static_cast<double>(quantiles_.size() - 1);
  const auto i = static_cast<std::size_t>(u);  // u < size - 1, so i + 1 is in range
  const double frac = u - static_cast<double>(i);
  return static_cast<Nanos>(std::llround(quantiles_[i] + frac * (quantiles_[i + 1] - quantiles_[i])));
}

void register_loop_models(LoopModelRegistry& registry) {
  registry.add({"fixed_loop",
                "The serving loop's delays as constants (us): a batch starts wake_us after its dispatch, its "
                "worker is free to the scheduler notice_us after it ends, an arrival reaches the scheduler "
                "arrival_us after its time.",
                {float_param("wake_us", 0, 0, kMaxDelayUs, "dispatch -> the batch starts on its worker (us)"),
                 float_param("notice_us", 0, 0, kMaxDelayUs, "the batch ends -> the scheduler sees it (us)"),
                 float_param("arrival_us", 0, 0, kMaxDelayUs, "a query's arrival -> the scheduler sees it (us)")},
                [](const Params& p) -> std::shared_ptr<LoopModel> {
                  return std::make_shared<QuantileLoopModel>("fixed_loop", std::vector{p.get_float("wake_us")},
                                                             std::vector{p.get_float("notice_us")},
                                                             std::vector{p.get_float("arrival_us")});
                }});
  registry.add({"measured_loop",
                "The serving loop's delays as measured (servelab.calibrate fits it from a served run): each a list of "
                "quantiles in us at evenly spaced probabilities from 0 to 1, drawn by inverse CDF (linear between "
                "neighbours).",
                {float_list_param("wake_us", "quantiles of dispatch -> the batch starts on its worker (us)"),
                 float_list_param("notice_us", "quantiles of the batch ends -> the scheduler sees it (us)"),
                 float_list_param("arrival_us", "quantiles of a query's arrival -> the scheduler sees it (us)")},
                [](const Params& p) -> std::shared_ptr<LoopModel> {
                  return std::make_shared<QuantileLoopModel>("measured_loop", p.get_floats("wake_us"),
                                                             p.get_floats("notice_us"), p.get_floats("arrival_us"));
                }});
}

}  // namespace servelab::cluster
