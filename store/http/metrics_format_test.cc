#include "strata/store/http/metrics_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

#include "store/http/test_snapshot.h"

namespace strata::store::http {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

bool HasLine(const std::string& text, const std::string& line) {
  for (const std::string& l : Lines(text)) {
    if (l == line) return true;
  }
  return false;
}

TEST(MetricsFormatTest, EscapesLabelValuesHelpAndFormatsValues) {
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeHelp("x\\y\nz \"q\""), "x\\\\y\\nz \"q\"");
  EXPECT_EQ(FormatValue(1), "1");
  EXPECT_EQ(FormatValue(0.75), "0.75");
  EXPECT_EQ(FormatValue(2.5e-5), "2.5e-05");
  EXPECT_EQ(FormatValue(1e19), "1e+19");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
  EXPECT_EQ(GrpcCodeName(0), "OK");
  EXPECT_EQ(GrpcCodeName(5), "NOT_FOUND");
  EXPECT_EQ(GrpcCodeName(16), "UNAUTHENTICATED");
  EXPECT_EQ(GrpcCodeName(17), "UNKNOWN");
}

TEST(MetricsFormatTest, WritesEachFigureUnderItsName) {
  const std::string text = FormatMetrics(testing::KnownSnapshot());
  for (const std::string line : {
           "strata_tier_capacity_bytes{tier=\"dram\"} 1000",
           "strata_tier_used_bytes{tier=\"ssd\"} 6000",
           "strata_tier_free_bytes{tier=\"dram\"} 600",
           "strata_tier_free_bytes{tier=\"ssd\"} 0",  // over-full never goes negative
           "strata_tier_free_bytes{tier=\"text\"} 90",
           "strata_tier_blobs{tier=\"text\"} 1",
           "strata_tier_pages{tier=\"ssd\"} 36",
           "strata_tier_read_hits_total{tier=\"ssd\"} 11",
           "strata_tier_read_misses_total{tier=\"dram\"} 2",
           "strata_tier_evictions_total{tier=\"dram\"} 1",
           "strata_tier_promotions_total{tier=\"dram\"} 4",
           "strata_tier_demotions_total{tier=\"dram\"} 5",
           "strata_text_drops_total 2",
           "strata_text_deletions_total 1",
           "strata_text_rebuilds_total 1",
           "strata_tenant_blobs{tenant=\"acme\"} 12",
           "strata_tenant_bytes{tenant=\"acme\",tier=\"ssd\"} 6000",
           "strata_tenant_text_blobs{tenant=\"acme\"} 1",
           "strata_tenant_blobs{tenant=\"globex\\\"x\"} 1",  // a quote in a label, escaped
           "strata_lookups_total{phase=\"decode\"} 3",
           "strata_lookup_queried_pages_total{phase=\"midfill\"} 6",
           "strata_lookup_pages_total{phase=\"prefill\",result=\"miss\"} 8",
           "strata_lookup_pages_total{phase=\"midfill\",result=\"ssd\"} 1",
           "strata_lookup_pages_total{phase=\"decode\",result=\"text\"} 2",
           "strata_rebuild_tasks_queued 1",
           "strata_rebuild_tasks_in_flight 2",
           "strata_rebuild_tasks_requested_total 3",
           "strata_rebuild_tasks_completed_total 4",
           "strata_rebuild_tasks_expired_total 5",
           "strata_rebuild_tasks_dropped_total 6",
           "strata_leases_active 2",
           "strata_puts_pending 1",
           "strata_meta_write_errors_total 7",
           "strata_meta_disk_bytes 4096",
           "strata_meta_memory_bytes{part=\"memtables\"} 1024",
           "strata_meta_memory_bytes{part=\"table_readers\"} 512",
           "strata_meta_memory_bytes{part=\"block_cache\"} 2048",
           "strata_node_draining 0",
           "strata_mrc_expected_hit_ratio{tier=\"dram\"} 0.5",
           "strata_mrc_expected_hit_ratio{tier=\"ssd\"} 0.75",
           "strata_mrc_recommended_capacity_bytes{tier=\"dram\"} 2000",
           "strata_mrc_sample_rate 0.1",
           "strata_mrc_accesses_total 100",
           "strata_mrc_working_set_bytes 2000",
           "strata_dataplane_received_bytes_total 123456",
           "strata_dataplane_sent_bytes_total 654321",
           "strata_dataplane_requests_total{op=\"put\"} 6",
           "strata_dataplane_request_failures_total{op=\"put\"} 1",
           "strata_dataplane_transfer_duration_seconds_bucket{op=\"fetch\",le=\"2.5e-05\"} 0",
           "strata_dataplane_transfer_duration_seconds_bucket{op=\"fetch\",le=\"5e-05\"} 1",
           "strata_dataplane_transfer_duration_seconds_bucket{op=\"fetch\",le=\"0.005\"} 2",
           "strata_dataplane_transfer_duration_seconds_bucket{op=\"fetch\",le=\"+Inf\"} 2",
           "strata_dataplane_transfer_duration_seconds_count{op=\"fetch\"} 2",
           "strata_dataplane_transfer_duration_seconds_bucket{op=\"put\",le=\"10\"} 0",
           "strata_dataplane_transfer_duration_seconds_bucket{op=\"put\",le=\"+Inf\"} 1",
           "strata_dataplane_transfer_duration_seconds_sum{op=\"put\"} 20",
           "strata_dataplane_transfer_duration_seconds_count{op=\"read\"} 0",
           "strata_rpc_calls_total{service=\"strata.v1.Store\",method=\"Match\",code=\"OK\"} 1",
           "strata_rpc_calls_total{service=\"strata.v1.Store\",method=\"Match\",code=\"NOT_FOUND\"}"
           " 1",
           "strata_rpc_duration_seconds_count{service=\"strata.v1.Store\",method=\"Match\"} 2",
           "strata_rpc_duration_seconds_bucket{service=\"strata.v1.Admin\",method=\"Tiers\","
           "le=\"0.00025\"} 1",
           "strata_cluster_registered 1",
           "strata_cluster_members{state=\"serving\"} 3",
           "strata_cluster_members{state=\"joining\"} 1",
           "strata_cluster_members{state=\"draining\"} 0",
           "strata_cluster_hot_replicated_blobs_total 5",
           "strata_cluster_hot_pushed_blobs_total 9",
           "strata_cluster_hot_pushed_bytes_total 4096",
           "strata_cluster_hot_push_failures_total 1",
           "strata_cluster_text_repairs_total 2",
           "strata_cluster_text_repaired_segments_total 11",
           "strata_cluster_text_repair_puts_total 13",
           "strata_cluster_text_repair_failures_total 0",
           // The method name with a quote, a backslash and a newline, escaped.
           "strata_rpc_calls_total{service=\"odd\\\"service\\\\\",method=\"M\\nethod\","
           "code=\"OK\"} 1",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << "missing: " << line << "\n" << text;
  }
  // Codes with no calls are not written.
  EXPECT_FALSE(absl::StrContains(text, "code=\"INTERNAL\""));
}

// Each sample follows its family's HELP and TYPE (once each); counters end in _total;
// histogram buckets are cumulative and end at +Inf with _count equal to it.
TEST(MetricsFormatTest, FamiliesAreWellFormed) {
  const std::string text = FormatMetrics(testing::KnownSnapshot());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::map<std::string, std::string> types;
  std::set<std::string> helped;
  std::string current;
  for (const std::string& line : Lines(text)) {
    if (absl::StartsWith(line, "# HELP ")) {
      const std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(' ', 3));
      ASSERT_EQ(parts.size(), 4u) << line;
      EXPECT_TRUE(helped.insert(parts[2]).second) << "HELP twice: " << line;
      continue;
    }
    if (absl::StartsWith(line, "# TYPE ")) {
      const std::vector<std::string> parts = absl::StrSplit(line, ' ');
      ASSERT_EQ(parts.size(), 4u) << line;
      EXPECT_TRUE(types.emplace(parts[2], parts[3]).second) << "TYPE twice: " << line;
      EXPECT_TRUE(helped.count(parts[2])) << "TYPE before HELP: " << line;
      current = parts[2];
      EXPECT_EQ(parts[3] == "counter", absl::EndsWith(current, "_total")) << line;
      continue;
    }
    ASSERT_FALSE(current.empty()) << "sample before any TYPE: " << line;
    const std::string name = line.substr(0, line.find_first_of("{ "));
    if (types[current] == "histogram") {
      EXPECT_TRUE(name == current + "_bucket" || name == current + "_sum" ||
                  name == current + "_count")
          << line;
    } else {
      EXPECT_EQ(name, current) << line;
    }
  }
  EXPECT_EQ(types["strata_rpc_duration_seconds"], "histogram");
  EXPECT_EQ(types["strata_tier_used_bytes"], "gauge");
  EXPECT_EQ(types["strata_lookup_pages_total"], "counter");
}

TEST(MetricsFormatTest, AnEmptySnapshotStillFormats) {
  const std::string text = FormatMetrics(NodeSnapshot{});
  EXPECT_TRUE(HasLine(text, "strata_tier_capacity_bytes{tier=\"dram\"} 0"));
  // No curve yet: the per-tier MRC families are left out entirely (no HELP without samples).
  EXPECT_FALSE(absl::StrContains(text, "strata_mrc_expected_hit_ratio"));
  EXPECT_FALSE(absl::StrContains(text, "strata_rpc_calls_total"));
}

// The real Prometheus parser and linter, where installed (deploy/setup.sh installs it).
TEST(MetricsFormatTest, PromtoolAcceptsTheText) {
#ifndef STRATA_PROMTOOL
  GTEST_SKIP() << "promtool was not found at configure time (deploy/setup.sh installs it)";
#else
  const std::string path = ::testing::TempDir() + "/strata_metrics_format_test.prom";
  {
    std::ofstream out(path);
    out << FormatMetrics(testing::KnownSnapshot());
  }
  const std::string command = std::string(STRATA_PROMTOOL) + " check metrics < " + path + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "promtool check metrics:\n" << output;
  std::remove(path.c_str());
#endif
}

}  // namespace
}  // namespace strata::store::http
