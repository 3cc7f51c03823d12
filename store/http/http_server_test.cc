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
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/store/http/http_get.h"
#include "strata/testing/json.h"

namespace strata::store::http {
namespace {

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
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  // Announces 1 GiB and sends none of it: a server that read the body would wait.
  const std::string request =
      "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\n";
  ASSERT_EQ(send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  timeval tv{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string reply;
  char buf[1024];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) reply.append(buf, n);
  close(fd);
  EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 405")) << reply;
  EXPECT_TRUE(absl::StrContains(reply, "Allow: GET, HEAD")) << reply;
  EXPECT_EQ(snapshots_.load(), 0);
  // And the server still serves.
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
