// Typed, defaulted, validated, documented parameters for everything built by name from a registry
// (arrival processes, schedulers, executors, solvers). A user's arguments are checked against the
// entry's ParamSpecs once, at construction; errors name the entry, the parameter and the value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace servelab {

enum class ParamType { Bool, Int, Float, String, FloatList };

using ParamValue = std::variant<bool, std::int64_t, double, std::string, std::vector<double>>;
using ParamArgs = std::map<std::string, ParamValue, std::less<>>;

std::string_view param_type_name(ParamType type);
std::string format_param_value(const ParamValue& value);
// The items of a comma-separated string parameter, trimmed of spaces ("" -> none). ValueError
// naming `name` and the text when an item is empty ("a,,b").
std::vector<std::string> split_list_param(std::string_view name, const std::string& list);

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Float;
  std::optional<ParamValue> default_value;  // nullopt: the parameter is required
  std::string doc;
  std::optional<double> min;  // numbers (and every element of a list)
  std::optional<double> max;
  bool min_exclusive = false;        // true: value must be > min (e.g. a rate)
  std::vector<std::string> choices;  // strings: the allowed values, if restricted

  // Shorthands for the common cases.
  static ParamSpec positive(std::string name, std::optional<double> default_value, std::string doc);
  static ParamSpec non_negative(std::string name, std::optional<double> default_value, std::string doc);
};

// The validated arguments of one registry entry: every parameter present with its type.
class Params {
 public:
  Params() = default;
  // Checks `args` against `specs`, fills defaults; `entry` names the owner in error messages.
  // Unknown names raise KeyError; missing, mistyped or out-of-range values raise ValueError.
  Params(std::string entry, const std::vector<ParamSpec>& specs, const ParamArgs& args);

  bool get_bool(std::string_view name) const;
  std::int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;
  const std::vector<double>& get_floats(std::string_view name) const;

  const ParamArgs& values() const { return values_; }
  // "poisson(rate=100)": the entry and every parameter, in spec order.
  std::string describe() const;

 private:
  const ParamValue& get(std::string_view name) const;
  std::string entry_;
  std::vector<std::string> order_;
  ParamArgs values_;
};

}  // namespace servelab
