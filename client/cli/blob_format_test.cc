#include "client/cli/blob_format.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "client/cli/exit_codes.h"
#include "strata/base/status_test_macros.h"
#include "strata/testing/json.h"

namespace strata::cli {
namespace {

using strata::testing::AsBool;
using strata::testing::AsString;
using strata::testing::AsUint;
using strata::testing::ParseJson;

using ::testing::HasSubstr;
using ::testing::Pair;

constexpr char kKeyHex[] = "0123456789abcdef0123456789abcdef";
constexpr char kParentHex[] = "fedcba9876543210fedcba9876543210";

BlobInfo SampleInfo() {
  BlobInfo info;
  PrefixHash::FromHex(kKeyHex, &info.key.hash);
  info.tenant = "acme";
  info.model = "org/model \"7b\"";  // a quote must survive JSON escaping
  info.layout = {.num_layers = 2,
                 .num_kv_heads = 4,
                 .head_dim = 8,
                 .dtype = DType::kBFloat16,
                 .page_tokens = 16,
                 .format = KvFormat::kKeyValue,
                 .tp_rank = 0,
                 .tp_world = 1};
  info.namespace_hash = {1, 2};
  Parent parent;
  PrefixHash::FromHex(kParentHex, &parent.key.hash);
  parent.pages = 3;
  info.parent = parent;
  info.start_hash = {3, 4};
  info.first_page = 3;
  info.pages = 2;
  info.bytes = 2 * info.layout.BytesPerPage();
  info.checksum = 0xfeedfacecafebeefull;
  info.tiers = {Tier::kDram, Tier::kText};
  info.pages_indexed = 2;
  info.leases = 1;
  info.pinned = true;
  info.created = absl::FromUnixMillis(1795000000123);
  info.last_access = absl::FromUnixMillis(1795000001000);
  info.hits = 9;
  info.tokens = {1, 2, 3};
  return info;
}

TEST(BlobFormatTest, ParseBlobKey) {
  ASSERT_OK_AND_ASSIGN(BlobKey key, ParseBlobKey("KEY", kKeyHex));
  EXPECT_EQ(key.ToHex(), kKeyHex);
  ASSERT_OK_AND_ASSIGN(BlobKey upper, ParseBlobKey("KEY", "0123456789ABCDEF0123456789ABCDEF"));
  EXPECT_EQ(upper, key);
  for (const char* bad :
       {"", "0123", "0123456789abcdef0123456789abcdeg", "0123456789abcdef0123456789abcdef0",
        "00000000000000000000000000000000"}) {
    absl::Status status = ParseBlobKey("KEY", bad).status();
    EXPECT_TRUE(IsUsageError(status)) << bad;
    EXPECT_THAT(std::string(status.message()), HasSubstr("KEY: ")) << bad;
  }
}

TEST(BlobFormatTest, ParseParent) {
  ASSERT_OK_AND_ASSIGN(Parent parent, ParseParent("--parent", std::string(kParentHex) + ":12"));
  EXPECT_EQ(parent.key.ToHex(), kParentHex);
  EXPECT_EQ(parent.pages, 12u);
  for (const std::string& bad :
       {std::string(kParentHex), std::string(kParentHex) + ":", std::string(kParentHex) + ":0",
        std::string(kParentHex) + ":x", std::string(kParentHex) + ":-1",
        std::string(kParentHex) + ":4294967296", std::string("ab:3")}) {
    EXPECT_TRUE(IsUsageError(ParseParent("--parent", bad).status())) << bad;
  }
}

TEST(BlobFormatTest, ParseTierAndLists) {
  EXPECT_EQ(*ParseTier("--tier", "DRAM"), Tier::kDram);
  EXPECT_EQ(*ParseTier("--tier", "ssd"), Tier::kSsd);
  EXPECT_TRUE(IsUsageError(ParseTier("--tier", "disk").status()));
  EXPECT_EQ(TierList({}), "-");
  EXPECT_EQ(TierList({Tier::kDram, Tier::kSsd}), "dram,ssd");
  EXPECT_EQ(ParentText(std::nullopt), "-");
}

TEST(BlobFormatTest, InfoLines) {
  const auto lines = BlobInfoLines(SampleInfo());
  EXPECT_THAT(lines, ::testing::Contains(Pair("key", kKeyHex)));
  EXPECT_THAT(lines, ::testing::Contains(Pair(
                         "layout",
                         "layers=2,kv_heads=4,head_dim=8,dtype=bfloat16,page_tokens=16,format=kv,"
                         "tp=0/1")));
  EXPECT_THAT(lines, ::testing::Contains(Pair("parent", std::string(kParentHex) + ":3")));
  EXPECT_THAT(lines, ::testing::Contains(Pair("pages", "[3, 5) = 2 pages, 32 tokens")));
  EXPECT_THAT(lines, ::testing::Contains(Pair("bytes", "8.00 KiB (8192)")));
  EXPECT_THAT(lines, ::testing::Contains(Pair("checksum", "feedfacecafebeef")));
  EXPECT_THAT(lines, ::testing::Contains(Pair("tiers", "dram,text")));
  EXPECT_THAT(lines, ::testing::Contains(Pair("pinned", "yes")));
}

TEST(BlobFormatTest, InfoJson) {
  const BlobInfo info = SampleInfo();
  ASSERT_OK_AND_ASSIGN(nlohmann::json v,
                       ParseJson(DumpJson(BlobInfoJson(info, /*with_tokens=*/true))));
  EXPECT_EQ(AsString(v["key"]), kKeyHex);
  EXPECT_EQ(AsString(v["model"]), "org/model \"7b\"");
  EXPECT_EQ(AsString(v["layout"]["spec"]),
            "layers=2,kv_heads=4,head_dim=8,dtype=bfloat16,page_tokens=16,format=kv,tp=0/1");
  EXPECT_EQ(AsUint(v["layout"]["num_kv_heads"]), 4u);
  EXPECT_EQ(AsString(v["layout"]["format"]), "key_value");
  EXPECT_EQ(AsString(v["namespace_hash"]), "00000000000000010000000000000002");
  EXPECT_EQ(AsString(v["parent"]["key"]), kParentHex);
  EXPECT_EQ(AsUint(v["parent"]["pages"]), 3u);
  EXPECT_EQ(AsUint(v["first_page"]), 3u);
  EXPECT_EQ(AsUint(v["pages"]), 2u);
  EXPECT_EQ(AsUint(v["bytes"]), 8192u);  // 2 pages x 2 layers x (K+V) x 16 x 4 x 8 x 2 B
  EXPECT_EQ(AsString(v["checksum"]), "feedfacecafebeef");
  ASSERT_EQ(v["tiers"].size(), 2u);
  EXPECT_EQ(AsString(v["tiers"][1]), "text");
  EXPECT_TRUE(AsBool(v["pinned"]));
  EXPECT_EQ(AsString(v["created"]), "2026-11-18T11:06:40.123Z");
  EXPECT_EQ(AsUint(v["created_unix_ms"]), 1795000000123u);
  ASSERT_EQ(v["tokens"].size(), 3u);
  EXPECT_EQ(AsUint(v["tokens"][2]), 3u);

  BlobInfo root = info;
  root.parent.reset();
  ASSERT_OK_AND_ASSIGN(nlohmann::json w,
                       ParseJson(DumpJson(BlobInfoJson(root, /*with_tokens=*/false))));
  EXPECT_TRUE(w.contains("parent"));
  EXPECT_TRUE(w["parent"].is_null());
  EXPECT_FALSE(w.contains("tokens"));
}

TEST(BlobFormatTest, StatsJson) {
  Json json;
  json["segment"] = SegmentJson({.blob = SampleInfo().key,
                                 .blob_page_offset = 1,
                                 .page_count = 2,
                                 .seq_page_begin = 4,
                                 .blob_pages = 5,
                                 .tier = Tier::kDram});
  json["tier"] = TierInfoJson({.tier = Tier::kDram,
                               .capacity_bytes = 100,
                               .used_bytes = 40,
                               .blobs = 2,
                               .hits = 3,
                               .misses = 4,
                               .evictions = 5,
                               .promotions = 6,
                               .demotions = 7});
  json["index"] = IndexInfoJson({.roots = 1, .pinned_nodes = 8});
  json["engine"] = EngineInfoJson({.namespaces = 2, .draining = true});
  ASSERT_OK_AND_ASSIGN(nlohmann::json v, ParseJson(DumpJson(json)));
  EXPECT_EQ(AsString(v["segment"]["blob"]), kKeyHex);
  EXPECT_EQ(AsUint(v["segment"]["seq_page_begin"]), 4u);
  EXPECT_EQ(AsString(v["segment"]["tier"]), "dram");
  EXPECT_EQ(AsUint(v["tier"]["free_bytes"]), 60u);
  EXPECT_EQ(AsUint(v["tier"]["demotions"]), 7u);
  EXPECT_EQ(AsUint(v["index"]["pinned_nodes"]), 8u);
  EXPECT_EQ(AsUint(v["engine"]["namespaces"]), 2u);
  EXPECT_TRUE(AsBool(v["engine"]["draining"]));
}

}  // namespace
}  // namespace strata::cli
