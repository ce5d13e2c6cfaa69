// Python dicts -> INFaaS inputs (variants and scaling problems), shared by _core.infaas and
// _lp.infaas. A missing key or a value of the wrong type is a ValueError naming the field.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/systems/infaas/scaling.hpp"
#include "servelab/systems/infaas/variant.hpp"

namespace servelab::bindings {

template <typename T>
T infaas_field(const pybind11::dict& d, const char* key, const std::string& where, const T* fallback = nullptr) {
  if (!d.contains(key)) {
    if (fallback != nullptr) return *fallback;
    throw ValueError(str(where, ".", key, " is missing"));
  }
  try {
    return d[key].cast<T>();
  } catch (const pybind11::cast_error&) {
    throw ValueError(str(where, ".", key, "=", pybind11::repr(d[key]).cast<std::string>(), " has the wrong type"));
  }
}

inline infaas::Variant infaas_variant(const pybind11::handle& h, std::size_t i) {
  const std::string where = str("variants[", i, "]");
  if (!pybind11::isinstance<pybind11::dict>(h)) throw ValueError(where + " is not a dict");
  const auto d = pybind11::reinterpret_borrow<pybind11::dict>(h);
  const std::string empty;
  const double zero = 0.0;
  infaas::Variant v;
  v.name = infaas_field<std::string>(d, "name", where);
  v.architecture = infaas_field<std::string>(d, "architecture", where);
  v.task = infaas_field<std::string>(d, "task", where);
  v.framework = infaas_field<std::string>(d, "framework", where, &empty);
  v.hardware = infaas_field<std::string>(d, "hardware", where);
  v.latency_ms = infaas_field<std::vector<double>>(d, "latency_ms", where);
  const auto batches = static_cast<std::int32_t>(v.latency_ms.size());
  v.batch_opt = infaas_field<std::int32_t>(d, "batch_opt", where, &batches);
  v.accuracy = infaas_field<double>(d, "accuracy", where);
  v.load_s = infaas_field<double>(d, "load_s", where, &zero);
  v.memory_mb = infaas_field<double>(d, "memory_mb", where, &zero);
  v.cost_per_s = infaas_field<double>(d, "cost_per_s", where);
  v.peak_qps = infaas_field<double>(d, "peak_qps", where, &zero);
  return v;
}

inline pybind11::dict infaas_variant_dict(const infaas::Variant& v) {
  pybind11::dict d;
  d["name"] = v.name;
  d["architecture"] = v.architecture;
  d["task"] = v.task;
  d["framework"] = v.framework;
  d["hardware"] = v.hardware;
  d["batch_opt"] = v.batch_opt;
  d["accuracy"] = v.accuracy;
  d["latency_ms"] = v.latency_ms;
  d["load_s"] = v.load_s;
  d["memory_mb"] = v.memory_mb;
  d["cost_per_s"] = v.cost_per_s;
  d["peak_qps"] = v.peak_qps;
  d["saturation_qps"] = v.saturation_qps();
  return d;
}

inline infaas::ScalingProblem infaas_problem(const pybind11::dict& d) {
  const std::string where = "problem";
  infaas::ScalingProblem p;
  const std::vector<std::string> no_types;
  const std::vector<std::vector<double>> no_rows;
  const std::vector<double> no_values;
  const double zero = 0.0;
  p.names = infaas_field<std::vector<std::string>>(d, "names", where);
  std::vector<std::int32_t> own(p.names.size(), 0);
  p.architecture = infaas_field<std::vector<std::int32_t>>(d, "architecture", where, &own);
  p.saturation_qps = infaas_field<std::vector<double>>(d, "saturation_qps", where);
  p.cost_per_s = infaas_field<std::vector<double>>(d, "cost_per_s", where);
  const std::vector<double> zeros(p.names.size(), 0.0);
  p.load_s = infaas_field<std::vector<double>>(d, "load_s", where, &zeros);
  p.latency_ms = infaas_field<std::vector<double>>(d, "latency_ms", where);
  const std::vector<std::int64_t> none(p.names.size(), 0);
  p.running = infaas_field<std::vector<std::int64_t>>(d, "running", where, &none);
  p.resource_types = infaas_field<std::vector<std::string>>(d, "resource_types", where, &no_types);
  p.requirement = infaas_field<std::vector<std::vector<double>>>(d, "requirement", where, &no_rows);
  p.capacity = infaas_field<std::vector<double>>(d, "capacity", where, &no_values);
  p.load_qps = infaas_field<double>(d, "load_qps", where);
  p.slack_qps = infaas_field<double>(d, "slack_qps", where, &zero);
  p.slo_ms = infaas_field<double>(d, "slo_ms", where);
  p.lambda = infaas_field<double>(d, "lambda", where, &zero);
  p.validate();
  return p;
}

inline pybind11::dict infaas_plan_dict(const infaas::ScalingPlan& plan) {
  pybind11::dict d;
  d["delta"] = plan.delta;
  d["instances"] = plan.instances;
  d["objective"] = plan.objective;
  d["running_cost_per_s"] = plan.running_cost_per_s;
  d["capacity_qps"] = plan.capacity_qps;
  d["feasible"] = plan.feasible;
  d["status"] = plan.status;
  d["strategy"] = plan.strategy;
  d["solve_s"] = plan.solve_s;
  d["scale_down"] = plan.scale_down;
  d["replicas_only"] = plan.replicas_only;
  return d;
}

}  // namespace servelab::bindings
