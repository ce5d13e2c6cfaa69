#include "servelab/frontend/errors.hpp"

namespace servelab::frontend {

std::string_view kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Invalid:
      return "invalid";
    case ErrorKind::Unauthenticated:
      return "unauthenticated";
    case ErrorKind::NotFound:
      return "not_found";
    case ErrorKind::Timeout:
      return "timeout";
    case ErrorKind::TooLarge:
      return "too_large";
    case ErrorKind::Overloaded:
      return "overloaded";
    case ErrorKind::Unavailable:
      return "unavailable";
    case ErrorKind::Internal:
      return "internal";
  }
  return "internal";
}

int http_status(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Invalid:
      return 400;
    case ErrorKind::Unauthenticated:
      return 401;
    case ErrorKind::NotFound:
      return 404;
    case ErrorKind::Timeout:
      return 504;
    case ErrorKind::TooLarge:
      return 413;
    case ErrorKind::Overloaded:
    case ErrorKind::Unavailable:
      return 503;
    case ErrorKind::Internal:
      return 500;
  }
  return 500;
}

}  // namespace servelab::frontend
