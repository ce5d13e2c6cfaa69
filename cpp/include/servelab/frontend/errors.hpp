// The HTTP engine's one error type: a refusal of a kind, answered with the kind's status code and
// {"error": message}, as the Python front-end (servelab/frontend/errors.py) answers it.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace servelab::frontend {

enum class ErrorKind { Invalid, Unauthenticated, NotFound, Timeout, TooLarge, Overloaded, Unavailable, Internal };

// The kind's name in the metrics' servelab_frontend_refused{reason} ("invalid", "too_large", ...).
std::string_view kind_name(ErrorKind kind);
// Its HTTP status (400, 401, 404, 504, 413, 503, 503, 500).
int http_status(ErrorKind kind);

class FrontendError : public std::runtime_error {
 public:
  FrontendError(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

inline FrontendError invalid(const std::string& message) { return {ErrorKind::Invalid, message}; }

}  // namespace servelab::frontend
