#include "strata/store/transport/same_host.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

#include "strata/base/errno_status.h"
#include "strata/base/status_macros.h"

namespace strata::store::transport::same_host {
namespace {

using base::ErrnoToStatus;

constexpr uint32_t kLastStatusCode = 16;  // absl::StatusCode::kUnauthenticated

void PutLe(uint8_t* p, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t GetLe(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

absl::StatusOr<sockaddr_un> AddressOf(const std::string& name, socklen_t* length) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (name.empty() || name == "@") {
    return absl::InvalidArgumentError("same-host socket: empty name");
  }
  if (name.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("same-host socket \"", name, "\": longer than ",
                                                   sizeof(address.sun_path) - 1, " bytes"));
  }
  std::memcpy(address.sun_path, name.data(), name.size());
  const bool abstract = name[0] == '@';
  if (abstract) address.sun_path[0] = '\0';
  *length =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + (abstract ? 0 : 1));
  return address;
}

// Milliseconds for poll() until `deadline` (-1: forever).
int PollTimeout(absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) return -1;
  const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
  return static_cast<int>(std::clamp<int64_t>(ms + 1, 0, int64_t{1} << 30));
}

// Waits for `events` on `fd` until `deadline`.
absl::Status WaitFor(int fd, short events, absl::Time deadline) {
  for (;;) {
    pollfd p{.fd = fd, .events = events, .revents = 0};
    const int n = ::poll(&p, 1, PollTimeout(deadline));
    if (n > 0) return absl::OkStatus();
    if (n < 0 && errno != EINTR) return ErrnoToStatus(errno, "poll");
    if (n == 0 && absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          "same-host socket: the peer did not keep up by the "
          "deadline");
    }
  }
}

absl::Status Closed() {
  return absl::UnavailableError("same-host socket: the peer closed the connection");
}

// Receives exactly `n` bytes into `p`; descriptors that come along go to *fds (at most
// kMaxFds kept, the rest closed).
absl::Status ReceiveExactly(int fd, uint8_t* p, size_t n, absl::Time deadline,
                            std::vector<Fd>* fds) {
  size_t got = 0;
  while (got < n) {
    STRATA_RETURN_IF_ERROR(WaitFor(fd, POLLIN, deadline));
    iovec io{.iov_base = p + got, .iov_len = n - got};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    const ssize_t r = ::recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (r < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      if (errno == ECONNRESET) return Closed();
      return ErrnoToStatus(errno, "recvmsg");
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int received;
        std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        Fd owned(received);
        if (fds->size() < kMaxFds) fds->push_back(std::move(owned));
      }
    }
    if (r == 0) return Closed();
    got += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<Fd> Listen(const std::string& name, int backlog) {
  socklen_t length = 0;
  STRATA_ASSIGN_OR_RETURN(const sockaddr_un address, AddressOf(name, &length));
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return ErrnoToStatus(errno, "socket(AF_UNIX)");
  if (name[0] != '@') {
    // A socket file left by a node that died (nobody accepts on it any more) is removed; one
    // a live node listens on is not taken over (bind then fails EADDRINUSE).
    struct stat st;
    if (::lstat(name.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
      Fd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (probe.valid() &&
          ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0 &&
          errno == ECONNREFUSED) {
        ::unlink(name.c_str());
      }
    }
  }
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    return ErrnoToStatus(errno == EADDRINUSE ? EBUSY : errno,
                         absl::StrCat("bind(same-host socket \"", name, "\")"));
  }
  if (::listen(fd.get(), backlog) != 0) return ErrnoToStatus(errno, "listen");
  return fd;
}

absl::StatusOr<Fd> Connect(const std::string& name, absl::Time deadline) {
  socklen_t length = 0;
  STRATA_ASSIGN_OR_RETURN(const sockaddr_un address, AddressOf(name, &length));
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return ErrnoToStatus(errno, "socket(AF_UNIX)");
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) == 0) return fd;
  if (errno == EAGAIN) {
    // A UNIX socket's listen backlog is full: the node is not accepting fast enough.
    return absl::UnavailableError(
        absl::StrCat("connect(same-host socket \"", name, "\"): the node's backlog is full"));
  }
  if (errno != EINPROGRESS) {
    return absl::UnavailableError(
        absl::StrCat("connect(same-host socket \"", name, "\"): ", std::strerror(errno)));
  }
  STRATA_RETURN_IF_ERROR(WaitFor(fd.get(), POLLOUT, deadline));
  int error = 0;
  socklen_t size = sizeof(error);
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size) != 0) error = errno;
  if (error != 0) {
    return absl::UnavailableError(
        absl::StrCat("connect(same-host socket \"", name, "\"): ", std::strerror(error)));
  }
  return fd;
}

absl::StatusOr<Fd> Accept(int listener) {
  Fd fd(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!fd.valid()) return ErrnoToStatus(errno, "accept4(same-host socket)");
  return fd;
}

absl::StatusOr<PeerIds> PeerOf(int fd) {
  ucred credentials{};
  socklen_t size = sizeof(credentials);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) {
    return ErrnoToStatus(errno, "getsockopt(SO_PEERCRED)");
  }
  return PeerIds{credentials.pid, credentials.uid, credentials.gid};
}

absl::Status Send(int fd, Type type, absl::Span<const absl::Span<const uint8_t>> parts,
                  absl::Span<const int> fds, absl::Time deadline) {
  uint64_t length = 0;
  for (const auto& part : parts) length += part.size();
  uint8_t header[kFrameBytes] = {};
  PutLe(header, kMagic, 4);
  PutLe(header + 4, static_cast<uint16_t>(type), 2);
  PutLe(header + 8, length, 8);
  std::vector<iovec> io;
  io.reserve(parts.size() + 1);
  io.push_back(iovec{.iov_base = header, .iov_len = kFrameBytes});
  for (const auto& part : parts) {
    if (!part.empty()) io.push_back(iovec{const_cast<uint8_t*>(part.data()), part.size()});
  }
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  bool fds_sent = fds.empty();
  size_t first = 0;  // the iovec not yet fully sent
  while (first < io.size()) {
    STRATA_RETURN_IF_ERROR(WaitFor(fd, POLLOUT, deadline));
    msghdr message{};
    message.msg_iov = io.data() + first;
    message.msg_iovlen = std::min<size_t>(io.size() - first, 64);
    if (!fds_sent) {
      if (fds.size() > kMaxFds) return absl::InvalidArgumentError("too many descriptors");
      message.msg_control = control;
      message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* c = CMSG_FIRSTHDR(&message);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t sent = ::sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) return Closed();
      return ErrnoToStatus(errno, "sendmsg(same-host socket)");
    }
    fds_sent = true;
    size_t left = static_cast<size_t>(sent);
    while (left > 0 && first < io.size()) {
      if (left >= io[first].iov_len) {
        left -= io[first].iov_len;
        ++first;
      } else {
        io[first].iov_base = static_cast<uint8_t*>(io[first].iov_base) + left;
        io[first].iov_len -= left;
        left = 0;
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Frame> Receive(int fd, uint64_t max_payload, absl::Time deadline) {
  Frame frame;
  uint8_t header[kFrameBytes];
  STRATA_RETURN_IF_ERROR(ReceiveExactly(fd, header, kFrameBytes, deadline, &frame.fds));
  const uint64_t magic = GetLe(header, 4);
  const uint64_t type = GetLe(header + 4, 2);
  const uint64_t zero = GetLe(header + 6, 2);
  const uint64_t length = GetLe(header + 8, 8);
  if (magic != kMagic || zero != 0) {
    return absl::InvalidArgumentError("same-host frame: bad magic or a reserved field set");
  }
  if (type < static_cast<uint16_t>(Type::kHello) ||
      type > static_cast<uint16_t>(Type::kLeaseCheckReply)) {
    return absl::InvalidArgumentError(absl::StrCat("same-host frame: unknown type ", type));
  }
  if (length > max_payload) {
    return absl::InvalidArgumentError(absl::StrCat("same-host frame: a payload of ", length,
                                                   " bytes, more than the ", max_payload,
                                                   " allowed"));
  }
  frame.type = static_cast<Type>(type);
  frame.payload.resize(length);
  STRATA_RETURN_IF_ERROR(ReceiveExactly(fd, frame.payload.data(), length, deadline, &frame.fds));
  return frame;
}

bool WaitReadable(int fd, int wake) {
  for (;;) {
    pollfd p[2] = {{.fd = fd, .events = POLLIN, .revents = 0},
                   {.fd = wake, .events = POLLIN, .revents = 0}};
    const int n = ::poll(p, wake >= 0 ? 2 : 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (wake >= 0 && p[1].revents != 0) return false;
    if (p[0].revents != 0) return true;
  }
}

Writer& Writer::U32(uint32_t v) {
  const size_t at = bytes_.size();
  bytes_.resize(at + 4);
  PutLe(bytes_.data() + at, v, 4);
  return *this;
}

Writer& Writer::U64(uint64_t v) {
  const size_t at = bytes_.size();
  bytes_.resize(at + 8);
  PutLe(bytes_.data() + at, v, 8);
  return *this;
}

Writer& Writer::Bytes(absl::Span<const uint8_t> b) {
  bytes_.insert(bytes_.end(), b.begin(), b.end());
  return *this;
}

Writer& Writer::Status(const absl::Status& status) {
  const absl::string_view message =
      status.message().substr(0, std::min(status.message().size(), kMaxStatusMessage));
  U32(static_cast<uint32_t>(status.code()));
  U32(static_cast<uint32_t>(message.size()));
  return Bytes(
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(message.data()), message.size()));
}

uint32_t Reader::U32() {
  const absl::Span<const uint8_t> b = Bytes(4);
  return ok_ ? static_cast<uint32_t>(GetLe(b.data(), 4)) : 0;
}

uint64_t Reader::U64() {
  const absl::Span<const uint8_t> b = Bytes(8);
  return ok_ ? GetLe(b.data(), 8) : 0;
}

absl::Span<const uint8_t> Reader::Bytes(size_t n) {
  if (!ok_ || n > bytes_.size() - at_) {
    ok_ = false;
    return {};
  }
  const absl::Span<const uint8_t> b = bytes_.subspan(at_, n);
  at_ += n;
  return b;
}

absl::Status Reader::Status() {
  const uint32_t code = U32();
  const uint32_t n = U32();
  if (!ok_ || code > kLastStatusCode || n > kMaxStatusMessage) {
    ok_ = false;
    return absl::InternalError("same-host message: a malformed status");
  }
  const absl::Span<const uint8_t> message = Bytes(n);
  if (!ok_) return absl::InternalError("same-host message: a malformed status");
  return absl::Status(static_cast<absl::StatusCode>(code),
                      absl::string_view(reinterpret_cast<const char*>(message.data()), n));
}

}  // namespace strata::store::transport::same_host
