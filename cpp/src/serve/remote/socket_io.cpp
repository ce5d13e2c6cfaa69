#include "socket_io.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "servelab/core/errors.hpp"

namespace servelab::serve::remote {

Protocol::endpoint endpoint_of(const Address& address, asio::io_context& io) {
  if (address.kind == Address::Kind::Unix)
    return Protocol::endpoint(asio::local::stream_protocol::endpoint(address.path));
  const std::string host = address.host == "localhost" ? "127.0.0.1" : address.host;
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(host, ec);
  if (!ec) return Protocol::endpoint(asio::ip::tcp::endpoint(ip, address.port));
  asio::ip::tcp::resolver resolver(io);
  const auto found = resolver.resolve(host, std::to_string(address.port), ec);
  if (ec || found.empty()) {
    throw RuntimeError(str("address '", address.text(), "': cannot resolve host '", host, "': ", ec.message()));
  }
  return Protocol::endpoint(found.begin()->endpoint());
}

unsigned short port_of(const Protocol::endpoint& endpoint) {
  const auto* raw = endpoint.data();
  if (raw->sa_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(raw)->sin_port);
  if (raw->sa_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(raw)->sin6_port);
  return 0;
}

void set_no_delay(Socket& socket, const Address& address) {
  if (address.kind != Address::Kind::Tcp) return;
  const int on = 1;
  ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

}  // namespace servelab::serve::remote
