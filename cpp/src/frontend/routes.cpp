#include "servelab/frontend/routes.hpp"

#include <vector>

namespace servelab::frontend {
namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path[0] != '/') return out;
  path.remove_prefix(1);
  while (true) {
    const auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// The route of `path` with the method it takes (None: no such path).
Route match(const std::vector<std::string_view>& s, bool& post) {
  post = false;
  const auto n = s.size();
  for (const auto& part : s)
    if (part.empty()) return {};  // "//" or a trailing "/": no route, as aiohttp
  if (n == 1 && s[0] == "metrics") return {RouteKind::Forwarded, "", ""};
  if (n == 0 || s[0] != "v2") return {};
  if (n == 1) return {RouteKind::ServerMetadata, "", ""};
  if (n == 3 && s[1] == "health" && s[2] == "live") return {RouteKind::Live, "", ""};
  if (n == 3 && s[1] == "health" && s[2] == "ready") return {RouteKind::Ready, "", ""};
  if (n == 3 && s[1] == "repository" && s[2] == "index") {
    post = true;
    return {RouteKind::RepositoryIndex, "", ""};
  }
  if (n < 3 || s[1] != "models") return {};
  if (n == 3 && s[2] == "stats") return {RouteKind::Forwarded, "", ""};
  Route r{RouteKind::ModelMetadata, decode(s[2]), ""};
  std::size_t next = 3;
  if (n >= 5 && s[3] == "versions") {
    r.version = decode(s[4]);
    next = 5;
  }
  if (next == n) return r;
  if (next + 1 != n) return {};
  const auto tail = s[next];
  if (tail == "ready") {
    r.kind = RouteKind::ModelReady;
  } else if (tail == "config") {
    r.kind = RouteKind::ModelConfig;
  } else if (tail == "stats") {
    r.kind = RouteKind::Forwarded;
  } else if (tail == "infer") {
    r.kind = RouteKind::Infer;
    post = true;
  } else {
    return {};
  }
  return r;
}

}  // namespace

std::string_view target_path(std::string_view target) { return target.substr(0, target.find('?')); }

Route parse_route(std::string_view method, std::string_view target) {
  bool post = false;
  Route r = match(segments(target_path(target)), post);
  // HEAD where GET is served, as aiohttp's GET routes (the answer without its body).
  const bool allowed = post ? method == "POST" : (method == "GET" || method == "HEAD");
  if (r.kind != RouteKind::None && !allowed) r.kind = RouteKind::WrongMethod;
  return r;
}

}  // namespace servelab::frontend
