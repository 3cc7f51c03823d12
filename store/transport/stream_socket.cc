#include "store/transport/stream_socket.h"

#include <cerrno>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

#include "strata/base/errno_status.h"

namespace strata::store::transport {
namespace {

std::string AddressOf(int fd, bool remote) {
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  auto* addr = reinterpret_cast<sockaddr*>(&storage);
  const int rc = remote ? getpeername(fd, addr, &length) : getsockname(fd, addr, &length);
  if (rc != 0 || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)) return "?";
  return SocketAddress::FromSockaddr(addr, length).ToString();
}

}  // namespace

absl::StatusOr<ListeningSocket> ListenStream(const SocketAddress& address) {
  const int fd = socket(address.get()->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return base::ErrnoToStatus(errno, "socket");
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, address.get(), address.length()) != 0) {
    const int error = errno;
    close(fd);
    return base::ErrnoToStatus(error, absl::StrCat("bind to ", address.ToString()));
  }
  if (listen(fd, SOMAXCONN) != 0) {
    const int error = errno;
    close(fd);
    return base::ErrnoToStatus(error, absl::StrCat("listen on ", address.ToString()));
  }
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length);
  return ListeningSocket{
      fd, SocketAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&storage), length)};
}

absl::StatusOr<int> StartConnectStream(const SocketAddress& address) {
  const int fd = socket(address.get()->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return base::ErrnoToStatus(errno, "socket");
  if (connect(fd, address.get(), address.length()) != 0 && errno != EINPROGRESS) {
    const int error = errno;
    close(fd);
    return base::ErrnoToStatus(error, absl::StrCat("connect to ", address.ToString()));
  }
  return fd;
}

absl::Status ConnectOutcome(int fd) {
  int error = 0;
  socklen_t length = sizeof(error);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
  if (error == 0) return absl::OkStatus();
  return base::ErrnoToStatus(error, "connect");
}

std::string DescribeSocket(int fd) {
  return absl::StrCat(AddressOf(fd, false), " -> ", AddressOf(fd, true));
}

std::string RemoteAddress(int fd) { return AddressOf(fd, true); }

namespace {

absl::Status EpollControl(int epoll_fd, int op, int fd, uint32_t events, uint64_t tag) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = tag;
  if (epoll_ctl(epoll_fd, op, fd, &event) != 0) {
    return base::ErrnoToStatus(errno, op == EPOLL_CTL_ADD ? "epoll_ctl(ADD)" : "epoll_ctl(MOD)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status EpollAdd(int epoll_fd, int fd, uint32_t events, uint64_t tag) {
  return EpollControl(epoll_fd, EPOLL_CTL_ADD, fd, events, tag);
}

absl::Status EpollModify(int epoll_fd, int fd, uint32_t events, uint64_t tag) {
  return EpollControl(epoll_fd, EPOLL_CTL_MOD, fd, events, tag);
}

void EpollRemove(int epoll_fd, int fd) { epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr); }

}  // namespace strata::store::transport
