// Boost.Asio plumbing shared by the remote executor and the worker server (private to this folder,
// so that no public header pulls in Asio).
#pragma once

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <string>

#include "servelab/serve/remote/address.hpp"

namespace servelab::serve::remote {

namespace asio = boost::asio;
// One socket type for Unix sockets and TCP.
using Protocol = asio::generic::stream_protocol;
using Socket = Protocol::socket;

// The endpoint to connect to (a TCP host name is resolved) or to bind ("localhost" is 127.0.0.1).
// RuntimeError naming the address when a host name does not resolve.
Protocol::endpoint endpoint_of(const Address& address, asio::io_context& io);

// The TCP port of a bound endpoint (0 for a Unix one).
unsigned short port_of(const Protocol::endpoint& endpoint);

// Disables Nagle's algorithm on a TCP socket: every message is one small write answered by the
// peer, so delaying it only adds latency.
void set_no_delay(Socket& socket, const Address& address);

}  // namespace servelab::serve::remote
