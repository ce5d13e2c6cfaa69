// JSON export / import of WorkerPolicy and PolicySet (policy.hpp): a small writer and a strict
// recursive-descent reader for exactly the JSON these documents use.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/systems/ramsis/policy.hpp"

namespace servelab::ramsis {

namespace {

constexpr const char* kPolicyFormat = "servelab.ramsis.worker_policy";
constexpr const char* kSetFormat = "servelab.ramsis.policy_set";

// ---------- writing ----------

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double x) {
  if (!std::isfinite(x)) throw ValueError(str("cannot write ", x, " to JSON"));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

template <typename T, typename F>
std::string list(const std::vector<T>& values, F format) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + format(values[i]);
  return out + "]";
}

std::string integer(std::int64_t x) { return std::to_string(x); }

std::string policy_body(const WorkerPolicy& p) {
  std::string out;
  out += "\"models\":" + list(p.models, quote);
  out += ",\"accuracy\":" + list(p.accuracy, number);
  out += ",\"slo_ns\":" + integer(p.slo);
  out += ",\"load_qps\":" + number(p.load_qps);
  out += ",\"workers\":" + integer(p.workers);
  out += ",\"balancer\":" + quote(p.balancer);
  out += ",\"arrivals\":" + quote(p.arrivals);
  out += ",\"discretisation\":" + quote(discretisation_name(p.discretisation));
  out += ",\"intervals\":" + integer(p.intervals);
  out += ",\"batching\":" + quote(batching_name(p.batching));
  out += ",\"max_queue\":" + integer(p.max_queue);
  out += ",\"slack_levels_ns\":" + list(p.slack_levels, [](Nanos x) { return integer(x); });
  out += ",\"action_model\":" + list(p.action_model, [](std::int32_t x) { return integer(x); });
  out += ",\"action_batch\":" + list(p.action_batch, [](std::int32_t x) { return integer(x); });
  out += ",\"expected_accuracy\":" + number(p.expected_accuracy);
  out += ",\"expected_violation\":" + number(p.expected_violation);
  out += std::string(",\"feasible\":") + (p.feasible ? "true" : "false");
  return out;
}

// ---------- reading ----------

struct Value;
using Object = std::map<std::string, Value>;
using Array = std::vector<Value>;
struct Value {
  std::variant<std::nullptr_t, bool, double, std::string, std::shared_ptr<Array>, std::shared_ptr<Object>> v;
};

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}
  Value document() {
    Value v = value();
    space();
    if (i_ != s_.size()) fail("unexpected text after the document");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(str("policy JSON: ", what, " at offset ", i_));
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  bool take(char c) {
    space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) fail(str("expected '", c, "'"));
  }
  Value value() {
    space();
    if (i_ >= s_.size()) fail("unexpected end");
    const char c = s_[i_];
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return Value{string()};
    if (s_.compare(i_, 4, "true") == 0) return i_ += 4, Value{true};
    if (s_.compare(i_, 5, "false") == 0) return i_ += 5, Value{false};
    if (s_.compare(i_, 4, "null") == 0) return i_ += 4, Value{nullptr};
    return Value{num()};
  }
  Value object() {
    expect('{');
    auto obj = std::make_shared<Object>();
    if (!take('}')) {
      do {
        space();
        const std::string key = string();
        expect(':');
        (*obj)[key] = value();
      } while (take(','));
      expect('}');
    }
    return Value{obj};
  }
  Value array() {
    expect('[');
    auto arr = std::make_shared<Array>();
    if (!take(']')) {
      do arr->push_back(value());
      while (take(','));
      expect(']');
    }
    return Value{arr};
  }
  std::string string() {
    if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string");
    ++i_;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') {
        if (++i_ >= s_.size()) fail("unterminated escape");
        const char e = s_[i_];
        if (e == 'u') {
          if (i_ + 4 >= s_.size()) fail("bad \\u escape");
          const unsigned code = std::stoul(s_.substr(i_ + 1, 4), nullptr, 16);
          if (code > 0x7f) fail("non-ASCII \\u escapes are not supported");
          out += static_cast<char>(code);
          i_ += 4;
        } else {
          out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
        }
      } else {
        out += s_[i_];
      }
      ++i_;
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    return out;
  }
  double num() {
    const std::size_t start = i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' || s_[i_] == '+' ||
                              s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
    }
    if (start == i_) fail("expected a value");
    const std::string text = s_.substr(start, i_ - start);
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) fail(str("bad number '", text, "'"));
    return x;
  }
  const std::string& s_;
  std::size_t i_ = 0;
};

// Typed field access naming the field in errors.
class Fields {
 public:
  Fields(const Value& v, std::string where) : where_(std::move(where)) {
    const auto* obj = std::get_if<std::shared_ptr<Object>>(&v.v);
    if (!obj) throw ValueError(str(where_, " must be a JSON object"));
    obj_ = obj->get();
  }
  bool has(const std::string& key) const { return obj_->count(key) > 0; }
  const Value& get(const std::string& key) const {
    const auto it = obj_->find(key);
    if (it == obj_->end()) throw ValueError(str(where_, ": field '", key, "' is missing"));
    return it->second;
  }
  double number(const std::string& key) const { return as_number(get(key), key); }
  std::int64_t integer(const std::string& key) const { return as_integer(get(key), key); }
  std::string text(const std::string& key) const {
    const auto* s = std::get_if<std::string>(&get(key).v);
    if (!s) throw ValueError(str(where_, ": field '", key, "' must be a string"));
    return *s;
  }
  bool flag(const std::string& key) const {
    const auto* b = std::get_if<bool>(&get(key).v);
    if (!b) throw ValueError(str(where_, ": field '", key, "' must be true or false"));
    return *b;
  }
  const Array& array(const std::string& key) const {
    const auto* a = std::get_if<std::shared_ptr<Array>>(&get(key).v);
    if (!a) throw ValueError(str(where_, ": field '", key, "' must be a list"));
    return **a;
  }
  template <typename T>
  std::vector<T> integers(const std::string& key) const {
    std::vector<T> out;
    for (const auto& v : array(key)) out.push_back(static_cast<T>(as_integer(v, key)));
    return out;
  }
  std::vector<double> numbers(const std::string& key) const {
    std::vector<double> out;
    for (const auto& v : array(key)) out.push_back(as_number(v, key));
    return out;
  }
  std::vector<std::string> texts(const std::string& key) const {
    std::vector<std::string> out;
    for (const auto& v : array(key)) {
      const auto* s = std::get_if<std::string>(&v.v);
      if (!s) throw ValueError(str(where_, ": field '", key, "' must be a list of strings"));
      out.push_back(*s);
    }
    return out;
  }
  const std::string& where() const { return where_; }

 private:
  double as_number(const Value& v, const std::string& key) const {
    const auto* d = std::get_if<double>(&v.v);
    if (!d || !std::isfinite(*d)) throw ValueError(str(where_, ": field '", key, "' must hold finite numbers"));
    return *d;
  }
  std::int64_t as_integer(const Value& v, const std::string& key) const {
    const double d = as_number(v, key);
    if (d != std::floor(d) || std::abs(d) > 9e15)
      throw ValueError(str(where_, ": field '", key, "' must hold integers"));
    return static_cast<std::int64_t>(d);
  }
  std::string where_;
  const Object* obj_ = nullptr;
};

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
  p.workers = static_cast<std::int32_t>(f.integer("workers"));
  p.balancer = f.text("balancer");
  p.arrivals = f.text("arrivals");
  p.discretisation = parse_discretisation(f.text("discretisation"));
  p.intervals = static_cast<std::int32_t>(f.integer("intervals"));
  p.batching = parse_batching(f.text("batching"));
  p.max_queue = static_cast<std::int32_t>(f.integer("max_queue"));
  p.slack_levels = f.integers<Nanos>("slack_levels_ns");
  p.action_model = f.integers<std::int32_t>("action_model");
  p.action_batch = f.integers<std::int32_t>("action_batch");
  p.expected_accuracy = f.number("expected_accuracy");
  p.expected_violation = f.number("expected_violation");
  p.feasible = f.flag("feasible");
  p.validate();
  return p;
}

}  // namespace

std::string to_json(const WorkerPolicy& policy) {
  policy.validate();
  return std::string("{\"format\":\"") + kPolicyFormat + "\",\"version\":1," + policy_body(policy) + "}";
}

std::string to_json(const PolicySet& set) {
  set.validate();
  std::string out = std::string("{\"format\":\"") + kSetFormat + "\",\"version\":1";
  out += ",\"models\":" + list(set.models, quote);
  out += ",\"accuracy\":" + list(set.accuracy, number);
  out += ",\"slo_ns\":" + integer(set.slo);
  out += ",\"workers\":" + integer(set.workers);
  out += ",\"policies\":[";
  for (std::size_t i = 0; i < set.policies.size(); ++i) {
    out += std::string(i ? "," : "") + "{" + policy_body(set.policies[i]) + "}";
  }
  return out + "]}";
}

WorkerPolicy worker_policy_from_json(const std::string& text) {
  const Value doc = Parser(text).document();
  const Fields f(doc, "worker policy");
  check_format(f, kPolicyFormat);
  return policy_from(f);
}

PolicySet policy_set_from_json(const std::string& text) {
  const Value doc = Parser(text).document();
  const Fields f(doc, "policy set");
  check_format(f, kSetFormat);
  PolicySet set;
  set.models = f.texts("models");
  set.accuracy = f.numbers("accuracy");
  set.slo = f.integer("slo_ns");
  set.workers = static_cast<std::int32_t>(f.integer("workers"));
  const Array& policies = f.array("policies");
  for (std::size_t i = 0; i < policies.size(); ++i) {
    set.policies.push_back(policy_from(Fields(policies[i], str("policy set: policies[", i, "]"))));
  }
  set.validate();
  return set;
}

}  // namespace servelab::ramsis
