// The node's HTTP endpoint end to end: a real strata-node (its HTTP endpoint on 127.0.0.1:0,
// as NodeProcess starts it) driven through libstrata by a scripted workload — puts, matches
// whose phase the node infers (prefill, midfill, decode), a read, an eviction to TEXT —
// then /metrics is scraped and parsed by promtool (the real Prometheus parser), and every
// counter is checked against what the script did. /v1/tiers is parsed as strict JSON,
// /healthz and /readyz answer (503 once the node drains), and deploy/'s Prometheus config
// passes `promtool check config` and the Grafana dashboard names only metrics a real scrape
// has.
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/http/http_get.h"
#include "strata/testing/file.h"
#include "strata/testing/json.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::http_metrics_test {

using strata::testing::NodeProcess;

namespace {

using store::http::HttpGet;
using store::http::HttpResponse;
using strata::testing::ParseJson;
using strata::testing::ReadFileToString;

constexpr uint32_t kPageTokens = 16;

// Runs `command` through the shell: its exit code (-1 when it did not exit) and output.
std::pair<int, std::string> RunCommand(const std::string& command) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// The promtool to use, or "" (then the caller skips).
std::string Promtool() {
#ifdef STRATA_PROMTOOL
  if (access(STRATA_PROMTOOL, X_OK) == 0) return STRATA_PROMTOOL;
#endif
  return "";
}

// A scrape: each sample line's series ("name{labels}" exactly as written) -> value.
struct Scrape {
  std::string text;
  std::map<std::string, double> series;
  std::set<std::string> names;  // sample names (histograms: name_bucket, _sum, _count)

  double Value(const std::string& s) const {
    auto it = series.find(s);
    EXPECT_NE(it, series.end()) << "no series " << s;
    return it == series.end() ? -1 : it->second;
  }
};

Scrape Parse(const std::string& text) {
  Scrape scrape;
  scrape.text = text;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    const size_t space = line.rfind(' ');
    const std::string series(line.substr(0, space));
    scrape.series[series] = std::stod(std::string(line.substr(space + 1)));
    scrape.names.insert(series.substr(0, series.find('{')));
  }
  return scrape;
}

class HttpMetricsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<NodeProcess>> node = StartNodeWithDataPlane("tcp");
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = node->release();
    ASSERT_FALSE(node_->http_address().empty()) << node_->StdoutText();
    absl::StatusOr<std::unique_ptr<Client>> client =
        Client::Connect(ClientOptionsFor(node_->grpc_address(), "tcp"));
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = client->release();
    RunWorkload();
  }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
    delete node_;
    node_ = nullptr;
  }

  static WriteResult WriteFromRoot(const Namespace& ns, const std::vector<TokenId>& tokens,
                                   uint32_t pages) {
    const std::vector<std::byte> kv = ModelBytes(tokens, 0, pages);
    absl::StatusOr<WriteResult> written = client_->Write(
        ns, std::nullopt, absl::MakeConstSpan(tokens).first(pages * kPageTokens), Source(kv));
    EXPECT_OK(written);
    return written.value_or(WriteResult{});
  }

  static uint32_t MatchPages(const Namespace& ns, const std::vector<TokenId>& tokens,
                             size_t count) {
    absl::StatusOr<MatchResult> match =
        client_->Match(ns, absl::MakeConstSpan(tokens).first(count));
    EXPECT_OK(match);
    return match.ok() ? match->matched_pages : 0;
  }

  // The script. Expected counts are the constants the tests check.
  static void RunWorkload() {
    const Namespace ns = ClientTestNamespace("http-metrics");
    // A 4-page blob makes the namespace known (a Match in an unknown namespace is NOT_FOUND).
    const std::vector<TokenId> other = RandomTokens(7, 4 * kPageTokens);
    WriteFromRoot(ns, other, 4);
    // U: 12 pages; T = its first 8 pages and 5 tokens.
    const std::vector<TokenId> u = RandomTokens(8, 12 * kPageTokens);
    // 1. prefill: nothing cached: 8 whole pages queried, 8 misses.
    EXPECT_EQ(MatchPages(ns, u, 8 * kPageTokens + 5), 0u);
    // The 8 pages go in.
    b1_ = WriteFromRoot(ns, u, 8).key;
    // 2. midfill: 10 pages asked, 8 cached (more than the last page missing).
    EXPECT_EQ(MatchPages(ns, u, 10 * kPageTokens), 8u);
    // 3. decode: every whole page cached (8 of 8); then all but the last (8 of 9).
    EXPECT_EQ(MatchPages(ns, u, 8 * kPageTokens + 5), 8u);
    EXPECT_EQ(MatchPages(ns, u, 9 * kPageTokens), 8u);
    // A read of the 8 pages over the data plane.
    absl::StatusOr<MatchResult> match = client_->Match(ns, absl::MakeConstSpan(u).first(8 * 16));
    ASSERT_OK(match);  // 4. decode again: 8 of 8
    std::vector<std::byte> kv(8 * ClientTestLayout().BytesPerPage());
    ASSERT_OK(client_->Read(ns, match->segments, 8, Host(kv)));
    EXPECT_TRUE(kv == ModelBytes(u, 0, 8));
    // Evict all of DRAM: no SSD tier, so both blobs drop to TEXT.
    absl::StatusOr<EvictResult> evicted = client_->Evict(Tier::kDram, uint64_t{1} << 30);
    ASSERT_OK(evicted);
    EXPECT_EQ(evicted->blobs_dropped, 2u);
    // 5. prefill again: the 8 pages are known as TEXT only (nothing readable).
    EXPECT_EQ(MatchPages(ns, u, 8 * kPageTokens + 5), 8u);
  }

  static Scrape ScrapeMetrics() {
    absl::StatusOr<HttpResponse> r = HttpGet(node_->http_address(), "/metrics");
    EXPECT_OK(r);
    if (!r.ok()) return {};
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(absl::StartsWith(r->content_type, "text/plain; version=0.0.4")) << r->content_type;
    return Parse(r->body);
  }

  static inline NodeProcess* node_ = nullptr;
  static inline Client* client_ = nullptr;
  static inline BlobKey b1_;
};

TEST_F(HttpMetricsTest, ReadyLineAndHealthEndpoints) {
  EXPECT_EQ(node_->ReadyField("http"), node_->http_address());
  ASSERT_OK_AND_ASSIGN(HttpResponse health, HttpGet(node_->http_address(), "/healthz"));
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");
  ASSERT_OK_AND_ASSIGN(HttpResponse ready, HttpGet(node_->http_address(), "/readyz"));
  EXPECT_EQ(ready.status, 200);
  ASSERT_OK_AND_ASSIGN(HttpResponse missing, HttpGet(node_->http_address(), "/v2/nothing"));
  EXPECT_EQ(missing.status, 404);
}

TEST_F(HttpMetricsTest, CountersMoveAsTheScriptSays) {
  const Scrape s = ScrapeMetrics();
  const uint64_t page = ClientTestLayout().BytesPerPage();
  // Lookups by phase: prefill = steps 1 and 5, midfill = 2, decode = 3 (twice) and 4.
  EXPECT_EQ(s.Value("strata_lookups_total{phase=\"prefill\"}"), 2);
  EXPECT_EQ(s.Value("strata_lookups_total{phase=\"midfill\"}"), 1);
  EXPECT_EQ(s.Value("strata_lookups_total{phase=\"decode\"}"), 3);
  EXPECT_EQ(s.Value("strata_lookup_queried_pages_total{phase=\"prefill\"}"), 16);
  EXPECT_EQ(s.Value("strata_lookup_queried_pages_total{phase=\"midfill\"}"), 10);
  EXPECT_EQ(s.Value("strata_lookup_queried_pages_total{phase=\"decode\"}"), 25);
  EXPECT_EQ(s.Value("strata_lookup_pages_total{phase=\"prefill\",result=\"miss\"}"), 8);
  EXPECT_EQ(s.Value("strata_lookup_pages_total{phase=\"prefill\",result=\"text\"}"), 8);
  EXPECT_EQ(s.Value("strata_lookup_pages_total{phase=\"prefill\",result=\"dram\"}"), 0);
  EXPECT_EQ(s.Value("strata_lookup_pages_total{phase=\"midfill\",result=\"dram\"}"), 8);
  EXPECT_EQ(s.Value("strata_lookup_pages_total{phase=\"midfill\",result=\"miss\"}"), 2);
  EXPECT_EQ(s.Value("strata_lookup_pages_total{phase=\"decode\",result=\"dram\"}"), 24);
  EXPECT_EQ(s.Value("strata_lookup_pages_total{phase=\"decode\",result=\"miss\"}"), 1);
  EXPECT_EQ(s.Value("strata_lookup_pages_total{phase=\"decode\",result=\"ssd\"}"), 0);

  // Tiers after the eviction: DRAM empty, both blobs (12 pages) TEXT; no SSD tier.
  EXPECT_EQ(s.Value("strata_tier_capacity_bytes{tier=\"dram\"}"), 64 << 20);
  EXPECT_EQ(s.Value("strata_tier_capacity_bytes{tier=\"ssd\"}"), 0);
  EXPECT_EQ(s.Value("strata_tier_used_bytes{tier=\"dram\"}"), 0);
  EXPECT_EQ(s.Value("strata_tier_free_bytes{tier=\"dram\"}"), 64 << 20);
  EXPECT_EQ(s.Value("strata_tier_blobs{tier=\"dram\"}"), 0);
  EXPECT_EQ(s.Value("strata_tier_blobs{tier=\"text\"}"), 2);
  EXPECT_EQ(s.Value("strata_tier_pages{tier=\"dram\"}"), 0);
  EXPECT_EQ(s.Value("strata_tier_pages{tier=\"text\"}"), 12);
  EXPECT_GT(s.Value("strata_tier_used_bytes{tier=\"text\"}"), 0);
  EXPECT_EQ(s.Value("strata_tier_evictions_total{tier=\"dram\"}"), 2);
  EXPECT_EQ(s.Value("strata_tier_demotions_total{tier=\"dram\"}"), 0);
  EXPECT_EQ(s.Value("strata_text_drops_total"), 2);
  EXPECT_EQ(s.Value("strata_tier_read_hits_total{tier=\"dram\"}"), 1);
  EXPECT_EQ(s.Value("strata_tier_read_misses_total{tier=\"dram\"}"), 0);
  EXPECT_EQ(s.Value("strata_index_blobs"), 2);
  EXPECT_EQ(s.Value("strata_leases_active"), 0);
  EXPECT_EQ(s.Value("strata_puts_pending"), 0);
  EXPECT_EQ(s.Value("strata_rebuild_tasks_queued"), 0);
  EXPECT_EQ(s.Value("strata_node_draining"), 0);
  EXPECT_EQ(s.Value("strata_meta_write_errors_total"), 0);  // the RocksDB store took every write
  // The records of both blobs are in the RocksDB write-ahead log and memtable.
  EXPECT_GT(s.Value("strata_meta_disk_bytes"), 0);
  EXPECT_GT(s.Value("strata_meta_memory_bytes{part=\"memtables\"}"), 0);

  // Data plane: 12 pages in, 8 out; one READ, timed.
  EXPECT_EQ(s.Value("strata_dataplane_received_bytes_total"), 12 * page);
  EXPECT_EQ(s.Value("strata_dataplane_sent_bytes_total"), 8 * page);
  EXPECT_EQ(s.Value("strata_dataplane_requests_total{op=\"read\"}"), 1);
  EXPECT_EQ(s.Value("strata_dataplane_transfer_duration_seconds_count{op=\"read\"}"), 1);
  EXPECT_EQ(s.Value("strata_dataplane_transfer_duration_seconds_count{op=\"put\"}"),
            s.Value("strata_dataplane_requests_total{op=\"put\"}"));
  // Both writes were PUTs: one data-plane request each, no BeginPut or CommitPut RPC.
  EXPECT_EQ(s.Value("strata_dataplane_requests_total{op=\"put\"}"), 2);

  // gRPC: 6 Matches, all OK, each timed; one Evict.
  EXPECT_EQ(s.Value("strata_rpc_calls_total{service=\"strata.v1.Store\",method=\"Match\","
                    "code=\"OK\"}"),
            6);
  EXPECT_EQ(s.Value("strata_rpc_duration_seconds_count{service=\"strata.v1.Store\","
                    "method=\"Match\"}"),
            6);
  EXPECT_EQ(s.Value("strata_rpc_duration_seconds_bucket{service=\"strata.v1.Store\","
                    "method=\"Match\",le=\"+Inf\"}"),
            6);
  EXPECT_EQ(s.Value("strata_rpc_calls_total{service=\"strata.v1.Admin\",method=\"Evict\","
                    "code=\"OK\"}"),
            1);

  // The live curve saw every queried page; DRAM has a plan.
  EXPECT_GT(s.Value("strata_mrc_accesses_total"), 0);
  EXPECT_GT(s.Value("strata_mrc_sample_rate"), 0);
  const double dram_hit = s.Value("strata_mrc_expected_hit_ratio{tier=\"dram\"}");
  EXPECT_GE(dram_hit, 0);
  EXPECT_LE(dram_hit, 1);
}

TEST_F(HttpMetricsTest, PromtoolParsesTheScrape) {
  const std::string promtool = Promtool();
  if (promtool.empty()) GTEST_SKIP() << "promtool not installed (deploy/setup.sh installs it)";
  const Scrape s = ScrapeMetrics();
  const std::string path = node_->temp_dir() + "/scrape.prom";
  std::ofstream(path) << s.text;
  const auto [code, output] = RunCommand(promtool + " check metrics < " + path);
  EXPECT_EQ(code, 0) << "promtool check metrics:\n" << output;
}

TEST_F(HttpMetricsTest, TiersJsonParsesWithTheDocumentedKeys) {
  ASSERT_OK_AND_ASSIGN(HttpResponse r, HttpGet(node_->http_address(), "/v1/tiers"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  ASSERT_OK_AND_ASSIGN(nlohmann::json doc, ParseJson(r.body));
  for (const char* key : {"tiers", "lookups", "mrc", "rebuild", "node"}) {
    EXPECT_TRUE(doc.contains(key)) << key << " in " << r.body;
  }
  ASSERT_EQ(doc["tiers"].size(), 3u);
  nlohmann::json& dram = doc["tiers"][0];
  EXPECT_EQ(dram["tier"], "dram");
  EXPECT_EQ(dram["capacity_bytes"], 64 << 20);
  EXPECT_TRUE(dram["capacity_bytes"].is_number_unsigned());
  for (const char* key : {"used_bytes", "free_bytes", "blobs", "pages", "read_hits", "read_misses",
                          "evictions", "promotions", "demotions", "plan"}) {
    EXPECT_TRUE(dram.contains(key)) << key;
  }
  nlohmann::json& plan = dram["plan"];
  ASSERT_TRUE(plan.is_object()) << r.body;
  EXPECT_FALSE(plan["points"].empty());
  EXPECT_TRUE(plan["recommended"].contains("capacity_bytes"));
  EXPECT_FALSE(plan["advice"].get<std::string>().empty());
  EXPECT_EQ(doc["tiers"][1]["present"], false);  // no SSD tier
  EXPECT_EQ(doc["tiers"][2]["tier"], "text");
  EXPECT_EQ(doc["tiers"][2]["pages"], 12);
  EXPECT_EQ(doc["lookups"]["prefill"]["miss_pages"], 8);
  EXPECT_EQ(doc["lookups"]["midfill"]["dram_hit_pages"], 8);
  EXPECT_EQ(doc["lookups"]["decode"]["lookups"], 3);
  EXPECT_GT(doc["mrc"]["accesses"].get<uint64_t>(), 0u);
  EXPECT_FALSE(doc["mrc"]["points"].empty());
}

// deploy/prometheus/prometheus.yml passes promtool, and every strata_* name in the Grafana
// dashboard's queries is a sample name of a real scrape.
TEST_F(HttpMetricsTest, DeployConfigAndDashboardMatchTheEndpoint) {
  const std::string dashboard =
      ReadFileToString(STRATA_SOURCE_DIR "/deploy/grafana/strata-dashboard.json");
  ASSERT_FALSE(dashboard.empty());
  ASSERT_OK_AND_ASSIGN(nlohmann::json doc, ParseJson(dashboard));
  const Scrape s = ScrapeMetrics();
  std::set<std::string> used;
  const std::regex name("strata_[a-z0-9_]+");
  int exprs = 0;
  for (nlohmann::json& panel : doc["panels"]) {
    for (nlohmann::json& target : panel["targets"]) {
      const std::string expr = target.value("expr", "");
      ++exprs;
      for (std::sregex_iterator it(expr.begin(), expr.end(), name), end; it != end; ++it) {
        used.insert(it->str());
      }
    }
  }
  EXPECT_GE(exprs, 7);
  for (const std::string& metric : used) {
    EXPECT_TRUE(s.names.count(metric))
        << "the dashboard uses " << metric << ", which /metrics does not serve";
  }
  const std::string promtool = Promtool();
  if (promtool.empty()) GTEST_SKIP() << "promtool not installed (deploy/setup.sh installs it)";
  const auto [code, output] =
      RunCommand(promtool + " check config " STRATA_SOURCE_DIR "/deploy/prometheus/prometheus.yml");
  EXPECT_EQ(code, 0) << output;
}

// A node drained over Admin.Drain stays up but is no longer ready.
TEST(HttpReadinessTest, ReadyzTurns503WhenTheNodeDrains) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node, StartNodeWithDataPlane("tcp"));
  ASSERT_OK_AND_ASSIGN(HttpResponse ready, HttpGet(node->http_address(), "/readyz"));
  EXPECT_EQ(ready.status, 200);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Connect(ClientOptionsFor(node->grpc_address(), "tcp")));
  ASSERT_OK(client->Drain(absl::Seconds(5)));
  ASSERT_OK_AND_ASSIGN(ready, HttpGet(node->http_address(), "/readyz"));
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "not ready: draining\n");
  ASSERT_OK_AND_ASSIGN(HttpResponse health, HttpGet(node->http_address(), "/healthz"));
  EXPECT_EQ(health.status, 200);
  ASSERT_OK_AND_ASSIGN(HttpResponse metrics, HttpGet(node->http_address(), "/metrics"));
  EXPECT_TRUE(absl::StrContains(metrics.body, "\nstrata_node_draining 1\n"));
}

// http_listen empty: no endpoint, and the ready line says so.
TEST(HttpReadinessTest, EmptyHttpListenServesNothing) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NodeProcess> node,
                       NodeProcess::Start({.args = {"--http_listen="}}));
  EXPECT_EQ(node->http_address(), "");
  EXPECT_EQ(node->ReadyField("http"), "off");
}

}  // namespace
}  // namespace strata::integration::http_metrics_test
