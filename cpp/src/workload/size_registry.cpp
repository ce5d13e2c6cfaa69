#include "servelab/workload/size_registry.hpp"

#include <cctype>
#include <limits>
#include <memory>
#include <utility>

namespace servelab::workload {
namespace {

ParamSpec round_to_spec(std::int64_t default_value = 1) {
  return {"round_to",    ParamType::Int,
          default_value, "round sizes up to a multiple of this (1: nearest integer)",
          1.0,           static_cast<double>(kMaxRoundTo),
          false,         {}};
}

ParamSpec int_spec(std::string name, std::optional<std::int64_t> default_value, std::string doc) {
  ParamSpec s{
      std::move(name), ParamType::Int, std::nullopt, std::move(doc), 1.0, static_cast<double>(kMaxSize), false, {}};
  if (default_value) s.default_value = *default_value;
  return s;
}

ParamSpec float_spec(std::string name, std::optional<double> default_value, std::string doc,
                     std::optional<double> max = std::nullopt) {
  ParamSpec s{std::move(name), ParamType::Float, std::nullopt, std::move(doc), std::nullopt, max, false, {}};
  if (default_value) s.default_value = *default_value;
  return s;
}

ParamSpec string_spec(std::string name, std::string doc) {
  return {std::move(name), ParamType::String, std::nullopt, std::move(doc), std::nullopt, std::nullopt, false, {}};
}

ParamSpec list_spec(std::string name, std::optional<std::vector<double>> default_value, std::string doc) {
  ParamSpec s{std::move(name), ParamType::FloatList, std::nullopt, std::move(doc), 0.0, std::nullopt, false, {}};
  if (default_value) s.default_value = *default_value;
  return s;
}

SizePtr make_part(const std::string& spec, const std::string& field);

Registry<SizeDistribution> make_registry() {
  Registry<SizeDistribution> r("size distribution");
  r.add({"constant",
         "Every query has the same size.",
         {int_spec("value", std::nullopt, "items per query"), round_to_spec()},
         [](const Params& p) { return std::make_shared<ConstantSize>(p.get_int("value"), p.get_int("round_to")); }});
  r.add({"uniform",
         "Integers uniform on low..high, both included.",
         {int_spec("low", std::nullopt, "smallest size"), int_spec("high", std::nullopt, "largest size"),
          round_to_spec()},
         [](const Params& p) {
           return std::make_shared<UniformSize>(p.get_int("low"), p.get_int("high"), p.get_int("round_to"));
         }});
  r.add({"lognormal",
         "exp(N(mu, sigma^2)); mu and sigma are those of the underlying normal, as numpy.random.lognormal.",
         {float_spec("mu", std::nullopt, "mean of the underlying normal"),
          ParamSpec::positive("sigma", std::nullopt, "standard deviation of the underlying normal"), round_to_spec()},
         [](const Params& p) {
           return std::make_shared<LognormalSize>(p.get_float("mu"), p.get_float("sigma"), p.get_int("round_to"));
         }});
  r.add({"clipped_gaussian",
         "A normal distribution clipped to [low, high] (outside draws move to the nearer bound).",
         {float_spec("mean", std::nullopt, "mean of the normal"),
          ParamSpec::positive("std", std::nullopt, "standard deviation of the normal"),
          float_spec("low", 1.0, "lower clip"),
          float_spec("high", std::numeric_limits<double>::infinity(), "upper clip (inf: none)",
                     std::numeric_limits<double>::infinity()),
          round_to_spec()},
         [](const Params& p) {
           return std::make_shared<ClippedGaussianSize>(p.get_float("mean"), p.get_float("std"), p.get_float("low"),
                                                        p.get_float("high"), p.get_int("round_to"));
         }});
  r.add({"empirical",
         "One of `values`, uniformly (samples) or with probability proportional to `weights` (a histogram).",
         {list_spec("values", std::nullopt, "the sizes (positive)"),
          list_spec("weights", std::vector<double>{}, "one weight per value; empty: uniform choice"), round_to_spec()},
         [](const Params& p) {
           return std::make_shared<EmpiricalSize>(p.get_floats("values"), p.get_floats("weights"),
                                                  p.get_int("round_to"));
         }});
  r.add({"mixture",
         "Component i, given as spec strings separated by ';', with probability weights[i] / sum(weights).",
         {string_spec("components", "size distribution specs separated by ';'"),
          list_spec("weights", std::nullopt, "one non-negative weight per component"), round_to_spec()},
         [](const Params& p) {
           std::vector<SizePtr> parts;
           const auto specs = split_specs(p.get_string("components"), "components");
           for (std::size_t i = 0; i < specs.size(); ++i)
             parts.push_back(make_part(specs[i], str("components[", i, "]")));
           return std::make_shared<SizeMixture>(std::move(parts), p.get_floats("weights"), p.get_int("round_to"));
         }});
  r.add({"fallback",
         "Draws from `base`; a draw outside [low, high] is replaced by one draw from `fallback`.",
         {string_spec("base", "size distribution spec"), float_spec("low", std::nullopt, "smallest kept value"),
          float_spec("high", std::nullopt, "largest kept value", std::numeric_limits<double>::infinity()),
          string_spec("fallback", "size distribution spec used outside [low, high]"), round_to_spec()},
         [](const Params& p) {
           return std::make_shared<FallbackSize>(make_part(p.get_string("base"), "base"), p.get_float("low"),
                                                 p.get_float("high"), make_part(p.get_string("fallback"), "fallback"),
                                                 p.get_int("round_to"));
         }});
  r.add({"kairos_mix",
         "The Kairos artifact's sizes: 8/99 U{1..99}, 22/99 U{200..599}, 5/99 U{600..999}, else "
         "lognormal(5.1, 0.2) kept in [100, 200] or U{190..199}; rounded up to a multiple of round_to.",
         {round_to_spec(10)},
         [](const Params& p) { return kairos_sizes(p.get_int("round_to")); }});
  r.add({"ribbon_mix",
         "The Ribbon artifact's sizes: 2/99 U{1..99}, 10/99 U{250..499}, else lognormal(5.1, 0.2), "
         "replaced by U{400..499} above 500; rounded to the nearest integer.",
         {round_to_spec(1)},
         [](const Params& p) { return ribbon_sizes(p.get_int("round_to")); }});
  return r;
}

// A part of a composite; errors say which part.
SizePtr make_part(const std::string& spec, const std::string& field) {
  try {
    return size_registry().make(spec);
  } catch (const KeyError& e) {
    throw KeyError(str(field, "='", spec, "': ", e.what()));
  } catch (const ValueError& e) {
    throw ValueError(str(field, "='", spec, "': ", e.what()));
  }
}

}  // namespace

const Registry<SizeDistribution>& size_registry() {
  static const Registry<SizeDistribution> registry = make_registry().freeze();  // thread-safe initialisation
  return registry;
}

std::vector<std::string> split_specs(std::string_view specs, const char* field) {
  std::vector<std::string> out;
  int depth = 0;
  char quote = 0;
  std::size_t start = 0;
  const auto flush = [&](std::size_t end) {
    std::size_t a = start, b = end;
    while (a < b && std::isspace(static_cast<unsigned char>(specs[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(specs[b - 1]))) --b;
    if (a == b) throw ValueError(str(field, "='", specs, "' has an empty part ", out.size()));
    out.emplace_back(specs.substr(a, b - a));
  };
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const char c = specs[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == ';' && depth == 0) {
      flush(i);
      start = i + 1;
    }
  }
  flush(specs.size());
  return out;
}

}  // namespace servelab::workload
