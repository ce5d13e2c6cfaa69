// JSON export / import of WorkerPolicy and PolicySet (policy.hpp) with nlohmann::json. The
// documents are compact, keys in a fixed order (ordered_json), doubles printed with round-trip
// precision; reading checks every field's type and raises ValueError naming the field and value.
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/systems/ramsis/policy.hpp"

namespace servelab::ramsis {

namespace {

// Insertion-ordered so the written documents keep the historical key order.
using Json = nlohmann::ordered_json;

constexpr const char* kPolicyFormat = "servelab.ramsis.worker_policy";
constexpr const char* kSetFormat = "servelab.ramsis.policy_set";

// ---------- writing ----------

// JSON has no NaN / infinity (nlohmann would silently write null).
double finite(double x, const char* field) {
  if (!std::isfinite(x)) throw ValueError(str("policy JSON: cannot write ", field, "=", x));
  return x;
}

Json finite_list(const std::vector<double>& values, const char* field) {
  Json out = Json::array();
  for (const double x : values) out.push_back(finite(x, field));
  return out;
}

void put_policy(Json& out, const WorkerPolicy& p) {
  out["models"] = p.models;
  out["accuracy"] = finite_list(p.accuracy, "accuracy");
  out["slo_ns"] = p.slo;
  out["load_qps"] = finite(p.load_qps, "load_qps");
  out["workers"] = p.workers;
  out["balancer"] = p.balancer;
  out["arrivals"] = p.arrivals;
  out["discretisation"] = discretisation_name(p.discretisation);
  out["intervals"] = p.intervals;
  out["batching"] = batching_name(p.batching);
  out["max_queue"] = p.max_queue;
  out["slack_levels_ns"] = p.slack_levels;
  out["action_model"] = p.action_model;
  out["action_batch"] = p.action_batch;
  out["expected_accuracy"] = finite(p.expected_accuracy, "expected_accuracy");
  out["expected_violation"] = finite(p.expected_violation, "expected_violation");
  out["feasible"] = p.feasible;
}

Json header(const char* format) {
  Json doc = Json::object();
  doc["format"] = format;
  doc["version"] = 1;
  return doc;
}

std::string dump(const Json& doc) {
  try {
    return doc.dump();
  } catch (const Json::exception& e) {  // type_error 316: a text field is not valid UTF-8
    throw ValueError(
        str("policy JSON: cannot write the document (model names, balancer and arrivals must be UTF-8): ", e.what()));
  }
}

// ---------- reading ----------

// A value for an error message. Containers are described, never dumped: dumping recurses once per
// nesting level, and a list of a huge list is no clearer than its size.
std::string shown(const Json& v) {
  if (v.is_array()) return str("a list of ", v.size(), v.size() == 1 ? " item" : " items");
  if (v.is_object()) return str("an object of ", v.size(), v.size() == 1 ? " field" : " fields");
  std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// The name "key[i]" of a list element in errors, formatted only when there is an error (a policy
// set has some 10^5 elements: formatting each name dominated the reading time).
struct Element {
  const std::string& key;
  std::size_t i;
  std::string operator()() const { return str(key, "[", i, "]"); }
};

// Typed field access naming the field (key path) and the offending value in errors.
class Fields {
 public:
  Fields(const Json& v, std::string where) : where_(std::move(where)), obj_(v) {
    if (!v.is_object()) throw ValueError(str(where_, " must be a JSON object, not ", shown(v)));
  }
  const Json& get(const std::string& key) const {
    const auto it = obj_.find(key);
    if (it == obj_.end()) throw ValueError(str(where_, ": field '", key, "' is missing"));
    return *it;
  }
  double number(const std::string& key) const { return as_number(get(key), key); }
  std::int64_t integer(const std::string& key) const { return as_integer(get(key), key); }
  std::int32_t integer32(const std::string& key) const { return as_integer32(get(key), key); }
  std::string text(const std::string& key) const {
    const Json& v = get(key);
    if (!v.is_string()) throw ValueError(str(where_, ": field '", key, "' must be a string, not ", shown(v)));
    return v.get<std::string>();
  }
  bool flag(const std::string& key) const {
    const Json& v = get(key);
    if (!v.is_boolean()) throw ValueError(str(where_, ": field '", key, "' must be true or false, not ", shown(v)));
    return v.get<bool>();
  }
  const Json& array(const std::string& key) const {
    const Json& v = get(key);
    if (!v.is_array()) throw ValueError(str(where_, ": field '", key, "' must be a list, not ", shown(v)));
    return v;
  }
  std::vector<Nanos> integers(const std::string& key) const {
    std::vector<Nanos> out;
    const Json& a = array(key);
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out.push_back(as_integer(a[i], Element{key, i}));
    return out;
  }
  std::vector<std::int32_t> integers32(const std::string& key) const {
    std::vector<std::int32_t> out;
    const Json& a = array(key);
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out.push_back(as_integer32(a[i], Element{key, i}));
    return out;
  }
  std::vector<double> numbers(const std::string& key) const {
    std::vector<double> out;
    const Json& a = array(key);
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out.push_back(as_number(a[i], Element{key, i}));
    return out;
  }
  std::vector<std::string> texts(const std::string& key) const {
    std::vector<std::string> out;
    const Json& a = array(key);
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string())
        throw ValueError(str(where_, ": field '", key, "[", i, "]' must be a string, not ", shown(a[i])));
      out.push_back(a[i].get<std::string>());
    }
    return out;
  }
  const std::string& where() const { return where_; }

 private:
  // A field's name for an error: a string, or an Element.
  template <typename Key>
  static std::string name(const Key& key) {
    if constexpr (std::is_invocable_v<Key>) {
      return key();
    } else {
      return key;
    }
  }
  template <typename Key>
  double as_number(const Json& v, const Key& key) const {
    // A number too large for a double parses as infinity.
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      throw ValueError(str(where_, ": field '", name(key), "' must hold finite numbers, not ", shown(v)));
    return v.get<double>();
  }
  template <typename Key>
  std::int64_t as_integer(const Json& v, const Key& key) const {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()})
      throw ValueError(str(where_, ": field '", name(key), "' must hold 64-bit integers, not ", shown(v)));
    if (v.is_number_integer()) return v.get<std::int64_t>();
    // Integral floats (4e7, 40000000.0) are accepted, as other writers may produce them.
    const double d = v.is_number() ? v.get<double>() : 0.5;  // 0.5: not integral -> the error below
    if (d != std::floor(d) || std::abs(d) > 9e15)
      throw ValueError(str(where_, ": field '", name(key), "' must hold integers, not ", shown(v)));
    return static_cast<std::int64_t>(d);
  }
  template <typename Key>
  std::int32_t as_integer32(const Json& v, const Key& key) const {
    const std::int64_t x = as_integer(v, key);
    if (x < std::numeric_limits<std::int32_t>::min() || x > std::numeric_limits<std::int32_t>::max())
      throw ValueError(str(where_, ": field '", name(key), "' must hold 32-bit integers, not ", x));
    return static_cast<std::int32_t>(x);
  }
  std::string where_;
  const Json& obj_;
};

// Policy documents nest 3 levels (set, policies, a policy's lists); anything much deeper is not a
// policy, and nesting is bounded before it is built so nothing downstream recurses that deep.
constexpr int kMaxDepth = 64;

Json parse(const std::string& text) {
  const Json::parser_callback_t bounded = [](int depth, Json::parse_event_t event, Json&) {
    const bool opens = event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start;
    if (opens && depth >= kMaxDepth) {
      throw ValueError(str("policy JSON: nested deeper than ", kMaxDepth, " levels (a policy document nests 3)"));
    }
    return true;
  };
  try {
    return Json::parse(text, bounded);
  } catch (const Json::parse_error& e) {
    throw ValueError(str("policy JSON: not valid JSON at byte ", e.byte, ": ", e.what()));
  }
}

void check_format(const Fields& f, const char* format) {
  const std::string got = f.text("format");
  if (got != format) throw ValueError(str(f.where(), ": format='", got, "' is not '", format, "'"));
  const std::int64_t version = f.integer("version");
  if (version != 1) throw ValueError(str(f.where(), ": version=", version, " is not supported (1)"));
}

WorkerPolicy policy_from(const Fields& f) {
  WorkerPolicy p;
  p.models = f.texts("models");
  p.accuracy = f.numbers("accuracy");
  p.slo = f.integer("slo_ns");
  p.load_qps = f.number("load_qps");
  p.workers = f.integer32("workers");
  p.balancer = f.text("balancer");
  p.arrivals = f.text("arrivals");
  p.discretisation = parse_discretisation(f.text("discretisation"));
  p.intervals = f.integer32("intervals");
  p.batching = parse_batching(f.text("batching"));
  p.max_queue = f.integer32("max_queue");
  p.slack_levels = f.integers("slack_levels_ns");
  p.action_model = f.integers32("action_model");
  p.action_batch = f.integers32("action_batch");
  p.expected_accuracy = f.number("expected_accuracy");
  p.expected_violation = f.number("expected_violation");
  p.feasible = f.flag("feasible");
  p.validate();
  return p;
}

// The Fields checks make nlohmann's own exceptions unreachable in practice; should one escape
// anyway (type_error, out_of_range), it still reaches the caller as a ValueError.
template <typename F>
auto reading(const char* what, F read) {
  try {
    return read();
  } catch (const Json::exception& e) {
    throw ValueError(str("policy JSON: bad ", what, ": ", e.what()));
  }
}

}  // namespace

std::string to_json(const WorkerPolicy& policy) {
  policy.validate();
  Json doc = header(kPolicyFormat);
  put_policy(doc, policy);
  return dump(doc);
}

std::string to_json(const PolicySet& set) {
  set.validate();
  Json doc = header(kSetFormat);
  doc["models"] = set.models;
  doc["accuracy"] = finite_list(set.accuracy, "accuracy");
  doc["slo_ns"] = set.slo;
  doc["workers"] = set.workers;
  Json policies = Json::array();
  for (const WorkerPolicy& p : set.policies) {
    Json body = Json::object();
    put_policy(body, p);
    policies.push_back(std::move(body));
  }
  doc["policies"] = std::move(policies);
  return dump(doc);
}

namespace {

WorkerPolicy worker_policy_from(const Json& doc) {
  const Fields f(doc, "worker policy");
  check_format(f, kPolicyFormat);
  return policy_from(f);
}

PolicySet policy_set_from(const Json& doc) {
  const Fields f(doc, "policy set");
  check_format(f, kSetFormat);
  PolicySet set;
  set.models = f.texts("models");
  set.accuracy = f.numbers("accuracy");
  set.slo = f.integer("slo_ns");
  set.workers = f.integer32("workers");
  const Json& policies = f.array("policies");
  for (std::size_t i = 0; i < policies.size(); ++i) {
    set.policies.push_back(policy_from(Fields(policies[i], str("policy set: policies[", i, "]"))));
  }
  set.validate();
  return set;
}

}  // namespace

WorkerPolicy worker_policy_from_json(const std::string& text) {
  return reading("worker policy", [&] { return worker_policy_from(parse(text)); });
}

PolicySet policy_set_from_json(const std::string& text) {
  return reading("policy set", [&] { return policy_set_from(parse(text)); });
}

PolicySet any_policy_set_from_json(const std::string& text) {
  return reading("policy document", [&] {
    const Json doc = parse(text);  // once: a set file holds a hundred thousand numbers
    const std::string format = Fields(doc, "policy document").text("format");
    if (format == kSetFormat) return policy_set_from(doc);
    if (format == kPolicyFormat) return policy_set_of(worker_policy_from(doc));
    throw ValueError(
        str("policy document: format='", format, "' is neither '", kSetFormat, "' nor '", kPolicyFormat, "'"));
  });
}

}  // namespace servelab::ramsis
