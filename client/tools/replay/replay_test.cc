// strata-replay's pure parts: flags, block pages, KV bytes, percentiles, and the exact
// curve comparison. The replay against a node: tests/integration/replay_test.cc.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "client/tools/replay/replay_config.h"
#include "client/tools/replay/replay_report.h"
#include "client/tools/replay/trace_pages.h"

namespace strata::replay {
namespace {

TEST(ReplayConfigTest, ParsesFlagsBothForms) {
  absl::StatusOr<ReplayConfig> c = ParseReplayArgs({"strata-replay",
                                                    "--node",
                                                    "127.0.0.1:9",
                                                    "--speedup=0",
                                                    "--max-requests",
                                                    "300",
                                                    "--concurrency",
                                                    "2",
                                                    "--decode-lookups",
                                                    "1",
                                                    "--json",
                                                    "--plot-dir",
                                                    "/tmp/p",
                                                    "--layers",
                                                    "1",
                                                    "--kv-heads",
                                                    "1",
                                                    "--head-dim",
                                                    "8",
                                                    "--dtype",
                                                    "fp16",
                                                    "t.jsonl"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->node, "127.0.0.1:9");
  EXPECT_EQ(c->speedup, 0);
  EXPECT_EQ(c->max_requests, 300u);
  EXPECT_EQ(c->concurrency, 2);
  EXPECT_EQ(c->decode_lookups, 1u);
  EXPECT_TRUE(c->json);
  EXPECT_EQ(c->plot_dir, "/tmp/p");
  EXPECT_EQ(c->trace_path, "t.jsonl");
  EXPECT_EQ(c->Layout().BytesPerPage(), 1u * 1 * 8 * 2 * 2 * 512);
  EXPECT_NE(c->command_line.find("--speedup=0"), std::string::npos);
}

TEST(ReplayConfigTest, DefaultLayoutIsTheReferenceWorkers) {
  absl::StatusOr<ReplayConfig> c = ParseReplayArgs({"strata-replay", "t.jsonl"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->Layout().BytesPerPage(), 8u * 4 * 64 * 2 * 2 * 512);  // 4 MiB
}

TEST(ReplayConfigTest, RejectsBadInput) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"x"},
                                             {"x", "t", "--speedup", "-1"},
                                             {"x", "t", "--concurrency", "0"},
                                             {"x", "t", "--node", "nohostport"},
                                             {"x", "t", "--bogus", "1"},
                                             {"x", "t", "--max-requests"},
                                             {"x", "t", "--dtype", "float7"},
                                             {"x", "t", "u"}}) {
    EXPECT_EQ(ParseReplayArgs(args).status().code(), absl::StatusCode::kInvalidArgument)
        << args.back();
  }
  absl::StatusOr<ReplayConfig> help = ParseReplayArgs({"x", "--help"});
  ASSERT_TRUE(help.ok());
  EXPECT_TRUE(help->help);
}

TEST(TracePagesTest, EqualIdsEqualPagesDifferentIdsDiffer) {
  std::vector<radix::TokenId> a(512), b(512), c(512), d(512);
  BlockTokens(7, 1, absl::MakeSpan(a));
  BlockTokens(7, 1, absl::MakeSpan(b));
  BlockTokens(8, 1, absl::MakeSpan(c));
  BlockTokens(7, 2, absl::MakeSpan(d));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  for (radix::TokenId t : a) EXPECT_LT(t, kVocabulary);
}

TEST(TracePagesTest, BlobBytesArePerPageWhateverTheBlob) {
  radix::KvLayout layout{.num_layers = 3,
                         .num_kv_heads = 1,
                         .head_dim = 4,
                         .dtype = radix::DType::kBFloat16,
                         .page_tokens = 16,
                         .format = radix::KvFormat::kKeyValue,
                         .tp_rank = 0,
                         .tp_world = 1};
  ASSERT_TRUE(layout.Validate().ok());
  const size_t chunk = layout.BytesPerLayerPage();
  std::vector<std::byte> two(2 * layout.BytesPerPage()), one(layout.BytesPerPage());
  const uint64_t ids[] = {5, 9};
  FillBlobBytes(ids, layout, 1, absl::MakeSpan(two));
  FillBlobBytes(absl::MakeConstSpan(ids).subspan(1), layout, 1, absl::MakeSpan(one));
  // Page 1 of the two-page blob (chunks at (l * 2 + 1)) equals the one-page blob of id 9.
  for (uint32_t l = 0; l < 3; ++l) {
    EXPECT_EQ(std::memcmp(two.data() + (l * 2 + 1) * chunk, one.data() + l * chunk, chunk), 0);
    EXPECT_NE(std::memcmp(two.data() + (l * 2) * chunk, one.data() + l * chunk, chunk), 0);
  }
  // Layers differ.
  EXPECT_NE(std::memcmp(one.data(), one.data() + chunk, chunk), 0);
}

TEST(ReplayReportTest, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  EXPECT_EQ(Percentile(v, 0.5), 50);
  EXPECT_EQ(Percentile(v, 0.9), 90);
  EXPECT_EQ(Percentile(v, 0.99), 99);
  EXPECT_EQ(Percentile(v, 1.0), 100);
  EXPECT_EQ(Percentile({}, 0.5), 0);
  EXPECT_EQ(Percentile({3}, 0.01), 3);
}

TEST(ReplayReportTest, CompareAgainstItselfIsZeroAndAgainstAnOffsetIsTheOffset) {
  ReplayResult result;
  // 4 keys of 100 bytes, cycled 5 times: 4 cold misses, hit ratio 16/20 from capacity 400.
  for (int round = 0; round < 5; ++round) {
    for (uint64_t k = 1; k <= 4; ++k) result.exact.Access(k * 0x9e3779b97f4a7c15ULL, 100);
  }
  CurveComparison none = Compare(result, nullptr, 8);
  EXPECT_FALSE(none.have_live);
  EXPECT_EQ(none.grid.back(), 400u);
  EXPECT_NEAR(none.exact.HitRatioAt(400), 0.8, 1e-9);
  ASSERT_EQ(none.exact.points.size(), 8u);
  EXPECT_EQ(none.exact.points[6].capacity_bytes, 350u);
  EXPECT_EQ(none.exact.points[6].hit_ratio, 0.0);  // LRU of 350 bytes cycling 4 keys: no hit
  LiveCurve live;
  live.curve = none.exact;
  CurveComparison same = Compare(result, &live, 8);
  EXPECT_TRUE(same.have_live);
  EXPECT_NEAR(same.mae, 0, 1e-12);
  for (auto& p : live.curve.points) p.hit_ratio = std::min(1.0, p.hit_ratio + 0.1);
  CurveComparison off = Compare(result, &live, 8);
  EXPECT_GT(off.mae, 0.05);
  EXPECT_NEAR(off.max_error, 0.1, 1e-9);
}

}  // namespace
}  // namespace strata::replay
