#include "strata/store/http/http_server.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/store/http/http_get.h"
#include "strata/testing/json.h"

namespace strata::store::http {
namespace {

// A TCP connection to 127.0.0.1:`port` from `source` (any 127/8 address: a distinct client
// address to the server); -1 when it cannot connect.
int Connect(int port, const char* source = "127.0.0.1") {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

// What the server sends on `fd` until it closes the connection (or 10 s pass).
std::string ReadAll(int fd) {
  std::string reply;
  char buf[1024];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) reply.append(buf, n);
  return reply;
}

// GET `path` from `source` on a fresh connection; the whole reply ("" when refused).
std::string RawGet(int port, const std::string& path, const char* source) {
  const int fd = Connect(port, source);
  if (fd < 0) return "";
  const std::string request =
      absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string reply;
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
      static_cast<ssize_t>(request.size())) {
    reply = ReadAll(fd);
  }
  close(fd);
  return reply;
}

class HttpServerTest : public ::testing::Test {
 protected:
  HttpHandlers Handlers() {
    return HttpHandlers{
        .snapshot =
            [this] {
              snapshots_.fetch_add(1);
              NodeSnapshot s;
              s.tiers.tiers.push_back(
                  report::TierStats{.tier = report::Tier::kDram, .capacity_bytes = 4096});
              s.tiers.engine.leases = 3;
              return s;
            },
        .readiness = [this]() -> absl::Status {
          if (draining_.load()) return absl::UnavailableError("draining");
          return absl::OkStatus();
        },
    };
  }

  std::atomic<int> snapshots_{0};
  std::atomic<bool> draining_{false};
};

TEST_F(HttpServerTest, ServesEveryEndpointOnAnEphemeralPort) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<HttpServer> server,
                       HttpServer::Start({.listen_address = "127.0.0.1:0"}, Handlers()));
  ASSERT_GT(server->port(), 0);
  EXPECT_EQ(server->address(), absl::StrCat("127.0.0.1:", server->port()));

  ASSERT_OK_AND_ASSIGN(HttpResponse metrics, HttpGet(server->address(), "/metrics"));
  EXPECT_EQ(metrics.status, 200);
  EXPECT_TRUE(absl::StartsWith(metrics.content_type, "text/plain; version=0.0.4"))
      << metrics.content_type;
  EXPECT_TRUE(absl::StrContains(metrics.body, "strata_tier_capacity_bytes{tier=\"dram\"} 4096\n"));
  EXPECT_TRUE(absl::StrContains(metrics.body, "strata_leases_active 3\n"));

  ASSERT_OK_AND_ASSIGN(HttpResponse tiers, HttpGet(server->address(), "/v1/tiers"));
  EXPECT_EQ(tiers.status, 200);
  EXPECT_EQ(tiers.content_type, "application/json");
  ASSERT_OK_AND_ASSIGN(nlohmann::json doc, strata::testing::ParseJson(tiers.body));
  EXPECT_EQ(doc["tiers"][0]["capacity_bytes"], 4096);
  EXPECT_EQ(snapshots_.load(), 2);

  ASSERT_OK_AND_ASSIGN(HttpResponse health, HttpGet(server->address(), "/healthz"));
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");
  ASSERT_OK_AND_ASSIGN(HttpResponse ready, HttpGet(server->address(), "/readyz"));
  EXPECT_EQ(ready.status, 200);
  draining_ = true;
  ASSERT_OK_AND_ASSIGN(ready, HttpGet(server->address(), "/readyz"));
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "not ready: draining\n");
  // Still alive while not ready.
  ASSERT_OK_AND_ASSIGN(health, HttpGet(server->address(), "/healthz"));
  EXPECT_EQ(health.status, 200);

  ASSERT_OK_AND_ASSIGN(HttpResponse missing, HttpGet(server->address(), "/nope"));
  EXPECT_EQ(missing.status, 404);

  const std::string address = server->address();
  server->Stop();
  server->Stop();  // idempotent
  EXPECT_CODE(HttpGet(address, "/healthz", absl::Seconds(2)).status(),
              absl::StatusCode::kUnavailable);
}

TEST_F(HttpServerTest, RefusesBadAddressesAndAPortInUse) {
  for (const char* bad : {"127.0.0.1", ":80", "127.0.0.1:65536", "127.0.0.1:x", ""}) {
    EXPECT_CODE(HttpServer::Start({.listen_address = bad}, Handlers()).status(),
                absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_CODE(HttpServer::Start({.listen_address = "127.0.0.1:0", .worker_threads = 0}, Handlers())
                  .status(),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(HttpServer::Start({.listen_address = "127.0.0.1:0"}, HttpHandlers{}).status(),
              absl::StatusCode::kInvalidArgument);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<HttpServer> first,
                       HttpServer::Start({.listen_address = "127.0.0.1:0"}, Handlers()));
  // No SO_REUSEPORT: a second server cannot share the port.
  EXPECT_CODE(HttpServer::Start({.listen_address = first->address()}, Handlers()).status(),
              absl::StatusCode::kUnavailable);
  EXPECT_CODE(HttpServer::Start({.listen_address = "192.0.2.1:0"}, Handlers()).status(),
              absl::StatusCode::kUnavailable);  // TEST-NET: not an address of this host
}

TEST_F(HttpServerTest, ConcurrentRequestsThenStopFromAnotherThread) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<HttpServer> server,
      HttpServer::Start({.listen_address = "127.0.0.1:0", .worker_threads = 2}, Handlers()));
  const std::string address = server->address();
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 6; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        absl::StatusOr<HttpResponse> r = HttpGet(address, "/metrics");
        if (r.ok() && r->status == 200) ok.fetch_add(1);
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok.load(), 60);
  EXPECT_EQ(snapshots_.load(), 60);
  std::thread stopper([&] { server->Stop(); });
  server->Stop();
  stopper.join();
}

TEST_F(HttpServerTest, StopRightAfterStartReturns) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<HttpServer> server,
                         HttpServer::Start({.listen_address = "127.0.0.1:0"}, Handlers()));
    server.reset();  // the destructor stops it
  }
}

// A request with a body is refused before the body is read: the node never buffers it.
TEST_F(HttpServerTest, OtherMethodsAre405BeforeTheBodyIsRead) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<HttpServer> server,
                       HttpServer::Start({.listen_address = "127.0.0.1:0"}, Handlers()));
  const int fd = Connect(server->port());
  ASSERT_GE(fd, 0);
  // Announces 1 GiB and sends none of it: a server that read the body would wait.
  const std::string request =
      "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\n";
  ASSERT_EQ(send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  const std::string reply = ReadAll(fd);
  close(fd);
  EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 405")) << reply;
  EXPECT_TRUE(absl::StrContains(reply, "Allow: GET, HEAD")) << reply;
  EXPECT_EQ(snapshots_.load(), 0);
  // And the server still serves.
  ASSERT_OK_AND_ASSIGN(HttpResponse health, HttpGet(server->address(), "/healthz"));
  EXPECT_EQ(health.status, 200);
}

// Issue 12, defect 6: clients that send half a request and stop (here 16, on 2 workers)
// hold no worker: /healthz, /metrics and HEAD answer at once; a connection on which nothing
// moves for the timeout is closed; Stop returns promptly with them connected.
TEST_F(HttpServerTest, SlowClientsHoldNoWorker) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<HttpServer> server,
      HttpServer::Start(
          {.listen_address = "127.0.0.1:0", .worker_threads = 2, .timeout = absl::Seconds(2)},
          Handlers()));
  std::vector<int> slow;
  for (int i = 0; i < 16; ++i) {
    const int fd = Connect(server->port());
    ASSERT_GE(fd, 0);
    const std::string half = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    ASSERT_EQ(send(fd, half.data(), half.size(), MSG_NOSIGNAL), static_cast<ssize_t>(half.size()));
    slow.push_back(fd);
  }
  const absl::Time asked = absl::Now();
  ASSERT_OK_AND_ASSIGN(HttpResponse health,
                       HttpGet(server->address(), "/healthz", absl::Seconds(1)));
  EXPECT_EQ(health.status, 200);
  ASSERT_OK_AND_ASSIGN(HttpResponse metrics,
                       HttpGet(server->address(), "/metrics", absl::Seconds(1)));
  EXPECT_EQ(metrics.status, 200);
  EXPECT_LT(absl::Now() - asked, absl::Seconds(1));
  // HEAD: the headers, no body.
  const int head = Connect(server->port());
  ASSERT_GE(head, 0);
  const std::string request = "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(send(head, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  const std::string head_reply = ReadAll(head);
  close(head);
  EXPECT_TRUE(absl::StartsWith(head_reply, "HTTP/1.1 200")) << head_reply;
  EXPECT_TRUE(absl::EndsWith(head_reply, "\r\n\r\n")) << head_reply;
  // The stalled connections are closed once nothing moved for 2 s (recv sees the end).
  const absl::Time stalled = absl::Now();
  EXPECT_EQ(ReadAll(slow[0]), "");
  EXPECT_LT(absl::Now() - stalled, absl::Seconds(6));
  for (int fd : slow) close(fd);
  // Stop with half-sent requests connected returns at once.
  std::vector<int> more;
  for (int i = 0; i < 8; ++i) {
    const int fd = Connect(server->port());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(send(fd, "GET /", 5, MSG_NOSIGNAL), 5);
    more.push_back(fd);
  }
  const absl::Time stopping = absl::Now();
  server->Stop();
  EXPECT_LT(absl::Now() - stopping, absl::Seconds(2));
  for (int fd : more) close(fd);
}

// Past max_connections_per_client a client's further connections are closed at once, while
// another client address is still served; closing some lets the first in again. Headers
// larger than the connection's memory are refused (431) without harm.
TEST_F(HttpServerTest, ConnectionLimitsAndOversizedHeaders) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<HttpServer> server,
                       HttpServer::Start({.listen_address = "127.0.0.1:0",
                                          .worker_threads = 1,
                                          .max_connections = 8,
                                          .max_connections_per_client = 4},
                                         Handlers()));
  std::vector<int> held;
  for (int i = 0; i < 4; ++i) {
    const int fd = Connect(server->port());
    ASSERT_GE(fd, 0);
    held.push_back(fd);
  }
  absl::SleepFor(absl::Milliseconds(200));  // the server has accepted them
  EXPECT_EQ(RawGet(server->port(), "/healthz", "127.0.0.1"), "");
  EXPECT_TRUE(absl::StartsWith(RawGet(server->port(), "/healthz", "127.0.0.2"), "HTTP/1.1 200"));
  close(held.back());
  held.pop_back();
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_TRUE(absl::StartsWith(RawGet(server->port(), "/healthz", "127.0.0.1"), "HTTP/1.1 200"));
  for (int fd : held) close(fd);

  const int fd = Connect(server->port());
  ASSERT_GE(fd, 0);
  const std::string huge = absl::StrCat("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ",
                                        std::string(kHttpConnectionMemory * 2, 'a'), "\r\n\r\n");
  send(fd, huge.data(), huge.size(), MSG_NOSIGNAL);  // the server may close before all of it
  const std::string reply = ReadAll(fd);
  close(fd);
  EXPECT_TRUE(reply.empty() || absl::StartsWith(reply, "HTTP/1.1 431")) << reply.substr(0, 200);
  ASSERT_OK_AND_ASSIGN(HttpResponse health, HttpGet(server->address(), "/healthz"));
  EXPECT_EQ(health.status, 200);
}

TEST(SplitHostPortTest, Forms) {
  std::string host;
  int port = -1;
  ASSERT_OK(SplitHostPort("127.0.0.1:7402", &host, &port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 7402);
  ASSERT_OK(SplitHostPort("[::1]:0", &host, &port));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 0);
  EXPECT_CODE(SplitHostPort("[::1]", &host, &port), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::store::http
