// libFuzzer: the node's HTTP request handling — each input is the byte stream one client
// sends to a real HttpServer (libmicrohttpd, our router and handlers) on 127.0.0.1, as any
// process on the host could: request lines, headers, bodies, pipelined requests, garbage.
// The connection is then half-closed and the answer read to its end. Whatever the bytes:
// the answer is empty or starts with an HTTP status line, arrives (or the connection
// closes) within kAnswerDeadline, and a fresh GET /healthz on another connection then
// gets 200 "ok" — the server keeps serving. ASan/UBSan watch the handlers and the
// formatting of the node's figures (a known snapshot, test_snapshot.h).
//
// Only our code is instrumented (Debian's libmicrohttpd is not), so coverage guides the
// fuzzer through the router and handlers; the parser itself is tried as a black box.
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "store/http/test_snapshot.h"
#include "strata/store/http/http_server.h"

namespace {

namespace http = strata::store::http;

// The server closes a connection idle for 1 s; an answer or a close must come well within.
constexpr absl::Duration kAnswerDeadline = absl::Seconds(5);

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "HTTP fuzz: %s\n", what.c_str());
  std::abort();
}

// Started once, never stopped (reachable from this pointer, so not a leak).
http::HttpServer* Server() {
  static http::HttpServer* const server = [] {
    http::HttpServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.worker_threads = 2;
    options.timeout = absl::Seconds(1);
    http::HttpHandlers handlers;
    handlers.snapshot = [] { return http::testing::KnownSnapshot(); };
    // /readyz answers both ways.
    handlers.readiness = [] {
      static std::atomic<uint64_t> calls{0};
      return calls.fetch_add(1) % 2 == 0 ? absl::OkStatus()
                                         : absl::UnavailableError("draining \"fuzz\"\n");
    };
    auto started = http::HttpServer::Start(options, handlers);
    if (!started.ok()) Fail(std::string(started.status().message()));
    return started->release();
  }();
  return server;
}

// A connected socket to the server; aborts when it cannot connect (the server must accept).
int Connect() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Fail(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(Server()->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Tens of thousands of connections a run: an ephemeral port may be briefly short
  // (EADDRNOTAVAIL), never a refusal. libFuzzer's SIGALRM (its -timeout) may interrupt the
  // connect, which then completes in the background.
  for (int attempt = 0; connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0;
       ++attempt) {
    if (errno == EINTR || errno == EALREADY || errno == EINPROGRESS) {
      pollfd p{.fd = fd, .events = POLLOUT};
      while (poll(&p, 1, 5000) < 0 && errno == EINTR) {
      }
      int error = 0;
      socklen_t len = sizeof(error);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
      if (error == 0) break;
      errno = error;
    }
    if (errno == EISCONN) break;
    if (errno != EADDRNOTAVAIL || attempt == 100) {
      Fail(std::string("connect: ") + std::strerror(errno));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return fd;
}

// Sends `bytes` (as much as the server takes: it may close early, e.g. after a 405 or a
// 431), half-closes, and reads until the server closes. Aborts past kAnswerDeadline.
std::string Exchange(std::string_view bytes) {
  const int fd = Connect();
  const absl::Time deadline = absl::Now() + kAnswerDeadline;
  size_t sent = 0;
  std::string answer;
  bool write_open = true;
  char buf[16 << 10];
  while (true) {
    if (write_open && sent == bytes.size()) {
      // libmicrohttpd (Debian's 0.9.75, epoll) misses an end of stream that arrives in the
      // same wakeup as the bytes before it and holds the connection until its timeout (1 s
      // here): a pause lets it read the bytes first, so most inputs take microseconds.
      absl::SleepFor(absl::Microseconds(300));
      shutdown(fd, SHUT_WR);
      write_open = false;
    }
    pollfd p{.fd = fd, .events = static_cast<short>(POLLIN | (write_open ? POLLOUT : 0))};
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      Fail("no answer and no close within " + absl::FormatDuration(kAnswerDeadline) + " after " +
           std::to_string(sent) + " of " + std::to_string(bytes.size()) + " bytes");
    }
    if (poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1) < 0) {
      if (errno == EINTR) continue;
      Fail(std::string("poll: ") + std::strerror(errno));
    }
    if ((p.revents & POLLOUT) != 0 && write_open) {
      const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        write_open = false;  // the server closed (or reset) its side: read what it said
      }
    }
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n > 0) {
        // A stream of pipelined requests can be answered at length; the size is bounded by
        // the input's (each request at least a few bytes, each answer a few KiB).
        answer.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EINTR)) break;  // closed or reset
    }
  }
  close(fd);
  return answer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string answer = Exchange(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!answer.empty() && !absl::StartsWith(answer, "HTTP/1.")) {
    Fail("an answer that is not HTTP: " + answer.substr(0, 64));
  }
  const std::string health =
      Exchange("GET /healthz HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n");
  if (!absl::StartsWith(health, "HTTP/1.1 200") || !absl::EndsWith(health, "\r\n\r\nok\n")) {
    Fail("the server stopped serving: /healthz answered \"" + health.substr(0, 128) + "\"");
  }
  return 0;
}
