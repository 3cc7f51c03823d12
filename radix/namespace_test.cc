#include "strata/radix/namespace.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/radix/kv_layout.h"

namespace strata::radix {
namespace {

using ::testing::HasSubstr;

KvLayout Llama8BLayout() {
  return KvLayout{.num_layers = 32,
                  .num_kv_heads = 8,
                  .head_dim = 128,
                  .dtype = DType::kBFloat16,
                  .page_tokens = 16,
                  .format = KvFormat::kKeyValue,
                  .tp_rank = 0,
                  .tp_world = 1};
}

void ExpectInvalid(const std::string& tenant, const std::string& model, const KvLayout& layout,
                   const std::string& part) {
  const absl::Status s = Namespace::Create(tenant, model, layout).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << tenant << " / " << model;
  EXPECT_THAT(std::string(s.message()), HasSubstr(part)) << tenant << " / " << model;
  EXPECT_EQ(Namespace::Validate(tenant, model, layout), s);
}

TEST(NamespaceTest, CreateKeepsTheParts) {
  absl::StatusOr<Namespace> ns =
      Namespace::Create("acme-prod_1.eu", "org/Model-7B", Llama8BLayout());
  ASSERT_TRUE(ns.ok()) << ns.status();
  EXPECT_EQ(ns->tenant(), "acme-prod_1.eu");
  EXPECT_EQ(ns->model(), "org/Model-7B");
  EXPECT_EQ(ns->layout(), Llama8BLayout());
  EXPECT_EQ(ns->ToString(),
            "Namespace{tenant=acme-prod_1.eu model=org/Model-7B KvLayout{layers=32 kv_heads=8 "
            "head_dim=128 dtype=bfloat16 page_tokens=16 format=key_value tp=0/1}}");
}

TEST(NamespaceTest, TenantRules) {
  const std::string model = "m";
  ExpectInvalid("", model, Llama8BLayout(), "Namespace.tenant length 0 is out of range [1, 128]");
  ExpectInvalid(std::string(129, 'a'), model, Llama8BLayout(),
                "length 129 is out of range [1, 128]");
  EXPECT_TRUE(Namespace::Create(std::string(128, 'a'), model, Llama8BLayout()).ok());
  ExpectInvalid("ac me", model, Llama8BLayout(),
                "Namespace.tenant byte 2 is 0x20; allowed: [A-Za-z0-9._-]");
  ExpectInvalid("acme/x", model, Llama8BLayout(), "byte 4 is 0x2F ('/')");
  ExpectInvalid("acme:x", model, Llama8BLayout(), "byte 4 is 0x3A (':')");
  ExpectInvalid(std::string("a\0b", 3), model, Llama8BLayout(), "byte 1 is 0x00");
  ExpectInvalid("caf\xC3\xA9", model, Llama8BLayout(), "byte 3 is 0xC3");
}

TEST(NamespaceTest, ModelRules) {
  const std::string tenant = "acme";
  ExpectInvalid(tenant, "", Llama8BLayout(), "Namespace.model length 0 is out of range [1, 256]");
  ExpectInvalid(tenant, std::string(257, 'm'), Llama8BLayout(),
                "length 257 is out of range [1, 256]");
  EXPECT_TRUE(Namespace::Create(tenant, std::string(256, 'm'), Llama8BLayout()).ok());
  EXPECT_TRUE(Namespace::Create(tenant, "!~/:@#$%^&*()[]{}<>?|\"'`,;=+", Llama8BLayout()).ok());
  ExpectInvalid(tenant, "Llama 3", Llama8BLayout(), "Namespace.model byte 5 is 0x20");
  ExpectInvalid(tenant, "llama\t", Llama8BLayout(), "byte 5 is 0x09");
  ExpectInvalid(tenant, "llama\x7F", Llama8BLayout(), "byte 5 is 0x7F");
  ExpectInvalid(tenant, "ll\xFF", Llama8BLayout(), "byte 2 is 0xFF");
}

TEST(NamespaceTest, LayoutIsValidated) {
  KvLayout layout = Llama8BLayout();
  layout.tp_rank = 1;
  ExpectInvalid("acme", "m", layout, "KvLayout.tp_rank = 1");
  // Tenant errors come first.
  ExpectInvalid("", "m", layout, "Namespace.tenant");
}

// The canonical encoding, byte for byte, against the table in namespace.h.
TEST(NamespaceTest, CanonicalEncodingMatchesTheTable) {
  const KvLayout layout{.num_layers = 61,
                        .num_kv_heads = 1,
                        .head_dim = 576,
                        .dtype = DType::kFloat8E5M2,
                        .page_tokens = 512,
                        .format = KvFormat::kMlaLatent,
                        .tp_rank = 6,
                        .tp_world = 7};
  absl::StatusOr<Namespace> ns = Namespace::Create("ab", "xyz", layout);
  ASSERT_TRUE(ns.ok()) << ns.status();
  const std::string want = std::string("strata.ns.v1") +                 // tag
                           std::string("\x02\x00\x00\x00", 4) + "ab" +   // tenant
                           std::string("\x03\x00\x00\x00", 4) + "xyz" +  // model
                           std::string("\x3D\x00\x00\x00", 4) +          // num_layers 61
                           std::string("\x01\x00\x00\x00", 4) +          // num_kv_heads 1
                           std::string("\x40\x02\x00\x00", 4) +          // head_dim 576
                           std::string("\x05", 1) +                      // dtype float8_e5m2
                           std::string("\x00\x02\x00\x00", 4) +          // page_tokens 512
                           std::string("\x02", 1) +                      // format mla_latent
                           std::string("\x06\x00\x00\x00", 4) +          // tp_rank 6
                           std::string("\x07\x00\x00\x00", 4);           // tp_world 7
  EXPECT_EQ(ns->CanonicalEncoding(), want);
  EXPECT_EQ(ns->CanonicalEncoding().size(), 46u + 2 + 3);
}

TEST(NamespaceTest, EncodingSeparatesTenantFromModel) {
  // Without length prefixes "ab"+"c" and "a"+"bc" would encode alike.
  absl::StatusOr<Namespace> a = Namespace::Create("ab", "c", Llama8BLayout());
  absl::StatusOr<Namespace> b = Namespace::Create("a", "bc", Llama8BLayout());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->CanonicalEncoding(), b->CanonicalEncoding());
  EXPECT_NE(*a, *b);
}

TEST(NamespaceTest, FromCanonicalEncodingRoundTrips) {
  const KvLayout mla{.num_layers = 61,
                     .num_kv_heads = 1,
                     .head_dim = 576,
                     .dtype = DType::kFloat8E5M2,
                     .page_tokens = 512,
                     .format = KvFormat::kMlaLatent,
                     .tp_rank = 6,
                     .tp_world = 7};
  for (const KvLayout& layout : {Llama8BLayout(), mla}) {
    absl::StatusOr<Namespace> ns = Namespace::Create("acme-prod", "org/model-70b", layout);
    ASSERT_TRUE(ns.ok()) << ns.status();
    absl::StatusOr<Namespace> back = Namespace::FromCanonicalEncoding(ns->CanonicalEncoding());
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, *ns);
  }
}

TEST(NamespaceTest, FromCanonicalEncodingRejectsEveryDamage) {
  absl::StatusOr<Namespace> ns = Namespace::Create("ab", "xyz", Llama8BLayout());
  ASSERT_TRUE(ns.ok());
  const std::string good = ns->CanonicalEncoding();
  auto expect_invalid = [](const std::string& bytes, const std::string& part) {
    const absl::Status s = Namespace::FromCanonicalEncoding(bytes).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << part;
    EXPECT_THAT(std::string(s.message()), HasSubstr(part));
  };
  expect_invalid("", "tag");
  expect_invalid("strata.ns.v2" + good.substr(12), "tag");
  for (size_t cut = 12; cut < good.size(); ++cut) {
    expect_invalid(good.substr(0, cut), "truncated");
  }
  expect_invalid(good + "x", "1 trailing bytes");
  std::string long_tenant = good;
  long_tenant[12] = static_cast<char>(0xFF);  // tenant length 255 > 128
  expect_invalid(long_tenant, "truncated");
  std::string bad_dtype = good;
  bad_dtype[12 + 4 + 2 + 4 + 3 + 12] = 0x09;  // dtype byte: no such DType
  expect_invalid(bad_dtype, "dtype");
  std::string bad_tenant = good;
  bad_tenant[16] = ' ';  // tenant "ab" -> " b"
  expect_invalid(bad_tenant, "tenant");
}

}  // namespace
}  // namespace strata::radix
