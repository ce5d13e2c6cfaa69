// Short builders for typed parameter specs, for registrations that list many parameters
// (search methods, config models). Bounds are inclusive unless min_exclusive is set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "servelab/core/params.hpp"

namespace servelab {

inline ParamSpec bool_param(std::string name, bool default_value, std::string doc) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::Bool;
  s.default_value = default_value;
  s.doc = std::move(doc);
  return s;
}

inline ParamSpec int_param(std::string name, std::int64_t default_value, std::int64_t min, std::string doc,
                           std::optional<std::int64_t> max = std::nullopt) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::Int;
  s.default_value = default_value;
  s.doc = std::move(doc);
  s.min = static_cast<double>(min);
  if (max) s.max = static_cast<double>(*max);
  return s;
}

inline ParamSpec float_param(std::string name, double default_value, double min, std::optional<double> max,
                             std::string doc, bool min_exclusive = false) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::Float;
  s.default_value = default_value;
  s.doc = std::move(doc);
  s.min = min;
  s.max = max;
  s.min_exclusive = min_exclusive;
  return s;
}

inline ParamSpec string_param(std::string name, std::string default_value, std::string doc) {
  ParamSpec s;
  s.name = std::move(name);
  s.type = ParamType::String;
  s.default_value = std::move(default_value);
  s.doc = std::move(doc);
  return s;
}

}  // namespace servelab
