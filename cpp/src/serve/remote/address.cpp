#include "servelab/serve/remote/address.hpp"

#include <sys/un.h>

#include <boost/asio/ip/address.hpp>
#include <charconv>

#include "servelab/core/errors.hpp"

namespace servelab::serve::remote {

std::string Address::text() const {
  if (kind == Kind::Unix) return "unix:" + path;
  const bool v6 = host.find(':') != std::string::npos;
  return str("tcp:", v6 ? "[" : "", host, v6 ? "]" : "", ":", port);
}

bool Address::loopback() const {
  if (kind == Kind::Unix) return true;
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address(host, ec);
  return !ec && ip.is_loopback();
}

Address parse_address(std::string_view text, std::string_view field, bool listen) {
  const auto bad = [&](std::string_view why) {
    return ValueError(str(field, "='", text, "' ", why, " (expected unix:PATH or tcp:HOST:PORT)"));
  };
  Address a;
  if (text.starts_with("unix:")) {
    a.path = std::string(text.substr(5));
    if (a.path.empty()) throw bad("has no socket path");
    if (a.path.size() >= sizeof(sockaddr_un::sun_path)) {
      throw bad(
          str("has a socket path of ", a.path.size(), " characters; the limit is ", sizeof(sockaddr_un::sun_path) - 1));
    }
    return a;
  }
  if (!text.starts_with("tcp:")) throw bad("is not an address");
  a.kind = Address::Kind::Tcp;
  std::string_view rest = text.substr(4);
  std::string_view host, port;
  if (rest.starts_with('[')) {  // [v6]:port
    const auto close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      throw bad("has an unterminated [IPv6] host");
    }
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos) throw bad("has no port");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) throw bad("has no host");
  int value = -1;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value < (listen ? 0 : 1) || value > 65535) {
    throw bad(str("has port '", port, "'; a port is ", listen ? 0 : 1, "..65535"));
  }
  a.host = std::string(host);
  a.port = static_cast<std::uint16_t>(value);
  if (listen && a.host != "localhost") {
    boost::system::error_code bad_ip;
    boost::asio::ip::make_address(a.host, bad_ip);
    if (bad_ip) throw bad("listens on a host name; give an IP address (127.0.0.1, 0.0.0.0, ::1) or localhost");
  }
  return a;
}

}  // namespace servelab::serve::remote
