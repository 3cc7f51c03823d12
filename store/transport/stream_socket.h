// Socket helpers of the stream transport: listening, connecting, epoll registration.
//
// Private to store/transport. Thread-compatible free functions; every descriptor they make is
// non-blocking and close-on-exec, and the caller owns it.
//
// Errors: the errno of the failing call as base::ErrnoToStatus reports it (EADDRINUSE,
// ECONNREFUSED: UNAVAILABLE; EMFILE: RESOURCE_EXHAUSTED), named by what was attempted.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "store/transport/socket_address.h"

namespace strata::store::transport {

struct ListeningSocket {
  int fd = -1;
  SocketAddress bound;  // the real port when 0 was asked for
};

// socket + SO_REUSEADDR + bind + listen.
absl::StatusOr<ListeningSocket> ListenStream(const SocketAddress& address);
// Starts a connect; the socket becomes writable when it finished (ConnectOutcome says how).
absl::StatusOr<int> StartConnectStream(const SocketAddress& address);
// The outcome of a connect started by StartConnectStream (SO_ERROR), once writable.
absl::Status ConnectOutcome(int fd);
// "127.0.0.1:5555 -> 127.0.0.1:7401" (local -> remote), for diagnostics.
std::string DescribeSocket(int fd);
// The remote address of a connected socket, or "?".
std::string RemoteAddress(int fd);

absl::Status EpollAdd(int epoll_fd, int fd, uint32_t events, uint64_t tag);
absl::Status EpollModify(int epoll_fd, int fd, uint32_t events, uint64_t tag);
void EpollRemove(int epoll_fd, int fd);

}  // namespace strata::store::transport
