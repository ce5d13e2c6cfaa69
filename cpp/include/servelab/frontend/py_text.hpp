// Values written as the Python front-end writes them in its messages (repr, "%g"), so that a
// refusal reads the same whichever engine answers it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace servelab::frontend {

// Python's repr of a string: 'rm2'.
std::string py_repr(std::string_view s);
inline std::string py_repr(const std::string& s) { return py_repr(std::string_view(s)); }
inline std::string py_repr(const char* s) { return py_repr(std::string_view(s)); }
// Python's repr of the value json.loads would give: None, True, 'x', [1, 2], {'a': 1.5}.
std::string py_repr(const nlohmann::json& value);
// Python's type(json.loads(...)).__name__: dict, list, str, int, float, bool, NoneType.
std::string py_type_name(const nlohmann::json& value);
// Python's f"{x:g}".
std::string py_g(double x);

}  // namespace servelab::frontend
