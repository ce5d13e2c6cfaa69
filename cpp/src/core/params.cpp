#include "servelab/core/params.hpp"

#include <cmath>
#include <sstream>

#include "servelab/core/errors.hpp"

namespace servelab {
namespace {

std::string join_names(const std::vector<ParamSpec>& specs) {
  std::string out;
  for (const auto& s : specs) out += (out.empty() ? "" : ", ") + s.name;
  return out.empty() ? "(none)" : out;
}

// Converts `value` to the spec's type where that loses nothing (3 -> 3.0, 2.0 -> 2).
ParamValue coerce(const std::string& entry, const ParamSpec& spec, const ParamValue& value) {
  const auto fail = [&] {
    return ValueError(
        str(entry, ": ", spec.name, "=", format_param_value(value), " is not a ", param_type_name(spec.type)));
  };
  switch (spec.type) {
    case ParamType::Bool:
      if (std::holds_alternative<bool>(value)) return value;
      throw fail();
    case ParamType::Int:
      if (std::holds_alternative<std::int64_t>(value)) return value;
      if (const double* d = std::get_if<double>(&value);
          d && std::isfinite(*d) && std::trunc(*d) == *d && std::abs(*d) < 9.0e18) {
        return static_cast<std::int64_t>(*d);
      }
      throw fail();
    case ParamType::Float:
      if (std::holds_alternative<double>(value)) return value;
      if (const auto* i = std::get_if<std::int64_t>(&value)) return static_cast<double>(*i);
      throw fail();
    case ParamType::String:
      if (std::holds_alternative<std::string>(value)) return value;
      throw fail();
    case ParamType::FloatList:
      if (std::holds_alternative<std::vector<double>>(value)) return value;
      throw fail();
  }
  throw fail();
}

void check_range(const std::string& entry, const ParamSpec& spec, double x, const std::string& shown) {
  if (std::isnan(x)) throw ValueError(str(entry, ": ", spec.name, "=", shown, " is NaN"));
  if (spec.min && (spec.min_exclusive ? !(x > *spec.min) : !(x >= *spec.min))) {
    throw ValueError(
        str(entry, ": ", spec.name, "=", shown, " must be ", spec.min_exclusive ? "> " : ">= ", *spec.min));
  }
  if (spec.max && !(x <= *spec.max)) {
    throw ValueError(str(entry, ": ", spec.name, "=", shown, " must be <= ", *spec.max));
  }
  if (std::isinf(x) && !spec.max && spec.type != ParamType::Int) {
    throw ValueError(str(entry, ": ", spec.name, "=", shown, " must be finite"));
  }
}

void check_value(const std::string& entry, const ParamSpec& spec, const ParamValue& value) {
  if (const auto* d = std::get_if<double>(&value)) check_range(entry, spec, *d, format_param_value(value));
  if (const auto* i = std::get_if<std::int64_t>(&value)) {
    check_range(entry, spec, static_cast<double>(*i), format_param_value(value));
  }
  if (const auto* list = std::get_if<std::vector<double>>(&value)) {
    for (std::size_t k = 0; k < list->size(); ++k) {
      check_range(entry, spec, (*list)[k], str((*list)[k], " (element ", k, " of ", spec.name, ")"));
    }
  }
  if (const auto* s = std::get_if<std::string>(&value); s && !spec.choices.empty()) {
    for (const auto& c : spec.choices) {
      if (c == *s) return;
    }
    std::string allowed;
    for (const auto& c : spec.choices) allowed += (allowed.empty() ? "'" : ", '") + c + "'";
    throw ValueError(str(entry, ": ", spec.name, "='", *s, "' is not one of ", allowed));
  }
}

}  // namespace

std::string_view param_type_name(ParamType type) {
  switch (type) {
    case ParamType::Bool:
      return "bool";
    case ParamType::Int:
      return "int";
    case ParamType::Float:
      return "float";
    case ParamType::String:
      return "str";
    case ParamType::FloatList:
      return "list of float";
  }
  return "?";
}

std::string format_param_value(const ParamValue& value) {
  std::ostringstream out;
  out.precision(17);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          out << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<T, std::string>) {
          out << "'" << v << "'";
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          out << "[";
          for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
          out << "]";
        } else {
          out << v;
        }
      },
      value);
  return out.str();
}

ParamSpec ParamSpec::positive(std::string name, std::optional<double> default_value, std::string doc) {
  ParamSpec s{std::move(name), ParamType::Float, std::nullopt, std::move(doc), 0.0, std::nullopt, true, {}};
  if (default_value) s.default_value = *default_value;
  return s;
}

ParamSpec ParamSpec::non_negative(std::string name, std::optional<double> default_value, std::string doc) {
  ParamSpec s = positive(std::move(name), default_value, std::move(doc));
  s.min_exclusive = false;
  return s;
}

Params::Params(std::string entry, const std::vector<ParamSpec>& specs, const ParamArgs& args)
    : entry_(std::move(entry)) {
  for (const auto& [name, value] : args) {
    bool known = false;
    for (const auto& s : specs) known = known || s.name == name;
    if (!known) {
      throw KeyError(str(entry_, " has no parameter '", name, "'; its parameters are: ", join_names(specs)));
    }
  }
  for (const auto& spec : specs) {
    order_.push_back(spec.name);
    const auto given = args.find(spec.name);
    if (given == args.end()) {
      if (!spec.default_value) throw ValueError(str(entry_, ": parameter '", spec.name, "' is required"));
      values_[spec.name] = coerce(entry_, spec, *spec.default_value);
      continue;
    }
    ParamValue value = coerce(entry_, spec, given->second);
    check_value(entry_, spec, value);
    values_[spec.name] = std::move(value);
  }
}

const ParamValue& Params::get(std::string_view name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) throw KeyError(str(entry_, " has no parameter '", name, "'"));
  return it->second;
}

bool Params::get_bool(std::string_view name) const { return std::get<bool>(get(name)); }
std::int64_t Params::get_int(std::string_view name) const { return std::get<std::int64_t>(get(name)); }
double Params::get_float(std::string_view name) const { return std::get<double>(get(name)); }
const std::string& Params::get_string(std::string_view name) const { return std::get<std::string>(get(name)); }
const std::vector<double>& Params::get_floats(std::string_view name) const {
  return std::get<std::vector<double>>(get(name));
}

std::string Params::describe() const {
  std::string out = entry_ + "(";
  for (std::size_t i = 0; i < order_.size(); ++i) {
    out += (i ? ", " : "") + order_[i] + "=" + format_param_value(values_.at(order_[i]));
  }
  return out + ")";
}

std::vector<std::string> split_list_param(std::string_view name, const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item.empty()) throw ValueError(str(name, "='", list, "' has an empty item"));
    out.push_back(item);
  }
  return out;
}

}  // namespace servelab
