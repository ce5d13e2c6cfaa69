// The exceptions servelab's C++ code throws. The bindings translate each one into the Python
// exception named after it, keeping the message; messages name the offending field and value.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace servelab {

// A parameter or input has a bad value. Python: ValueError.
class ValueError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A name (registry entry, model, hardware type, column) does not exist. Python: KeyError.
class KeyError : public std::out_of_range {
 public:
  using std::out_of_range::out_of_range;
};

// Something failed while running (a backend call, a file read). Python: RuntimeError.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run or an allocation would need more memory than the machine has; the message names the input
// to change (count=, horizon_s=), the estimate and what is available. Python: MemoryError.
class MemoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The user asked a long call to stop (Ctrl-C). Python: KeyboardInterrupt.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

// Concatenates streamable values into one message: str("batch=", n, " is not positive").
template <typename... Args>
std::string str(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

}  // namespace servelab
