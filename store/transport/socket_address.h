// SocketAddress: an IPv4 or IPv6 address and port, parsed from "host:port".
//
// Private to store/transport (no UCX types; used to build UCX listeners and endpoints).
// Value type; thread-compatible.
//
// Accepted forms: "127.0.0.1:7401", "[::1]:7401", "localhost:7401" (names resolve with
// getaddrinfo, first result, IPv4 preferred by the resolver's order). Port 0 is allowed
// (a listener then picks an ephemeral port).
//
// Errors: Parse returns INVALID_ARGUMENT for a missing or non-numeric port, a port above
// 65535, an empty host or a malformed bracket; UNAVAILABLE when a name does not resolve.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <sys/socket.h>

#include "absl/status/statusor.h"

namespace strata::store::transport {

class SocketAddress {
 public:
  static absl::StatusOr<SocketAddress> Parse(std::string_view host_port);
  // From a sockaddr (e.g. one UCX reports); REQUIRES: AF_INET or AF_INET6.
  static SocketAddress FromSockaddr(const sockaddr* addr, socklen_t length);

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage_); }
  socklen_t length() const { return length_; }
  uint16_t port() const;
  // "127.0.0.1:7401" or "[::1]:7401".
  std::string ToString() const;

 private:
  SocketAddress() = default;
  sockaddr_storage storage_{};
  socklen_t length_ = 0;
};

}  // namespace strata::store::transport
