#include "strata/store/http/http_server.h"

#include <thread>
#include <utility>

#include <sys/socket.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

#include "httplib.h"
#include "strata/store/http/metrics_format.h"
#include "strata/store/http/tiers_json.h"

namespace strata::store::http {
namespace {

constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";
// How long Stop waits for the workers to finish their connections.
constexpr absl::Duration kStopWait = absl::Seconds(5);

// SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would let a second
// node bind the same port and take half of its connections.
void ReuseAddressOnly(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

// (seconds, microseconds) of a duration for httplib's timeouts.
std::pair<time_t, time_t> SecondsAndMicros(absl::Duration d) {
  const int64_t micros = absl::ToInt64Microseconds(d);
  return {static_cast<time_t>(micros / 1000000), static_cast<time_t>(micros % 1000000)};
}

}  // namespace

struct HttpServer::Impl {
  httplib::Server server;
  HttpHandlers handlers;
  std::thread listener;
  // The listener sets it when listen_after_bind returned (its workers joined).
  absl::Notification listener_done;
  // Calls into `handlers` in progress, and whether Stop forbade new ones: after Stop a
  // worker still writing to a slow client never touches the handlers (or what they borrow).
  absl::Mutex mu;
  int calls ABSL_GUARDED_BY(mu) = 0;
  bool closed ABSL_GUARDED_BY(mu) = false;

  // Runs `f` unless closed; false when closed.
  template <typename F>
  bool Call(F&& f) {
    {
      absl::MutexLock lock(&mu);
      if (closed) return false;
      ++calls;
    }
    f();
    absl::MutexLock lock(&mu);
    --calls;
    return true;
  }
};

namespace {

void Closed(httplib::Response& res) {
  res.status = 503;
  res.set_content("shutting down\n", "text/plain; charset=utf-8");
}

}  // namespace

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
  if (options.worker_threads <= 0 || !handlers.snapshot || !handlers.readiness) {
    return absl::InvalidArgumentError(
        "HTTP server: worker_threads must be > 0 and both handlers set");
  }
  auto impl = std::make_unique<Impl>();
  impl->handlers = std::move(handlers);
  httplib::Server& server = impl->server;
  const size_t workers = static_cast<size_t>(options.worker_threads);
  server.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  server.set_socket_options(ReuseAddressOnly);
  const auto [io_s, io_us] = SecondsAndMicros(options.io_timeout);
  server.set_read_timeout(io_s, io_us);
  server.set_write_timeout(io_s, io_us);
  server.set_keep_alive_timeout(
      std::max<time_t>(1, static_cast<time_t>(absl::ToInt64Seconds(options.idle_timeout))));

  // Only GET and HEAD: anything else is refused before httplib reads a request body (it
  // would otherwise read any body, of any size, into memory first), and the connection
  // closes. Bodies are capped too, as a second guard.
  server.set_payload_max_length(4096);
  server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD")
      return httplib::Server::HandlerResponse::Unhandled;
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_header("Connection", "close");
    res.set_content("only GET and HEAD\n", "text/plain; charset=utf-8");
    return httplib::Server::HandlerResponse::Handled;
  });
  Impl* i = impl.get();  // lives as long as the server (or is leaked with it: see Stop)
  server.Get("/metrics", [i](const httplib::Request&, httplib::Response& res) {
    if (!i->Call(
            [&] { res.set_content(FormatMetrics(i->handlers.snapshot()), kMetricsContentType); })) {
      Closed(res);
    }
  });
  server.Get("/v1/tiers", [i](const httplib::Request&, httplib::Response& res) {
    if (!i->Call([&] {
          res.set_content(FormatTiersJson(i->handlers.snapshot()), "application/json");
        })) {
      Closed(res);
    }
  });
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain; charset=utf-8");
  });
  server.Get("/readyz", [i](const httplib::Request&, httplib::Response& res) {
    absl::Status ready;
    if (!i->Call([&] { ready = i->handlers.readiness(); }))
      ready = absl::UnavailableError("shutting down");
    if (ready.ok()) {
      res.set_content("ready\n", "text/plain; charset=utf-8");
    } else {
      res.status = 503;
      res.set_content(absl::StrCat("not ready: ", ready.message(), "\n"),
                      "text/plain; charset=utf-8");
    }
  });

  int bound = port;
  if (port == 0) {
    bound = server.bind_to_any_port(host);
  } else if (!server.bind_to_port(host, port)) {
    bound = -1;
  }
  if (bound <= 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on http_listen = ", options.listen_address,
                     " (address in use, or not an address of this host?)"));
  }
  std::unique_ptr<HttpServer> out(new HttpServer(std::move(impl)));
  out->port_ = bound;
  const bool bracket = host.find(':') != std::string::npos;
  out->address_ = absl::StrCat(bracket ? "[" : "", host, bracket ? "]" : "", ":", bound);
  {
    absl::MutexLock lock(&out->stop_mu_);
    Impl* started = out->impl_.get();
    started->listener = std::thread([started] {
      started->server.listen_after_bind();
      started->listener_done.Notify();
    });
    // httplib's stop() does nothing until the accept loop runs: wait for it, so that a Stop
    // right after Start cannot be lost.
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!started->server.is_running() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    if (!started->server.is_running()) {
      started->server.stop();
      started->listener.join();
      return absl::UnavailableError(
          absl::StrCat("HTTP server on ", out->address_, " did not start accepting in 10 s"));
    }
  }
  LOG(INFO) << "HTTP endpoint listening on " << out->address_ << " (/metrics, /v1/tiers, "
            << "/healthz, /readyz; " << workers << " workers)";
  return out;
}

void HttpServer::Stop() {
  absl::MutexLock lock(&stop_mu_);
  if (impl_ == nullptr) return;
  // stop() closes the listening socket; the accept loop ends, shuts its worker pool down
  // (joining the workers, which finish the requests in hand) and returns.
  impl_->server.stop();
  {
    // No handler call runs after this (they never wait on the network).
    absl::MutexLock lock(&impl_->mu);
    impl_->closed = true;
    impl_->mu.Await(absl::Condition(
        +[](int* calls) { return *calls == 0; }, &impl_->calls));
  }
  // A worker stuck on a client that trickles its request (httplib's timeouts are per read)
  // keeps the accept loop's pool from joining; after a bounded wait the server is left to
  // finish on its own (leaked: it no longer calls the handlers) so shutdown cannot hang.
  if (impl_->listener_done.WaitForNotificationWithTimeout(kStopWait)) {
    impl_->listener.join();
    impl_.reset();
    LOG(INFO) << "HTTP endpoint on " << address_ << " stopped";
  } else {
    impl_->listener.detach();
    LOG(WARNING) << "HTTP endpoint on " << address_ << ": a connection did not finish within "
                 << absl::FormatDuration(kStopWait) << " of stop; left to close on its own";
    (void)impl_.release();
  }
}

}  // namespace strata::store::http
