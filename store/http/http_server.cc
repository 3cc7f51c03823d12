// HttpServer (http_server.h) on libmicrohttpd: an epoll loop per worker thread, so a client
// that trickles its request or never reads its response holds a connection slot and
// nothing else.
#include "strata/store/http/http_server.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "glog/logging.h"

#include "strata/store/http/metrics_format.h"
#include "strata/store/http/tiers_json.h"

namespace strata::store::http {
namespace {

constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";
constexpr char kTextContentType[] = "text/plain; charset=utf-8";

// Queues `body` with `status` on `connection` (copied: the response owns its bytes).
MHD_Result Reply(MHD_Connection* connection, unsigned status, const std::string& body,
                 const char* content_type, bool close = false) {
  MHD_Response* response = MHD_create_response_from_buffer(
      body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;  // out of memory: MHD closes the connection
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED) {
    MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  }
  if (close) MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
  const MHD_Result queued = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  return queued;
}

// libmicrohttpd's diagnostics (a refused connection, a malformed request) are a client's
// doing, not the node's: verbose only, so a hostile client cannot flood the log.
void LogFromMhd(void*, const char* format, va_list args) {
  if (!VLOG_IS_ON(1)) return;
  char line[512];
  std::vsnprintf(line, sizeof(line), format, args);
  VLOG(1) << "HTTP endpoint: " << line;
}

// A listening TCP socket on host:port (non-blocking, SO_REUSEADDR only: SO_REUSEPORT would
// let a second node bind the same port and take half of its connections); -1 and `error`
// when it cannot be made.
int Listen(const std::string& host, int port, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    *error = gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      *error = std::strerror(errno);
      continue;
    }
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (a->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof(yes));
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
      *error = std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  return fd;
}

// The port `fd` is bound to (0 when unknown).
int BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
}

}  // namespace

struct HttpServer::Impl {
  HttpHandlers handlers;
  MHD_Daemon* daemon = nullptr;
  int listen_fd = -1;  // the server's own; libmicrohttpd has a duplicate

  // libmicrohttpd's access handler: called once the request's headers are in (and again
  // for each piece of a body, which is never wanted: the answer is queued on the first call,
  // and libmicrohttpd then closes a connection whose body was not read).
  static MHD_Result Answer(void* cls, MHD_Connection* connection, const char* url,
                           const char* method, const char* /*version*/, const char* /*upload_data*/,
                           size_t* upload_data_size, void** request_state) {
    if (*request_state != nullptr) {  // a body arrived after the answer: drop it
      *upload_data_size = 0;
      return MHD_YES;
    }
    *request_state = connection;  // answered
    Impl* impl = static_cast<Impl*>(cls);
    const std::string_view m(method);
    if (m != MHD_HTTP_METHOD_GET && m != MHD_HTTP_METHOD_HEAD) {
      return Reply(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n", kTextContentType,
                   /*close=*/true);
    }
    const std::string_view path(url);
    if (path == "/metrics") {
      return Reply(connection, MHD_HTTP_OK, FormatMetrics(impl->handlers.snapshot()),
                   kMetricsContentType);
    }
    if (path == "/v1/tiers") {
      return Reply(connection, MHD_HTTP_OK, FormatTiersJson(impl->handlers.snapshot()),
                   "application/json");
    }
    if (path == "/v1/cluster") {
      absl::StatusOr<std::string> body = impl->handlers.cluster
                                             ? impl->handlers.cluster()
                                             : absl::NotFoundError("this node is in no cluster");
      if (body.ok()) return Reply(connection, MHD_HTTP_OK, *body, "application/json");
      return Reply(
          connection,
          absl::IsNotFound(body.status()) ? MHD_HTTP_NOT_FOUND : MHD_HTTP_SERVICE_UNAVAILABLE,
          absl::StrCat(body.status().message(), "\n"), kTextContentType);
    }
    if (path == "/healthz") return Reply(connection, MHD_HTTP_OK, "ok\n", kTextContentType);
    if (path == "/readyz") {
      const absl::Status ready = impl->handlers.readiness();
      if (ready.ok()) return Reply(connection, MHD_HTTP_OK, "ready\n", kTextContentType);
      return Reply(connection, MHD_HTTP_SERVICE_UNAVAILABLE,
                   absl::StrCat("not ready: ", ready.message(), "\n"), kTextContentType);
    }
    return Reply(connection, MHD_HTTP_NOT_FOUND, "not found\n", kTextContentType);
  }
};

absl::Status SplitHostPort(const std::string& address, std::string* host, int* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("\"", address, "\" is not host:port (no port)"));
  }
  std::string h = address.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  int p = -1;
  if (h.empty() || !absl::SimpleAtoi(address.substr(colon + 1), &p) || p < 0 || p > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", address, "\" is not host:port with a port in 0..65535"));
  }
  *host = std::move(h);
  *port = p;
  return absl::OkStatus();
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(HttpServerOptions options,
                                                              HttpHandlers handlers) {
  std::string host;
  int port = 0;
  if (absl::Status s = SplitHostPort(options.listen_address, &host, &port); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("http_listen: ", s.message()));
  }
  if (options.worker_threads <= 0 || options.max_connections <= 0 ||
      options.max_connections_per_client <= 0 || options.timeout < absl::Seconds(1) ||
      !handlers.snapshot || !handlers.readiness) {
    return absl::InvalidArgumentError(
        "HTTP server: worker_threads, max_connections and max_connections_per_client must be "
        "> 0, timeout at least 1 s, and both handlers set");
  }
  std::string error;
  const int fd = Listen(host, port, &error);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on http_listen = ", options.listen_address, ": ", error));
  }
  auto impl = std::make_unique<Impl>();
  impl->handlers = std::move(handlers);
  impl->listen_fd = fd;
  // libmicrohttpd gets a duplicate: whether it closes a socket it was given when it fails to
  // start is not documented, and the server closes its own after MHD_stop_daemon.
  const int given = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (given < 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("HTTP server: dup: ", std::strerror(errno)));
  }
  // One worker: libmicrohttpd's own polling thread (a pool of 1 means the same).
  const unsigned pool = static_cast<unsigned>(options.worker_threads);
  // clang-format off
  impl->daemon = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0,
      /*apc=*/nullptr, nullptr, &Impl::Answer, impl.get(),
      MHD_OPTION_EXTERNAL_LOGGER, &LogFromMhd, nullptr,  // first: it applies from here on
      MHD_OPTION_LISTEN_SOCKET, static_cast<MHD_socket>(given),
      MHD_OPTION_THREAD_POOL_SIZE, pool,
      MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(options.max_connections),
      MHD_OPTION_PER_IP_CONNECTION_LIMIT,
          static_cast<unsigned>(options.max_connections_per_client),
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(absl::ToInt64Seconds(options.timeout)),
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, kHttpConnectionMemory,
      MHD_OPTION_END);
  // clang-format on
  if (impl->daemon == nullptr) {  // `given` may leak: the node exits on this error
    close(fd);
    return absl::UnavailableError(absl::StrCat("HTTP server on ", options.listen_address,
                                               " did not start (libmicrohttpd refused)"));
  }
  std::unique_ptr<HttpServer> out(new HttpServer(std::move(impl)));
  out->port_ = BoundPort(fd);
  const bool bracket = host.find(':') != std::string::npos;
  out->address_ = absl::StrCat(bracket ? "[" : "", host, bracket ? "]" : "", ":", out->port_);
  LOG(INFO) << "HTTP endpoint listening on " << out->address_ << " (/metrics, /v1/tiers, "
            << "/healthz, /readyz; " << options.worker_threads << " workers, at most "
            << options.max_connections << " connections)";
  return out;
}

void HttpServer::Stop() {
  absl::MutexLock lock(&stop_mu_);
  if (impl_ == nullptr) return;
  // Closes the listening socket and every connection, and joins the workers: no handler
  // runs after it returns.
  MHD_stop_daemon(impl_->daemon);
  close(impl_->listen_fd);
  impl_.reset();
  LOG(INFO) << "HTTP endpoint on " << address_ << " stopped";
}

}  // namespace strata::store::http
