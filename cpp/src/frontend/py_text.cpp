#include "servelab/frontend/py_text.hpp"

#include <cmath>
#include <cstdio>

namespace servelab::frontend {

std::string py_repr(std::string_view s) {
  // Python quotes with ' unless the text holds ' and no ".
  const bool dq = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == q || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;  // UTF-8 passes as is, as Python prints printable characters
    }
  }
  out += q;
  return out;
}

std::string py_g(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

namespace {
std::string py_float(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  // repr(float): the shortest text that reads back; nlohmann writes the same digits.
  std::string s = nlohmann::json(x).dump();
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}
}  // namespace

std::string py_repr(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "None";
    case nlohmann::json::value_t::boolean:
      return v.get<bool>() ? "True" : "False";
    case nlohmann::json::value_t::string:
      return py_repr(v.get_ref<const std::string&>());
    case nlohmann::json::value_t::number_float:
      return py_float(v.get<double>());
    case nlohmann::json::value_t::array: {
      std::string out = "[";
      for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + py_repr(v[i]);
      return out + "]";
    }
    case nlohmann::json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [key, value] : v.items()) {
        out += (first ? "" : ", ") + py_repr(std::string_view(key)) + ": " + py_repr(value);
        first = false;
      }
      return out + "}";
    }
    default:  // integers
      return v.dump();
  }
}

std::string py_type_name(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "NoneType";
    case nlohmann::json::value_t::boolean:
      return "bool";
    case nlohmann::json::value_t::string:
      return "str";
    case nlohmann::json::value_t::number_float:
      return "float";
    case nlohmann::json::value_t::array:
      return "list";
    case nlohmann::json::value_t::object:
      return "dict";
    default:
      return "int";
  }
}

}  // namespace servelab::frontend
