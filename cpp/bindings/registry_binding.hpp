// Exposes a Registry<Product> to Python: list_<plural>() describes every entry and its typed
// parameters; make_<singular>(spec, **kwargs) builds one from "name(a=1)" or a name plus keywords.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/registry.hpp"

namespace servelab::bindings {

inline pybind11::object param_value_to_python(const ParamValue& value) {
  return std::visit([](const auto& v) { return pybind11::object(pybind11::cast(v)); }, value);
}

inline pybind11::dict describe_param(const ParamSpec& spec) {
  pybind11::dict d;
  d["name"] = spec.name;
  d["type"] = std::string(param_type_name(spec.type));
  d["required"] = !spec.default_value.has_value();
  d["default"] = spec.default_value ? param_value_to_python(*spec.default_value) : pybind11::none();
  d["doc"] = spec.doc;
  d["min"] = spec.min ? pybind11::object(pybind11::float_(*spec.min)) : pybind11::none();
  d["min_exclusive"] = spec.min_exclusive;
  d["max"] = spec.max ? pybind11::object(pybind11::float_(*spec.max)) : pybind11::none();
  d["choices"] = spec.choices;
  return d;
}

// Python keyword arguments to ParamArgs; a value of an unsupported type names the parameter.
inline ParamArgs args_from_python(const pybind11::kwargs& kwargs) {
  ParamArgs args;
  for (const auto& [key, value] : kwargs) {
    const auto name = pybind11::cast<std::string>(key);
    // An int beyond int64 would otherwise become a float silently (the variant's next type).
    if (pybind11::isinstance<pybind11::int_>(value) && !pybind11::isinstance<pybind11::bool_>(value)) {
      int overflow = 0;
      PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
      if (overflow != 0) {
        throw ValueError(str(name, "=", pybind11::cast<std::string>(pybind11::repr(value)),
                             " is out of range: integer parameters must fit in 64 bits"));
      }
    }
    try {
      args[name] = pybind11::cast<ParamValue>(value);
    } catch (const pybind11::cast_error&) {
      throw ValueError(str(name, "=", pybind11::cast<std::string>(pybind11::repr(value)),
                           " is not a bool, int, float, str or list of floats"));
    }
  }
  return args;
}

// A parameter declared from Python (a policy or executor written in Python):
inline ParamType param_type_from(const std::string& entry, const std::string& name, const std::string& type) {
  for (const ParamType t :
       {ParamType::Bool, ParamType::Int, ParamType::Float, ParamType::String, ParamType::FloatList}) {
    if (param_type_name(t) == type) return t;
  }
  throw ValueError(
      str(entry, ": parameter '", name, "' has type='", type, "'; known: bool, int, float, str, list of float"));
}

inline std::optional<double> optional_number(const pybind11::dict& d, const char* key) {
  if (!d.contains(key) || d[key].is_none()) return std::nullopt;
  return d[key].cast<double>();
}

// {"name", "type", "default" (absent: required), "doc", "min", "max", "min_exclusive", "choices"}.
inline ParamSpec param_spec_from(const std::string& entry, const pybind11::dict& d) {
  ParamSpec spec;
  spec.name = d["name"].cast<std::string>();
  spec.type = param_type_from(entry, spec.name, d["type"].cast<std::string>());
  if (d.contains("default")) spec.default_value = d["default"].cast<ParamValue>();
  if (d.contains("doc")) spec.doc = d["doc"].cast<std::string>();
  spec.min = optional_number(d, "min");
  spec.max = optional_number(d, "max");
  if (d.contains("min_exclusive")) spec.min_exclusive = d["min_exclusive"].cast<bool>();
  if (d.contains("choices")) spec.choices = d["choices"].cast<std::vector<std::string>>();
  // A default must itself pass the checks a user's value would.
  if (spec.default_value) Params(entry, {spec}, ParamArgs{{spec.name, *spec.default_value}});
  return spec;
}

// `value` as a product of `registry`: a bound Product, or a spec string ('name(a=1)') the registry
// builds. Anything else (None included) is a ValueError naming `field` and the value:
// "<field>=<repr> is not <product> or a spec string such as <example>".
template <typename Product>
std::shared_ptr<const Product> product_or_spec(pybind11::handle value, std::string_view field,
                                               const Registry<Product>& registry, std::string_view product,
                                               std::string_view example) {
  if (pybind11::isinstance<pybind11::str>(value)) return registry.make(value.cast<std::string>());
  if (pybind11::isinstance<Product>(value)) return value.cast<std::shared_ptr<Product>>();
  throw ValueError(str(field, "=", pybind11::repr(value).cast<std::string>(), " is not ", product,
                       " or a spec string such as ", example));
}

// `get_registry` returns the (lazily filled) registry; products must already be bound.
template <typename Product, typename GetRegistry>
void bind_registry(pybind11::module_& m, const std::string& singular, const std::string& plural,
                   GetRegistry get_registry) {
  m.def(("list_" + plural).c_str(),
        [get_registry] {
          pybind11::list out;
          for (const auto& entry : get_registry().entries()) {
            pybind11::dict d;
            d["name"] = entry->name;
            d["doc"] = entry->doc;
            d["origin"] = entry->builtin ? "c++" : "python";
            pybind11::list params;
            for (const auto& p : entry->params) params.append(describe_param(p));
            d["params"] = params;
            out.append(d);
          }
          return out;
        },
        ("Every registered " + singular + ": name, doc and typed parameters.").c_str());
  m.def(("make_" + singular).c_str(),
        [get_registry](const std::string& spec, const pybind11::kwargs& kwargs) {
          const auto& registry = get_registry();
          if (kwargs.empty()) return registry.make(spec);
          auto [name, args] = parse_spec(spec);
          for (auto& [key, value] : args_from_python(kwargs)) {
            if (args.count(key)) throw ValueError(str("parameter '", key, "' is given in the spec and as a keyword"));
            args[key] = std::move(value);
          }
          return registry.make(name, args);
        },
        pybind11::arg("spec"),
        ("Builds a " + singular + " from 'name(a=1, ...)' or a name plus keyword arguments.").c_str());
}

}  // namespace servelab::bindings
