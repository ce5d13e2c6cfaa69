// Where a worker process listens: "unix:/path/to.sock" or "tcp:HOST:PORT" ("tcp:[::1]:PORT" for IPv6).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace servelab::serve::remote {

struct Address {
  enum class Kind { Unix, Tcp };
  Kind kind = Kind::Unix;
  std::string path;  // Unix
  std::string host;  // Tcp: an IP address or a host name (IPv6 without brackets)
  std::uint16_t port = 0;

  // Back in the "unix:..." / "tcp:..." form.
  std::string text() const;
  // A Unix socket, localhost, 127.0.0.0/8 or ::1: reachable from this machine only.
  bool loopback() const;
};

// ValueError naming `field` and the text when it is not an address; `listen` allows port 0 (any
// free port) and requires an IP address (or localhost) rather than a host name.
Address parse_address(std::string_view text, std::string_view field, bool listen = false);

}  // namespace servelab::serve::remote
