#include "client/cli/blob_format.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "client/cli/exit_codes.h"
#include "client/cli/testing/json_value.h"
#include "strata/base/status_test_macros.h"

namespace strata::cli {
namespace {

using ::testing::HasSubstr;
using testing::JsonValue;
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
  JsonWriter json;
  WriteBlobInfoJson(info, /*with_tokens=*/true, json);
  ASSERT_OK_AND_ASSIGN(JsonValue v, testing::ParseJson(json.Take()));
  EXPECT_EQ(v["key"].AsString(), kKeyHex);
  EXPECT_EQ(v["model"].AsString(), "org/model \"7b\"");
  EXPECT_EQ(v["layout"]["spec"].AsString(),
            "layers=2,kv_heads=4,head_dim=8,dtype=bfloat16,page_tokens=16,format=kv,tp=0/1");
  EXPECT_EQ(v["layout"]["num_kv_heads"].AsUint(), 4u);
  EXPECT_EQ(v["layout"]["format"].AsString(), "key_value");
  EXPECT_EQ(v["namespace_hash"].AsString(), "00000000000000010000000000000002");
  EXPECT_EQ(v["parent"]["key"].AsString(), kParentHex);
  EXPECT_EQ(v["parent"]["pages"].AsUint(), 3u);
  EXPECT_EQ(v["first_page"].AsUint(), 3u);
  EXPECT_EQ(v["pages"].AsUint(), 2u);
  EXPECT_EQ(v["bytes"].AsUint(), 8192u);  // 2 pages x 2 layers x (K+V) x 16 x 4 x 8 x 2 B
  EXPECT_EQ(v["checksum"].AsString(), "feedfacecafebeef");
  ASSERT_EQ(v["tiers"].size(), 2u);
  EXPECT_EQ(v["tiers"][1].AsString(), "text");
  EXPECT_TRUE(v["pinned"].AsBool());
  EXPECT_EQ(v["created"].AsString(), "2026-11-18T11:06:40.123Z");
  EXPECT_EQ(v["created_unix_ms"].AsUint(), 1795000000123u);
  ASSERT_EQ(v["tokens"].size(), 3u);
  EXPECT_EQ(v["tokens"][2].AsUint(), 3u);

  BlobInfo root = info;
  root.parent.reset();
  JsonWriter without;
  WriteBlobInfoJson(root, /*with_tokens=*/false, without);
  ASSERT_OK_AND_ASSIGN(JsonValue w, testing::ParseJson(without.Take()));
  EXPECT_TRUE(w.Has("parent"));
  EXPECT_TRUE(w["parent"].is_null());
  EXPECT_FALSE(w.Has("tokens"));
}

TEST(BlobFormatTest, StatsJson) {
  JsonWriter json;
  json.BeginObject();
  json.Key("segment");
  WriteSegmentJson({.blob = SampleInfo().key,
                    .blob_page_offset = 1,
                    .page_count = 2,
                    .seq_page_begin = 4,
                    .blob_pages = 5,
                    .tier = Tier::kDram},
                   json);
  json.Key("tier");
  WriteTierInfoJson({.tier = Tier::kDram,
                     .capacity_bytes = 100,
                     .used_bytes = 40,
                     .free_bytes = 60,
                     .blobs = 2,
                     .hits = 3,
                     .misses = 4,
                     .evictions = 5,
                     .promotions = 6,
                     .demotions = 7},
                    json);
  json.Key("index");
  WriteIndexInfoJson({.roots = 1, .pinned_nodes = 8}, json);
  json.Key("engine");
  WriteEngineInfoJson({.namespaces = 2, .draining = true}, json);
  json.EndObject();
  ASSERT_OK_AND_ASSIGN(JsonValue v, testing::ParseJson(json.Take()));
  EXPECT_EQ(v["segment"]["blob"].AsString(), kKeyHex);
  EXPECT_EQ(v["segment"]["seq_page_begin"].AsUint(), 4u);
  EXPECT_EQ(v["segment"]["tier"].AsString(), "dram");
  EXPECT_EQ(v["tier"]["free_bytes"].AsUint(), 60u);
  EXPECT_EQ(v["tier"]["demotions"].AsUint(), 7u);
  EXPECT_EQ(v["index"]["pinned_nodes"].AsUint(), 8u);
  EXPECT_EQ(v["engine"]["namespaces"].AsUint(), 2u);
  EXPECT_TRUE(v["engine"]["draining"].AsBool());
}

}  // namespace
}  // namespace strata::cli
