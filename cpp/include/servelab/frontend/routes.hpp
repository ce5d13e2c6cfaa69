// The routes the HTTP engine serves, parsed from the request's method and target.
#pragma once

#include <string>
#include <string_view>

namespace servelab::frontend {

enum class RouteKind {
  None,             // no such route: 404
  WrongMethod,      // a route, not with this method: 405
  Live,             // GET /v2/health/live
  Ready,            // GET /v2/health/ready
  ServerMetadata,   // GET /v2
  ModelMetadata,    // GET /v2/models/{m}[/versions/{v}]
  ModelReady,       // GET .../ready
  ModelConfig,      // GET .../config
  Infer,            // POST .../infer
  RepositoryIndex,  // POST /v2/repository/index
  Forwarded,        // answered by the Python side: GET /metrics, GET .../stats, GET /v2/models/stats
};

struct Route {
  RouteKind kind = RouteKind::None;
  std::string model, version;  // percent-decoded
};

// `target`: the request line's target (its query string is ignored). HEAD is taken where GET is.
Route parse_route(std::string_view method, std::string_view target);
// The target's path, without its query string.
std::string_view target_path(std::string_view target);

}  // namespace servelab::frontend
